//! The workspace's image store: every image a conversation holds is one
//! file, `.egirl/images/<sha256>.<ext>`, named by the hash of its bytes, so
//! the same picture twice is one file and a transcript names it by hash
//! (`ImagePart`) instead of carrying base64.

mod inline;
pub mod scale;
pub mod tokens;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

pub use inline::{Inline, base64, decode_base64};

use crate::protocol::ImagePart;

/// Longest side, in pixels, an image is stored (and sent) at by default:
/// Anthropic's own limit, and more than local vision encoders take.
pub const DEFAULT_MAX_SIDE: u32 = 1568;
/// Largest input accepted by default (a file read, a download, a paste).
pub const DEFAULT_MAX_BYTES: u64 = 20 * 1024 * 1024;

/// What an image may be before it is stored (`[images]` in the config).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Larger pictures are scaled down to this longest side.
    pub max_side: u32,
    /// Larger inputs are refused.
    pub max_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_side: DEFAULT_MAX_SIDE,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// A workspace's store with its limits: what a surface that receives
/// pictures (a bot, the TUI) holds to store them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Store {
    pub workspace: PathBuf,
    pub limits: Limits,
}

impl Store {
    /// Stores `bytes` within the limits (see [`store_within`]).
    pub fn put(&self, bytes: &[u8], source: Option<String>) -> Result<ImagePart, String> {
        store_within(&self.workspace, bytes, source, &self.limits)
    }

    /// Stores the picture at `path` (see [`store_file`]).
    pub fn put_file(&self, path: &Path, shown: &str) -> Result<ImagePart, String> {
        store_file(&self.workspace, path, shown, &self.limits)
    }
}

/// The limits `[images] max_side` and `max_file_mb` set.
pub fn limits(max_side: u32, max_file_mb: u64) -> Limits {
    Limits {
        max_side: max_side.max(1),
        max_bytes: max_file_mb.saturating_mul(1024 * 1024),
    }
}

/// Whether `path` is named like a picture the store keeps (`.png`,
/// `.jpg`/`.jpeg`, `.webp`, `.gif`, any case).
pub fn has_image_extension(path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    ["png", "jpg", "jpeg", "webp", "gif"]
        .iter()
        .any(|known| ext.eq_ignore_ascii_case(known))
}

/// Reads the picture at `path` (a regular file, at most
/// `limits.max_bytes`) and stores it; `shown` names it in errors.
pub fn store_file(
    workspace: &Path,
    path: &Path,
    shown: &str,
    limits: &Limits,
) -> Result<ImagePart, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    if let Some(refusal) = too_large(meta.len(), limits) {
        return Err(format!("`{shown}`: {refusal}"));
    }
    let bytes = crate::fsutil::regular_file::read(path)
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    store_within(workspace, &bytes, Some(shown.to_string()), limits)
        .map_err(|e| format!("`{shown}`: {e}"))
}

/// The refusal of an input over `limits.max_bytes`, one line.
pub fn too_large(size: u64, limits: &Limits) -> Option<String> {
    (size > limits.max_bytes).then(|| {
        format!(
            "image is {}, over the {} limit ([images] max_file_mb)",
            human_size(size),
            human_size(limits.max_bytes)
        )
    })
}

/// The store's folder under a workspace.
pub fn dir(workspace: &Path) -> PathBuf {
    workspace.join(".egirl/images")
}

/// The file extension of a media type this store keeps.
pub fn extension(media_type: &str) -> Option<&'static str> {
    match media_type {
        "image/png" => Some("png"),
        "image/jpeg" => Some("jpg"),
        "image/webp" => Some("webp"),
        "image/gif" => Some("gif"),
        _ => None,
    }
}

/// Where `part`'s bytes are.
pub fn path(workspace: &Path, part: &ImagePart) -> PathBuf {
    let ext = extension(&part.media_type).unwrap_or("bin");
    dir(workspace).join(format!("{}.{ext}", part.sha256))
}

/// The media type of `bytes`, when it is a format the store keeps.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    match image::guess_format(bytes).ok()? {
        image::ImageFormat::Png => Some("image/png"),
        image::ImageFormat::Jpeg => Some("image/jpeg"),
        image::ImageFormat::WebP => Some("image/webp"),
        image::ImageFormat::Gif => Some("image/gif"),
        _ => None,
    }
}

/// Stores `bytes` within the default [`Limits`] and names them.
pub fn store(workspace: &Path, bytes: &[u8], source: Option<String>) -> Result<ImagePart, String> {
    store_within(workspace, bytes, source, &Limits::default())
}

/// Stores `bytes`, refused over `limits.max_bytes` and scaled down to
/// `limits.max_side` (see `scale`), and names them. Errors are one line
/// for the user or the model.
pub fn store_within(
    workspace: &Path,
    bytes: &[u8],
    source: Option<String>,
    limits: &Limits,
) -> Result<ImagePart, String> {
    if let Some(refusal) = too_large(bytes.len() as u64, limits) {
        return Err(refusal);
    }
    let media_type = sniff(bytes).ok_or("not a PNG, JPEG, WebP or GIF image")?;
    let (bytes, media_type) = scale::fit(bytes, media_type, limits.max_side)?;
    let (width, height) = scale::dimensions(&bytes)?;
    let bytes = bytes.as_slice();
    let sha256 = format!("{:x}", Sha256::digest(bytes));
    let part = ImagePart {
        sha256,
        media_type,
        width,
        height,
        bytes: bytes.len() as u64,
        source,
    };
    let file = path(workspace, &part);
    if !file.exists() {
        std::fs::create_dir_all(dir(workspace))
            .map_err(|e| format!("cannot create {}: {e}", dir(workspace).display()))?;
        crate::fsutil::atomic::write_atomic(&file, bytes)
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    }
    Ok(part)
}

/// The stored bytes of `part` (a missing file is an error the caller turns
/// into a note: an image deleted by hand must not break a session).
pub fn load(workspace: &Path, part: &ImagePart) -> Result<Vec<u8>, String> {
    let file = path(workspace, part);
    crate::fsutil::regular_file::read(&file)
        .map_err(|e| format!("image {} is gone: {e}", file.display()))
}

/// `part` as named by someone else (a surface, a client over the wire):
/// accepted only when it names a well-formed hash of a file in this
/// store; its size and type are read back from that file, never taken on
/// trust. A path is never read from the part.
pub fn verify(workspace: &Path, part: &ImagePart) -> Result<ImagePart, String> {
    let hex = part.sha256.len() == 64
        && part
            .sha256
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !hex || extension(&part.media_type).is_none() {
        return Err("an image that names no stored file was left out".into());
    }
    let file = path(workspace, part);
    let bytes = crate::fsutil::regular_file::read(&file)
        .map_err(|_| "an image that names no stored file was left out".to_string())?;
    let (width, height) = scale::dimensions(&bytes)?;
    Ok(ImagePart {
        sha256: part.sha256.clone(),
        media_type: part.media_type.clone(),
        width,
        height,
        bytes: bytes.len() as u64,
        source: part.source.clone(),
    })
}

/// `part`'s bytes ready for a request.
pub fn inline(workspace: &Path, part: &ImagePart) -> Result<Inline, String> {
    Ok(Inline::new(&part.media_type, &load(workspace, part)?))
}

/// `1280x720 png`: what a note or a chip says of an image.
pub fn describe(part: &ImagePart) -> String {
    let kind = extension(&part.media_type).unwrap_or("image");
    let kind = if kind == "jpg" { "jpeg" } else { kind };
    format!("{}x{} {kind}", part.width, part.height)
}

/// The one-line chip a surface shows for an image: `[image 1280x720 png 84 KB]`.
pub fn chip(part: &ImagePart) -> String {
    format!("[image {} {}]", describe(part), human_size(part.bytes))
}

/// What a model reads in place of an image it is not sent:
/// `[image 1280x720 png: not shown, <why>]`.
pub fn note(part: &ImagePart, why: &str) -> String {
    format!("[image {}: not shown, {why}]", describe(part))
}

/// Why an image is not shown when no vision model is configured.
pub const NO_VISION: &str = "no vision model configured";

/// `84 KB`, `2.1 MB`.
pub fn human_size(bytes: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = 1024 * KB;
    match bytes {
        b if b >= MB => format!("{:.1} MB", b as f64 / MB as f64),
        b if b >= KB => format!("{} KB", b.div_ceil(KB)),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbaImage::from_pixel(width, height, image::Rgba([0, 0, 200, 255]));
        let mut out = std::io::Cursor::new(Vec::new());
        image::DynamicImage::ImageRgba8(image)
            .write_to(&mut out, image::ImageFormat::Png)
            .expect("encode");
        out.into_inner()
    }

    #[test]
    fn stored_once_by_hash_scaled_within_the_limits() {
        let dir = tempfile::tempdir().expect("tempdir");
        let limits = Limits {
            max_side: 64,
            max_bytes: DEFAULT_MAX_BYTES,
        };
        let part = store_within(dir.path(), &png(256, 128), None, &limits).expect("stored");
        assert_eq!((part.width, part.height), (64, 32));
        assert_eq!(part.media_type, "image/png");
        let bytes = load(dir.path(), &part).expect("loads");
        assert_eq!(bytes.len() as u64, part.bytes);
        let again = store_within(dir.path(), &png(256, 128), None, &limits).expect("stored");
        assert_eq!(again, part);
        assert_eq!(
            std::fs::read_dir(super::dir(dir.path()))
                .expect("dir")
                .count(),
            1
        );
    }

    #[test]
    fn over_the_size_cap_is_one_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let limits = Limits {
            max_side: 64,
            max_bytes: 10,
        };
        let e = store_within(dir.path(), &png(8, 8), None, &limits).expect_err("too big");
        assert!(e.contains("over the 10 B limit"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn a_part_from_the_wire_must_name_a_stored_file_and_its_meta_is_read_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let part = store(dir.path(), &png(30, 10), None).expect("stored");
        let lying = ImagePart {
            width: 9000,
            bytes: 1,
            ..part.clone()
        };
        assert_eq!(verify(dir.path(), &lying).expect("stored file"), part);
        let escape = ImagePart {
            sha256: "../../../../etc/passwd".into(),
            ..part.clone()
        };
        assert!(verify(dir.path(), &escape).is_err());
        let missing = ImagePart {
            sha256: "f".repeat(64),
            ..part.clone()
        };
        assert!(verify(dir.path(), &missing).is_err());
        let odd_type = ImagePart {
            media_type: "text/html".into(),
            ..part
        };
        assert!(verify(dir.path(), &odd_type).is_err());
    }

    #[test]
    fn chip_and_note_say_size_and_type() {
        let part = ImagePart {
            sha256: "ab".into(),
            media_type: "image/png".into(),
            width: 1280,
            height: 720,
            bytes: 84 * 1024,
            source: None,
        };
        assert_eq!(chip(&part), "[image 1280x720 png 84 KB]");
        assert_eq!(
            note(&part, NO_VISION),
            "[image 1280x720 png: not shown, no vision model configured]"
        );
    }
}
