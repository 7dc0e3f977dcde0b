//! A picture in a Telegram message (a photo, or a document with an image
//! type): `getFile`, then the file downloaded through the bot's own client
//! within `[images] max_file_mb`, stored, and named in the message. Errors
//! never carry the token (it is part of every Bot API and file URL).

use futures_util::StreamExt;
use teloxide::net::Download;
use teloxide::requests::{Request, Requester};
use teloxide::types::{FileMeta, Message};

use super::{Bridge, api};
use crate::chat::ImagePart;
use crate::surfaces::attachments;

/// The file of the message's picture: the largest size of a photo, or an
/// image document.
pub fn picture(msg: &Message) -> Option<FileMeta> {
    if let Some(sizes) = msg.photo() {
        return sizes
            .iter()
            .max_by_key(|s| s.width * s.height)
            .map(|s| s.file.clone());
    }
    let document = msg.document()?;
    let media_type = document
        .mime_type
        .as_ref()
        .map(|m| m.essence_str().to_string());
    attachments::is_image_type(media_type.as_deref()).then(|| document.file.clone())
}

/// Downloads and stores `file`; Err is a one-line note's reason.
pub async fn fetch(
    bridge: &Bridge,
    store: &crate::images::Store,
    file: &FileMeta,
) -> Result<ImagePart, String> {
    if let Some(refusal) = crate::images::too_large(u64::from(file.size), &store.limits) {
        return Err(refusal);
    }
    let found = tokio::time::timeout(
        attachments::DOWNLOAD_TIMEOUT,
        bridge.bot.get_file(file.id.clone()).send(),
    )
    .await
    .map_err(|_| "Telegram did not answer getFile in time".to_string())?
    .map_err(|e| api::describe(&e, &bridge.token))?;
    let chunks = bridge
        .bot
        .download_file_stream(&found.path)
        .map(|c| c.map_err(|e| e.without_url().to_string()));
    let bytes = attachments::collect_capped(Box::pin(chunks), store.limits.max_bytes).await?;
    attachments::store_bytes(store, bytes, "telegram photo".into()).await
}
