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
                let bytes = crate::images::decode_base64(&image.data)
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
    fn an_image_is_stored_and_a_bad_one_refuses_the_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let mut png = Vec::new();
        image::RgbImage::new(2, 3)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let data = crate::images::base64(&png);
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
}
