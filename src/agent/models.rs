//! `pin_model` and `list_models`: the commands behind `/model` and
//! `--model` (the pin itself and how a pinned turn runs are in `pin`).

use super::Shared;
use super::pin::{Pin, remote_id};
use super::session::{Session, Turn};
use crate::protocol::{ErrorEvent, EventKind, LocalRole, ModelChoice, ModelPinned, Models, Origin};
use crate::sessions::Mark;

/// `pin_model`: checked, marked in the transcript, then in force from the
/// session's next turn; answered with `model_pinned` or `error`.
pub(super) fn pin_model(shared: &Shared, session: &mut Session, model: &str) {
    let turn = Turn::new(shared, &session.id, Origin::Tui);
    let pin = match Pin::parse(shared, model) {
        Ok(pin) => pin,
        Err(message) => return turn.emit(EventKind::Error(ErrorEvent { message })),
    };
    let id = pin.as_ref().map_or_else(|| "auto".to_string(), Pin::id);
    if let Err(e) = session.mark(Mark::ModelPinned { model: id.clone() }) {
        let message = format!("cannot keep the pin: {e:#}");
        return turn.emit(EventKind::Error(ErrorEvent { message }));
    }
    let label = match &pin {
        Some(pin) => pin.label(shared),
        None => "auto (the router decides)".into(),
    };
    session.pinned = pin;
    turn.emit(EventKind::ModelPinned(ModelPinned { model: id, label }));
}

/// `list_models`: the choices, with what each local endpoint serves.
pub(super) async fn list_models(shared: &Shared, session: &Session) {
    let mut choices = vec![ModelChoice {
        id: "auto".into(),
        label: "auto · the router picks each turn".into(),
        detail: String::new(),
    }];
    let roles =
        std::iter::once(LocalRole::Main).chain(shared.fast.as_ref().map(|_| LocalRole::Fast));
    for role in roles {
        let pin = Pin::Local(role);
        choices.push(ModelChoice {
            id: pin.id(),
            label: pin.label(shared),
            detail: served(shared, role).await,
        });
    }
    for remote in &shared.remote.providers {
        choices.push(ModelChoice {
            id: remote_id(remote),
            label: remote_id(remote),
            detail: String::new(),
        });
    }
    let pinned = session
        .pinned
        .as_ref()
        .map_or_else(|| "auto".to_string(), Pin::id);
    let turn = Turn::new(shared, &session.id, Origin::Tui);
    turn.emit(EventKind::Models(Models { choices, pinned }));
}

/// "serves qwen3-32b.gguf" per endpoint, or why it did not say.
async fn served(shared: &Shared, role: LocalRole) -> String {
    let each = shared.pool(role).served_models().await;
    let several = each.len() > 1;
    each.into_iter()
        .map(|(endpoint, found)| {
            let what = match found {
                Ok(models) if models.is_empty() => "serves an unnamed model".to_string(),
                Ok(models) => format!("serves {}", models.join(", ")),
                Err(e) => format!("did not answer ({e})"),
            };
            match several {
                true => format!("{endpoint} {what}"),
                false => what,
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}
