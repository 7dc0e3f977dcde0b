//! The workspace's image store: every image a conversation holds is one
//! file, `.egirl/images/<sha256>.<ext>`, named by the hash of its bytes, so
//! the same picture twice is one file and a transcript names it by hash
//! (`ImagePart`) instead of carrying base64.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::protocol::ImagePart;

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

/// Stores `bytes` as they are (no resize) and names them. Errors are one
/// line for the user or the model.
pub fn store(workspace: &Path, bytes: &[u8], source: Option<String>) -> Result<ImagePart, String> {
    let media_type = sniff(bytes).ok_or("not a PNG, JPEG, WebP or GIF image")?;
    let (width, height) = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| format!("unreadable image: {e}"))?
        .into_dimensions()
        .map_err(|e| format!("unreadable image: {e}"))?;
    let sha256 = format!("{:x}", Sha256::digest(bytes));
    let part = ImagePart {
        sha256,
        media_type: media_type.to_string(),
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
