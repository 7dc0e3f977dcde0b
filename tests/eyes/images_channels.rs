//! Pictures users send on the fake Discord gateway (an attachment) and
//! the fake Telegram Bot API (a photo, an image document: getFile and the
//! file download) reach the model as image parts; one over the size cap
//! leaves a one-line note and the text still goes through.

use egirl::surfaces::{discord, telegram};

use super::images::{image_parts, png};
use crate::support::fake_discord::UserMessage;
use crate::support::fake_llama::Reply;

/// The user message of the last chat request, as sent.
fn last_user_message(rig_requests: &[serde_json::Value]) -> serde_json::Value {
    let body = rig_requests.last().expect("a chat request");
    let messages = body["messages"].as_array().expect("messages");
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .expect("a user message")
}

#[tokio::test]
async fn a_discord_attachment_reaches_the_model_as_an_image_part() {
    let mut rig = crate::discord::start(true, |c| c.local.vision = true, |_| {}).await;
    rig.llama.push_reply(Reply::text("A red rectangle."));
    let bytes = png(40, 30);
    let size = bytes.len();
    let message = UserMessage::dm(crate::discord::DM, "what is this?");
    rig.discord
        .send_with_attachment(message, "red.png", "image/png", bytes.clone(), size);
    let sent = rig.discord.wait_sent(1).await;
    assert_eq!(sent[0].content, "A red rectangle.");
    rig.turn(&discord::session_for(crate::discord::DM)).await;
    let requests = rig.llama.requests_to("/v1/chat/completions");
    let images = image_parts(requests.last().expect("a request"));
    assert_eq!(images, vec![("image/png".to_string(), bytes)]);
    let user = last_user_message(&requests);
    assert!(
        user["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("what is this?")
    );
}

#[tokio::test]
async fn a_discord_attachment_over_the_cap_is_a_note_and_the_text_goes_through() {
    let vision = |c: &mut egirl::config::Config| {
        c.local.vision = true;
        c.images.max_file_mb = 1;
    };
    let mut rig = crate::discord::start(true, vision, |_| {}).await;
    rig.llama.push_reply(Reply::text("I only got your words."));
    let message = UserMessage::dm(crate::discord::DM, "look at this");
    rig.discord
        .send_with_attachment(message, "huge.png", "image/png", png(8, 8), 3 * 1024 * 1024);
    rig.discord.wait_sent(1).await;
    rig.turn(&discord::session_for(crate::discord::DM)).await;
    let requests = rig.llama.requests_to("/v1/chat/completions");
    assert!(image_parts(requests.last().expect("a request")).is_empty());
    let text = last_user_message(&requests)["content"].to_string();
    assert!(text.contains("look at this"), "{text}");
    assert!(
        text.contains(
            "[an image was sent but not received: image is 3.0 MB, over the 1.0 MB limit"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn a_telegram_photo_and_an_image_document_reach_the_model() {
    let setup = crate::telegram::Setup::default();
    let mut rig = crate::telegram::start(setup, |c| c.local.vision = true).await;
    let session = telegram::session_for(crate::telegram::DM);
    let owner = crate::support::fake_telegram::OWNER_ID;

    rig.llama.push_reply(Reply::text("A photo of red."));
    let photo = png(64, 36);
    let size = photo.len();
    rig.telegram.photo(
        crate::telegram::DM,
        owner,
        "what is in the photo?",
        photo.clone(),
        size,
    );
    rig.turn(&session).await;
    let requests = rig.llama.requests_to("/v1/chat/completions");
    let images = image_parts(requests.last().expect("a request"));
    assert_eq!(images, vec![("image/png".to_string(), photo)]);
    let user = last_user_message(&requests);
    assert!(
        user["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("what is in the photo?")
    );

    // A picture sent as a file, without a caption.
    rig.llama.push_reply(Reply::text("Another one."));
    let document = png(20, 10);
    rig.telegram
        .image_document(crate::telegram::DM, owner, "image/png", document.clone());
    rig.turn(&session).await;
    let requests = rig.llama.requests_to("/v1/chat/completions");
    let images = image_parts(requests.last().expect("a request"));
    // The history still holds the photo; the document is the new one.
    assert_eq!(images.len(), 2);
    assert_eq!(images[1].1, document);
}

#[tokio::test]
async fn a_telegram_photo_over_the_cap_is_a_note_and_the_caption_goes_through() {
    let setup = crate::telegram::Setup::default();
    let vision = |c: &mut egirl::config::Config| {
        c.local.vision = true;
        c.images.max_file_mb = 1;
    };
    let mut rig = crate::telegram::start(setup, vision).await;
    let owner = crate::support::fake_telegram::OWNER_ID;
    rig.llama.push_reply(Reply::text("Only words arrived."));
    rig.telegram.photo(
        crate::telegram::DM,
        owner,
        "see this",
        png(8, 8),
        5 * 1024 * 1024,
    );
    rig.turn(&telegram::session_for(crate::telegram::DM)).await;
    let requests = rig.llama.requests_to("/v1/chat/completions");
    assert!(image_parts(requests.last().expect("a request")).is_empty());
    let text = last_user_message(&requests)["content"].to_string();
    assert!(
        text.contains("see this") && text.contains("over the 1.0 MB limit"),
        "{text}"
    );
}

/// A surface (or a client over the gateway) may only name pictures in
/// the store: a made-up hash, or one shaped like a path, is left out with
/// a notice, and the text goes through.
#[tokio::test]
async fn a_user_message_naming_no_stored_image_is_sent_without_it() {
    use egirl::protocol::{EventKind, ImagePart, Op, Origin};
    let mut rig = crate::discord::start(true, |c| c.local.vision = true, |_| {}).await;
    rig.llama.push_reply(Reply::text("ok"));
    let forged = |sha256: &str| ImagePart {
        sha256: sha256.into(),
        media_type: "image/png".into(),
        width: 10,
        height: 10,
        bytes: 10,
        source: Some("/etc/passwd".into()),
    };
    rig.agent.submit(Op::UserMessage {
        session: "wire".into(),
        origin: Origin::Tui,
        text: "look".into(),
        images: vec![forged("../../../etc/passwd"), forged(&"a".repeat(64))],
    });
    let events = rig.turn("wire").await;
    let refused = events
        .iter()
        .filter(|e| matches!(&e.kind, EventKind::Notice(n) if n.message.contains("names no stored file")))
        .count();
    assert_eq!(refused, 2, "{events:?}");
    let requests = rig.llama.requests_to("/v1/chat/completions");
    assert!(image_parts(requests.last().expect("a request")).is_empty());
}
