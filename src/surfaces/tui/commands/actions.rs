//! What the built-in slash commands do, one function each (the table in
//! [`super::COMMANDS`] names them).

use super::ESCALATE_TEXT;
use crate::protocol::{Command, Op, Target};
use crate::surfaces::tui::app::{App, Effect};
use crate::surfaces::tui::conversation::Level;
use crate::surfaces::tui::theme::{self, Theme};

pub(super) fn force_target(app: &mut App, target: Target) -> Vec<Effect> {
    if target == Target::Remote && no_remote(app, "/remote") {
        return Vec::new();
    }
    app.notice(Level::Info, format!("next turn: {target}"));
    vec![Effect::submit(Op::Command {
        session: app.session.clone(),
        command: Command::ForceTarget { target },
    })]
}

pub(super) fn clear(app: &mut App) -> Vec<Effect> {
    let session = app.session.clone();
    app.conversation.clear_session(&session);
    app.conversation_scroll.end();
    app.meter_cleared();
    app.notice(
        Level::Info,
        "history cleared (the transcript stays on disk)",
    );
    vec![Effect::submit(Op::Command {
        session,
        command: Command::Clear,
    })]
}

pub(super) fn new_session(app: &mut App) -> Vec<Effect> {
    let id = crate::sessions::new_id("tui");
    app.sessions.insert(
        id.clone(),
        crate::surfaces::tui::app::SessionInfo::new(crate::protocol::Origin::Tui),
    );
    // A new session of the agent the input goes to.
    if let Some(agent) = app.current_agent().map(str::to_string) {
        app.agents.note(&id, &agent);
    }
    // Showing one session, the view follows (it shows the input's).
    app.session = id.clone();
    app.epoch += 1;
    app.show_meter(Default::default());
    app.notice(Level::Info, format!("new session {id}"));
    Vec::new()
}

/// Says, as `command`'s one line, that no remote provider is configured
/// or that the remote spend cap is reached; false when a remote model can
/// take the turn (or the core did not say).
fn no_remote(app: &mut App, command: &str) -> bool {
    let why = match (&app.status.no_remote, app.status.budget_spent()) {
        (Some(why), _) => why.clone(),
        (None, Some(spent)) => format!("the remote budget is spent (budget: {})", spent.shown()),
        (None, None) => return false,
    };
    app.notice(Level::Warning, format!("{command}: {why}; nothing sent"));
    true
}

/// The core sends a message that asks to escalate to the remote model with
/// the whole conversation (the local attempt included). Without a remote
/// provider it would only ask the local model again: say so instead.
pub(super) fn escalate(app: &mut App) -> Vec<Effect> {
    if no_remote(app, "/escalate") {
        return Vec::new();
    }
    vec![Effect::submit(Op::UserMessage {
        session: app.session.clone(),
        origin: crate::protocol::Origin::Tui,
        text: ESCALATE_TEXT.into(),
        images: Vec::new(),
    })]
}

/// The core answers with `memory_hits` under this submission's id: shown
/// in the memory pane, and brought into view (`App::apply`).
pub(super) fn memory_search(app: &mut App, query: &str) -> Vec<Effect> {
    if query.is_empty() {
        app.notice(Level::Warning, "usage: /memory QUERY");
        return Vec::new();
    }
    vec![app.request(Op::Command {
        session: app.session.clone(),
        command: Command::MemorySearch {
            query: query.to_string(),
        },
    })]
}

/// The core answers with `compaction` (the divider) or an error.
pub(super) fn compact(app: &mut App, keep: &str) -> Vec<Effect> {
    let session = app.session.clone();
    let spoke = app.conversation.entries.iter().any(|e| {
        e.session == session
            && matches!(
                e.kind,
                crate::surfaces::tui::conversation::Kind::User { .. }
            )
    });
    if !spoke {
        app.notice(Level::Info, "nothing to compact yet");
        return Vec::new();
    }
    app.notice(Level::Info, "compacting…");
    vec![Effect::submit(Op::Command {
        session,
        command: Command::Compact {
            focus: (!keep.is_empty()).then(|| keep.to_string()),
            origin: crate::protocol::Origin::Tui,
        },
    })]
}

/// Lists the jobs from the workspace's store (shared with whichever
/// process runs the scheduler).
pub(super) fn cron_command(app: &mut App) {
    // With agents, the jobs of the agent `cron_agent` names; else the one
    // workspace's (sessions live in `<workspace>/sessions`).
    let agent = app.cron_agent().map(str::to_string);
    let dir = match &agent {
        Some(agent) => app.agents.sessions_dir(agent).or(app.sessions_dir.clone()),
        None => app.sessions_dir.clone(),
    };
    let Some(workspace) = dir.as_deref().and_then(std::path::Path::parent) else {
        app.notice(Level::Warning, "no workspace: cron jobs unknown");
        return;
    };
    let whose = agent.map(|a| format!(" of agent {a}")).unwrap_or_default();
    let store = crate::cron::CronStore::in_workspace(workspace);
    match store.load() {
        Ok(jobs) if jobs.is_empty() => app.notice(
            Level::Info,
            format!("no cron jobs{whose} (ask egirl to schedule one: it has the cron_add tool)"),
        ),
        Ok(jobs) => {
            let now = chrono::Utc::now();
            let lines: Vec<String> = jobs.iter().map(|j| j.describe(now)).collect();
            app.notice(
                Level::Info,
                format!("cron jobs{whose} ({}):\n{}", jobs.len(), lines.join("\n")),
            );
        }
        Err(e) => app.notice(Level::Error, format!("{e:#}")),
    }
}

pub(super) fn theme_command(app: &mut App, name: &str) {
    if name.is_empty() {
        app.notice(
            Level::Info,
            format!(
                "theme {} (built in: {}; /theme NAME switches)",
                app.theme.name,
                theme::BUILT_IN.join(", ")
            ),
        );
        return;
    }
    match Theme::load(name, &app.theme_dirs) {
        Ok(theme) => {
            if !crate::surfaces::tui::highlight::has_theme(&theme.syntax) {
                app.notice(
                    Level::Warning,
                    format!(
                        "theme {name}: unknown code theme \"{}\"; code shows plain",
                        theme.syntax
                    ),
                );
            }
            app.set_theme(theme);
            app.notice(Level::Info, format!("theme {name}"));
        }
        // A bad theme leaves the current one in place.
        Err(e) => app.notice(Level::Error, e),
    }
}
