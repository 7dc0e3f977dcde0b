//! Pictures users send to a bot (a Discord attachment, a Telegram photo or
//! image document): downloaded within `[images] max_file_mb` and a time
//! limit, stored (`images::Store`), and named in the message's `images`.
//! A picture that cannot be had is a one-line note in the text, which
//! still goes through: the user learns what the model did not get.

use std::time::Duration;

use futures_util::{Stream, StreamExt};

use crate::chat::ImagePart;
use crate::images::Store;

/// The longest a download may take, end to end.
pub const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(60);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The HTTP client a bridge downloads pictures with.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(DOWNLOAD_TIMEOUT)
        .build()
        .unwrap_or_default()
}

/// Whether a media type names a picture worth downloading.
pub fn is_image_type(media_type: Option<&str>) -> bool {
    media_type.is_some_and(|t| {
        let t = t.split(';').next().unwrap_or("").trim();
        ["image/png", "image/jpeg", "image/webp", "image/gif"].contains(&t)
    })
}

/// Downloads `url` (http or https) and stores it; `declared` is the size
/// the platform reported, refused before a byte is fetched when too large.
pub async fn download(
    client: &reqwest::Client,
    store: &Store,
    url: &str,
    declared: u64,
    source: String,
) -> Result<ImagePart, String> {
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err("not an http(s) link".into());
    }
    if let Some(refusal) = crate::images::too_large(declared, &store.limits) {
        return Err(refusal);
    }
    let response = client
        .get(url)
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|e| format!("download failed: {}", e.without_url()))?;
    let chunks = response
        .bytes_stream()
        .map(|c| c.map_err(|e| e.without_url().to_string()));
    let bytes = collect_capped(chunks, store.limits.max_bytes).await?;
    store_bytes(store, bytes, source).await
}

/// A stream's bytes, refused once they pass `max_bytes`.
pub async fn collect_capped<S, B>(mut chunks: S, max_bytes: u64) -> Result<Vec<u8>, String>
where
    S: Stream<Item = Result<B, String>> + Unpin,
    B: AsRef<[u8]>,
{
    let mut bytes = Vec::new();
    let deadline = tokio::time::Instant::now() + DOWNLOAD_TIMEOUT;
    loop {
        let next = tokio::time::timeout_at(deadline, chunks.next())
            .await
            .map_err(|_| format!("download took over {}s", DOWNLOAD_TIMEOUT.as_secs()))?;
        let Some(chunk) = next else {
            return Ok(bytes);
        };
        let chunk = chunk.map_err(|e| format!("download failed: {e}"))?;
        bytes.extend_from_slice(chunk.as_ref());
        if bytes.len() as u64 > max_bytes {
            let limits = crate::images::Limits {
                max_side: 0,
                max_bytes,
            };
            return Err(crate::images::too_large(bytes.len() as u64, &limits).unwrap_or_default());
        }
    }
}

/// Stores downloaded bytes off the async threads (decoding and scaling
/// take a while).
pub async fn store_bytes(
    store: &Store,
    bytes: Vec<u8>,
    source: String,
) -> Result<ImagePart, String> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || store.put(&bytes, Some(source)))
        .await
        .map_err(|e| format!("storing the image failed: {e}"))?
}

/// The note a picture that could not be had leaves in the text.
pub fn failure_note(why: &str) -> String {
    format!("[an image was sent but not received: {why}]")
}

/// `text` with `notes` after it, one a line.
pub fn with_notes(text: String, notes: &[String]) -> String {
    notes.iter().fold(text, |text, note| match text.is_empty() {
        true => note.clone(),
        false => format!("{text}\n{note}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stream_over_the_cap_is_refused_in_one_line() {
        let chunks =
            futures_util::stream::iter(vec![Ok::<_, String>(vec![0u8; 600]), Ok(vec![0u8; 600])]);
        let e = collect_capped(chunks, 1000).await.expect_err("too large");
        assert!(e.contains("over the") && !e.contains('\n'), "{e}");
        let chunks = futures_util::stream::iter(vec![Ok::<_, String>(vec![1u8; 10])]);
        assert_eq!(collect_capped(chunks, 1000).await.expect("fits").len(), 10);
    }

    #[test]
    fn notes_follow_the_text() {
        assert_eq!(with_notes("hi".into(), &["[a]".into()]), "hi\n[a]");
        assert_eq!(with_notes(String::new(), &["[a]".into()]), "[a]");
        assert!(is_image_type(Some("image/png")));
        assert!(is_image_type(Some("image/jpeg; charset=binary")));
        assert!(!is_image_type(Some("application/pdf")));
        assert!(!is_image_type(None));
    }
}
