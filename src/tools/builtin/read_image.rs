//! `read_file` on a picture (PNG, JPEG, WebP, GIF, by its bytes): the image is stored
//! (scaled to `[images] max_side`, refused over `max_file_mb`) and goes
//! to the model as an image part beside one line of text, instead of
//! binary bytes it cannot read. A model that cannot see gets a note
//! in its place (the agent decides, per request).

use std::path::{Path, PathBuf};

use crate::tools::{ToolContext, ToolOutput};

/// Whether `read_file` treats `path` as a picture: by its first bytes
/// (a `.png` that is not one is read as any other file, and refused as
/// binary; a screenshot saved without an extension is still a picture).
pub fn is_image(path: &Path) -> bool {
    let mut head = [0u8; 16];
    let Ok(mut file) = crate::fsutil::regular_file::open(path) else {
        return false;
    };
    let n = std::io::Read::read(&mut file, &mut head).unwrap_or(0);
    crate::images::sniff(&head[..n]).is_some()
}

pub async fn run(path: PathBuf, shown: String, ctx: &ToolContext) -> ToolOutput {
    let images = &ctx.config.images;
    let limits = crate::images::limits(images.max_side, images.max_file_mb);
    let workspace = ctx.workspace.clone();
    let job = tokio::task::spawn_blocking(move || {
        crate::images::store_file(&workspace, &path, &shown, &limits).map(|part| (part, shown))
    });
    match job.await {
        Ok(Ok((part, shown))) => {
            let line = format!(
                "`{shown}` is an image ({}), attached.",
                crate::images::chip(&part)
                    .trim_start_matches("[image ")
                    .trim_end_matches(']')
            );
            ToolOutput::ok(line).with_images(vec![part])
        }
        Ok(Err(e)) => ToolOutput::fail(e),
        Err(e) => ToolOutput::fail(format!("read_file failed: {e}")),
    }
}
