//! An image's bytes as a request carries them: base64, read from the
//! store only while the request is built and dropped with it, so no
//! transcript, event or log line ever holds them.

use std::fmt;

/// One image ready for the wire.
#[derive(Clone, PartialEq, Eq)]
pub struct Inline {
    pub media_type: String,
    /// Standard base64 of the stored bytes.
    pub data: String,
}

impl Inline {
    pub fn new(media_type: &str, bytes: &[u8]) -> Self {
        Self {
            media_type: media_type.to_string(),
            data: base64(bytes),
        }
    }

    /// `data:<media type>;base64,...` (OpenAI-style `image_url`).
    pub fn data_uri(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

// Never the data itself: a request's `Debug` may reach a log.
impl fmt::Debug for Inline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Inline({}, {} base64 chars)",
            self.media_type,
            self.data.len()
        )
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding; a dependency for these lines is not worth it.
pub fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn debug_never_shows_the_data() {
        let inline = Inline::new("image/png", b"secret-ish bytes");
        assert!(!format!("{inline:?}").contains(&inline.data));
        assert!(inline.data_uri().starts_with("data:image/png;base64,"));
    }
}
