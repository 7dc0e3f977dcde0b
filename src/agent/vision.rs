//! Images in a turn: which ones a surface may name (stored files only),
//! which model sees them (a turn with images goes to a role that does:
//! local first, remote when allowed), what a model that cannot see reads
//! instead (a one-line note; the user is told once a session), and what
//! they cost in a local window.

use super::session::{Session, Turn};
use super::shared::Shared;
use crate::chat::{ChatMessage, ImagePart};
use crate::protocol::{EventKind, LocalRole, Notice, Target};
use crate::providers::ChatRequest;
use crate::providers::remote::RemoteProvider;
use crate::routing::{DecidedBy, Decision};

/// The images a message arrived with that name a stored file (see
/// `images::verify`); each one left out is a line for the user.
pub(super) fn verified(shared: &Shared, images: Vec<ImagePart>) -> (Vec<ImagePart>, Vec<String>) {
    let mut kept = Vec::with_capacity(images.len());
    let mut refused = Vec::new();
    for part in images {
        match crate::images::verify(&shared.workspace, &part) {
            Ok(part) => kept.push(part),
            Err(e) => refused.push(e),
        }
    }
    (kept, refused)
}

/// Whether the messages from the window's start on hold an image.
pub(super) fn has_images(history: &[ChatMessage]) -> bool {
    history.iter().any(|m| !m.images.is_empty())
}

/// The local role for a turn whose history holds images: the routed one
/// when it sees; else the other local role when that one sees; else the
/// remote model (`remote`: one the turn may use), which sees. With none,
/// the turn stays where it was routed and its images become notes. A
/// user's own choice (`/local`, a pin) is not overridden.
pub(super) async fn steer(
    shared: &Shared,
    history: &[ChatMessage],
    role: LocalRole,
    decision: &mut Decision,
    remote: Option<&RemoteProvider>,
) -> LocalRole {
    let remote_now = decision.target == Target::Remote && remote.is_some();
    if !has_images(history) || remote_now || shared.limits_for(role).await.vision {
        return role;
    }
    let other = match role {
        LocalRole::Main => LocalRole::Fast,
        LocalRole::Fast => LocalRole::Main,
    };
    if shared.fast.is_some() && shared.limits_for(other).await.vision {
        decision.reason = format!("{}; images: {} sees them", decision.reason, other.as_str());
        return other;
    }
    if remote.is_some() && decision.decided_by != DecidedBy::Forced {
        decision.target = Target::Remote;
        decision.reason = format!(
            "{}; images: only the remote model sees them",
            decision.reason
        );
    }
    role
}

/// Gives `request` the bytes of its images when its model sees them
/// (`local`: the local role it goes to; `None`: a remote model, which
/// does), read from the store now and dropped with the request. A model
/// that cannot see reads a note in each image's place.
pub(super) async fn attach(
    turn: &Turn<'_>,
    session: &mut Session,
    request: &mut ChatRequest,
    local: Option<LocalRole>,
) {
    if !has_images(&request.messages) {
        return;
    }
    let sees = match local {
        Some(role) => turn.shared.limits_for(role).await.vision,
        None => true,
    };
    if !sees {
        for message in &mut request.messages {
            for part in std::mem::take(&mut message.images) {
                let note = crate::images::note(&part, crate::images::NO_VISION);
                message.content = match message.content.is_empty() {
                    true => note,
                    false => format!("{}\n{note}", message.content),
                };
            }
        }
        if !session.told_no_vision {
            session.told_no_vision = true;
            turn.emit(EventKind::Notice(Notice {
                message: NO_VISION_NOTICE.into(),
            }));
        }
        return;
    }
    let workspace = turn.shared.workspace.clone();
    let parts: Vec<ImagePart> = request
        .messages
        .iter()
        .flat_map(|m| m.images.iter().cloned())
        .filter(|p| !request.images.contains_key(&p.sha256))
        .collect();
    let loaded = tokio::task::spawn_blocking(move || {
        parts
            .into_iter()
            .filter_map(|part| match crate::images::inline(&workspace, &part) {
                Ok(inline) => Some((part.sha256, std::sync::Arc::new(inline))),
                Err(e) => {
                    tracing::warn!("{e}");
                    None
                }
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    request.images.extend(loaded);
    // A picture whose file is gone (deleted by hand) is a note, not a break.
    for message in &mut request.messages {
        let (kept, gone): (Vec<_>, Vec<_>) = std::mem::take(&mut message.images)
            .into_iter()
            .partition(|p| request.images.contains_key(&p.sha256));
        message.images = kept;
        for part in gone {
            let note = crate::images::note(&part, "its file is gone");
            message.content = format!("{}\n{note}", message.content);
        }
    }
}

/// What the user is told, once a session, when an image reaches a model
/// that cannot see it.
pub(super) const NO_VISION_NOTICE: &str = "this model cannot see images: each one is sent as a one-line note ([local] vision = true marks a model that can, or add a remote provider)";

/// The tokens a message's images take in a local window (`[images]
/// local_tokens` each: the server cannot count them beforehand).
pub(super) fn local_tokens(shared: &Shared, message: &ChatMessage) -> u64 {
    message.images.len() as u64 * shared.config.images.local_tokens
}

/// The same for a whole request.
pub(super) fn request_local_tokens(shared: &Shared, request: &ChatRequest) -> u64 {
    request
        .messages
        .iter()
        .map(|m| local_tokens(shared, m))
        .sum()
}

/// What a history's images may cost at a remote provider: the larger of
/// Anthropic's and OpenAI's rules (for pricing a request's worst case).
pub(super) fn remote_tokens(history: &[ChatMessage]) -> u64 {
    history
        .iter()
        .flat_map(|m| &m.images)
        .map(|p| {
            let (w, h) = (p.width, p.height);
            crate::images::tokens::anthropic(w, h).max(crate::images::tokens::openai(w, h))
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_picture(width: u32, height: u32) -> ChatMessage {
        ChatMessage::user("look").with_images(vec![ImagePart {
            sha256: "0".repeat(64),
            media_type: "image/png".into(),
            width,
            height,
            bytes: 1000,
            source: None,
        }])
    }

    #[test]
    fn a_remote_request_is_priced_by_the_larger_rule() {
        // 1092x1092: Anthropic about 1590, OpenAI 765 (4 tiles).
        assert_eq!(remote_tokens(&[with_picture(1092, 1092)]), 1590);
        assert_eq!(remote_tokens(&[ChatMessage::user("no picture")]), 0);
    }
}
