//! A session pinned to one model (`/model`, `--model`): a local role or a
//! remote provider's model, chosen by the user rather than the router. The
//! pin is a mark in the session's transcript (a resume keeps it), and
//! each pinned turn's routing event says `pinned by /model`. The commands
//! that set and list it are in `models`.
//!
//! A pinned local model never escalates on its own: only the user's own
//! ask (`/remote`, `/escalate`, "use claude") sends a turn remote, and
//! then the router decides that turn as it would unpinned.

use super::Shared;
use crate::protocol::{LocalRole, Target};
use crate::providers::remote::RemoteProvider;
use crate::routing::{DecidedBy, Decision};

/// The reason of a pinned turn's routing event.
pub const PINNED_REASON: &str = "pinned by /model";

/// What a session runs on when the user chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pin {
    Local(LocalRole),
    /// A configured remote provider (`anthropic`, `openai`, `azure`) and
    /// its configured model.
    Remote {
        provider: String,
        model: String,
    },
}

impl Pin {
    /// `None` for `auto`; an error names what can be pinned.
    pub fn parse(shared: &Shared, text: &str) -> Result<Option<Pin>, String> {
        let text = text.trim();
        match text {
            "auto" => return Ok(None),
            "local" => return Ok(Some(Pin::Local(LocalRole::Main))),
            "local.fast" | "local-fast" if shared.fast.is_some() => {
                return Ok(Some(Pin::Local(LocalRole::Fast)));
            }
            "local.fast" | "local-fast" => {
                return Err("no [local.fast] is configured; pin `local` or a remote model".into());
            }
            _ => {}
        }
        let (provider, model) = text.split_once(':').unwrap_or((text, ""));
        let Some(remote) = shared.remote.get(provider) else {
            return Err(format!(
                "unknown model `{text}`: pin one of {}",
                ids(shared).join(", ")
            ));
        };
        if !model.is_empty() && model != remote.model() {
            return Err(format!(
                "{provider} is configured with `{}`; pin `{}`",
                remote.model(),
                remote_id(remote)
            ));
        }
        Ok(Some(Pin::Remote {
            provider: remote.name().to_string(),
            model: remote.model().to_string(),
        }))
    }

    /// What `pin_model` takes back: `local`, `local.fast`, `anthropic:…`.
    pub fn id(&self) -> String {
        match self {
            Pin::Local(LocalRole::Main) => "local".into(),
            Pin::Local(LocalRole::Fast) => "local.fast".into(),
            Pin::Remote { provider, model } => format!("{provider}:{model}"),
        }
    }

    /// The id with the local role's configured model, for the status line.
    pub fn label(&self, shared: &Shared) -> String {
        match self {
            Pin::Local(role) => format!("{} · {}", self.id(), shared.role_model(*role)),
            Pin::Remote { .. } => self.id(),
        }
    }
}

pub(super) fn remote_id(remote: &RemoteProvider) -> String {
    format!("{}:{}", remote.name(), remote.model())
}

/// Every id a session may be pinned to, `auto` first.
fn ids(shared: &Shared) -> Vec<String> {
    let mut out = vec!["auto".to_string(), "local".to_string()];
    if shared.fast.is_some() {
        out.push("local.fast".into());
    }
    out.extend(shared.remote.providers.iter().map(remote_id));
    out
}

/// The pin a resumed session had (an unknown one, say a provider since
/// removed, is dropped with a log line: the router decides again).
pub(super) fn resumed(shared: &Shared, id: &str) -> Option<Pin> {
    let path = crate::sessions::Transcript::path(&shared.workspace, id);
    if !path.exists() {
        return None;
    }
    let entries = crate::sessions::load_entries(&path).ok()?;
    let model = crate::sessions::pinned_model(&entries)?;
    Pin::parse(shared, &model)
        .inspect_err(|why| tracing::warn!(session = id, "pin `{model}` dropped: {why}"))
        .ok()
        .flatten()
}

/// A pinned turn's remote provider (none for a local pin) and local role,
/// with `decision` set to the pin's side; `None` when the session is not
/// pinned, or the user asked for a side this turn (`/local`, `/remote`,
/// "use claude"): then the router decides as usual. The spend caps still
/// apply to a remote pin (the caller gates the provider).
pub(super) fn pinned_route<'a>(
    shared: &'a Shared,
    pin: Option<&Pin>,
    user_asked: bool,
    decision: &mut Decision,
) -> Option<(Option<&'a RemoteProvider>, LocalRole)> {
    if user_asked {
        return None;
    }
    let (target, remote, role) = match pin? {
        // No remote provider for the turn: a weak answer stays (no escalation).
        Pin::Local(role) => (Target::Local, None, *role),
        Pin::Remote { provider, .. } => (
            Target::Remote,
            Some(shared.remote.get(provider)?),
            LocalRole::Main,
        ),
    };
    decision.target = target;
    decision.reason = PINNED_REASON.into();
    decision.confidence = 1.0;
    decision.decided_by = DecidedBy::Pinned;
    Some((remote, role))
}
