//! A prompt's content blocks as what the core gets: the text (text as it
//! is, a linked file by its path, an embedded file with its content) and
//! the images, stored in the workspace's image store first.

use std::path::Path;

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

use crate::jsonrpc::RpcError;
use crate::protocol::ImagePart;

/// The text and images of `blocks`; an image that is not one (or not of
/// a kind egirl reads) refuses the prompt with the reason.
pub fn prompt(
    blocks: &[ContentBlock],
    workspace: &Path,
) -> Result<(String, Vec<ImagePart>), RpcError> {
    let mut text = String::new();
    let mut images = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ResourceLink(link) => {
                text.push_str(&format!("`{}`", file_path(&link.uri)));
            }
            ContentBlock::Resource(resource) => {
                if let EmbeddedResourceResource::TextResourceContents(file) = &resource.resource {
                    text.push_str(&format!(
                        "\n\n{}:\n```\n{}\n```\n",
                        file_path(&file.uri),
                        file.text
                    ));
                }
            }
            ContentBlock::Image(image) => {
                let bytes = decode_base64(&image.data)
                    .ok_or_else(|| RpcError::invalid("an image's data is not base64"))?;
                let part = crate::images::store(workspace, &bytes, image.uri.clone())
                    .map_err(|e| RpcError::invalid(format!("an image of the prompt: {e}")))?;
                images.push(part);
            }
            // Audio is not offered in `initialize`: a client that sends it
            // anyway is told nothing more than the text says.
            _ => {}
        }
    }
    Ok((text, images))
}

/// A `file://` URI as a path; any other URI as it is.
fn file_path(uri: &str) -> &str {
    uri.strip_prefix("file://").unwrap_or(uri)
}

/// Standard base64 (padding optional, whitespace ignored); `None` for
/// anything else. A dependency for 20 lines is not worth it.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let digits: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let digits = digits
        .strip_suffix(b"==")
        .or_else(|| digits.strip_suffix(b"="))
        .unwrap_or(&digits);
    if digits.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{ImageContent, ResourceLink, TextContent};

    #[test]
    fn a_prompt_becomes_its_text_with_files_by_path() {
        let blocks = vec![
            ContentBlock::Text(TextContent::new("look at ")),
            ContentBlock::ResourceLink(ResourceLink::new("main.rs", "file:///ws/src/main.rs")),
            ContentBlock::Text(TextContent::new(" please")),
        ];
        let (text, images) = prompt(&blocks, Path::new("/nonexistent")).unwrap();
        assert_eq!(text, "look at `/ws/src/main.rs` please");
        assert!(images.is_empty());
    }

    #[test]
    fn base64_decodes_the_standard_alphabet() {
        assert_eq!(decode_base64("").unwrap(), b"");
        assert_eq!(decode_base64("Zg==").unwrap(), b"f");
        assert_eq!(decode_base64("Zm8=").unwrap(), b"fo");
        assert_eq!(decode_base64("Zm9v\nYmFy").unwrap(), b"foobar");
        assert_eq!(decode_base64("Zm9vYg").unwrap(), b"foob");
        assert!(decode_base64("Zm9v!").is_none());
        assert!(decode_base64("Z").is_none());
    }

    #[test]
    fn an_image_is_stored_and_a_bad_one_refuses_the_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let mut png = Vec::new();
        image::RgbImage::new(2, 3)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let data = encode(&png);
        let blocks = vec![
            ContentBlock::Text(TextContent::new("what is this")),
            ContentBlock::Image(ImageContent::new(data, "image/png")),
        ];
        let (_, images) = prompt(&blocks, dir.path()).unwrap();
        assert_eq!((images[0].width, images[0].height), (2, 3));
        let bad = vec![ContentBlock::Image(ImageContent::new(
            "aGVsbG8=",
            "image/png",
        ))];
        assert!(prompt(&bad, dir.path()).is_err());
    }

    /// The encoder the decoder must invert.
    fn encode(bytes: &[u8]) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
            for i in 0..=chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            }
        }
        while !out.len().is_multiple_of(4) {
            out.push('=');
        }
        out
    }
}
