//! Slash commands typed in the input box (DESIGN.md §2).

use super::app::{App, Effect, Overlay};
use super::skills;
use super::theme::{self, Theme};
use super::transcript::Level;
use crate::protocol::{Command, Op, Target};

/// Every command: name, argument, one-line description, in help order.
pub const COMMANDS: &[(&str, &str, &str)] = &[
    ("/help", "", "keys and commands"),
    ("/local", "", "force the next turn to the local model"),
    ("/remote", "", "force the next turn to a remote provider"),
    (
        "/clear",
        "",
        "forget this session's history (not the transcript)",
    ),
    ("/new", "", "start a fresh TUI session"),
    (
        "/theme",
        "NAME",
        "switch theme (default, light, high-contrast)",
    ),
    ("/model", "", "show or pick the model"),
    ("/escalate", "", "re-run the last turn remotely"),
    ("/skills", "", "list skills"),
    ("/memory", "Q", "search memory"),
    (
        "/compact",
        "[KEEP]",
        "summarize older turns now, keeping KEEP",
    ),
    ("/approvals", "", "list approval rules"),
    ("/sessions", "", "list sessions and pick one"),
    ("/cron", "", "list scheduled jobs with their next run"),
    (
        "/fork",
        "",
        "copy this session into a new one and switch to it",
    ),
    (
        "/rewind",
        "",
        "go back to before a message, restoring files",
    ),
    (
        "/find",
        "TEXT",
        "highlight TEXT in the conversation (n/N jump)",
    ),
    ("/mcp", "", "list MCP servers, their state and tools"),
    ("/quit", "", "leave egirl"),
];

/// Commands whose features have not landed yet.
const NOT_YET: &[&str] = &["/model", "/approvals"];

/// What `/escalate` sends: plain words the remote model understands, with
/// "escalate" for the router.
pub const ESCALATE_TEXT: &str =
    "Please escalate: answer my previous request again, properly and in full.";

/// A command as completion, the input hint and help show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandInfo {
    pub name: String,
    pub arg: String,
    pub help: String,
    /// A user-invocable skill rather than a built-in.
    pub skill: bool,
}

/// The built-in commands, then the skills the user may run (a skill whose
/// command a built-in already has is left out: built-ins win).
pub fn all(app: &App) -> Vec<CommandInfo> {
    let mut out: Vec<CommandInfo> = COMMANDS
        .iter()
        .map(|(name, arg, help)| CommandInfo {
            name: name.to_string(),
            arg: arg.to_string(),
            help: help.to_string(),
            skill: false,
        })
        .collect();
    if let Some(registry) = &app.skills {
        for skill in registry.snapshot().commands() {
            let name = skill_command(&skill.name);
            if out.iter().all(|c| c.name != name) {
                out.push(CommandInfo {
                    name,
                    arg: "ARGS".into(),
                    help: skill.description.clone(),
                    skill: true,
                });
            }
        }
    }
    out
}

/// `/name`: lowercase, spaces as hyphens.
pub fn skill_command(name: &str) -> String {
    format!(
        "/{}",
        name.to_lowercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join("-")
    )
}

/// Commands matching what is typed (a `/word` with no space yet).
pub fn matches(app: &App, typed: &str) -> Vec<CommandInfo> {
    if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
        return Vec::new();
    }
    all(app)
        .into_iter()
        .filter(|c| c.name.starts_with(typed))
        .collect()
}

/// What Tab turns the input into: the one match (plus a space when the
/// command takes an argument), else the longest common prefix when it
/// adds something.
pub fn completion(app: &App, typed: &str) -> Option<String> {
    let found = matches(app, typed);
    match found.as_slice() {
        [] => None,
        [c] if c.name == typed => None,
        [c] => Some(if c.arg.is_empty() {
            c.name.clone()
        } else {
            format!("{} ", c.name)
        }),
        many => {
            let first = &many[0].name;
            let common = many.iter().fold(first.len(), |n, c| {
                first
                    .bytes()
                    .zip(c.name.bytes())
                    .take(n)
                    .take_while(|(a, b)| a == b)
                    .count()
            });
            // A cut inside a multi-byte character is no prefix to offer.
            (common > typed.len() && first.is_char_boundary(common))
                .then(|| first[..common].to_string())
        }
    }
}

pub fn run(app: &mut App, line: &str) -> Vec<Effect> {
    let (name, arg) = match line.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (line, ""),
    };
    let session = app.session.clone();
    match name {
        "/help" | "/?" => app.overlay = Some(Overlay::Help),
        "/quit" | "/exit" | "/q" => return vec![Effect::Quit],
        "/clear" => {
            app.transcript.clear_session(&session);
            app.conversation_scroll.end();
            app.notice(
                Level::Info,
                "history cleared (the transcript stays on disk)",
            );
            return vec![Effect::submit(Op::Command {
                session,
                command: Command::Clear,
            })];
        }
        "/local" | "/remote" => {
            let target = if name == "/local" {
                Target::Local
            } else {
                Target::Remote
            };
            app.notice(Level::Info, format!("next turn: {target}"));
            return vec![Effect::submit(Op::Command {
                session,
                command: Command::ForceTarget(target),
            })];
        }
        "/new" => {
            let id = crate::sessions::new_id("tui");
            app.sessions.insert(
                id.clone(),
                super::app::SessionInfo::new(crate::protocol::Origin::Tui),
            );
            app.session = id.clone();
            if app.filter.is_some() {
                app.filter = Some(id.clone());
            }
            app.status.context_used = 0;
            app.notice(Level::Info, format!("new session {id}"));
        }
        // The core sends a message that asks to escalate to the remote
        // model with the whole conversation (the local attempt included);
        // without a remote provider the routing event says why it stays.
        "/escalate" => {
            return vec![Effect::submit(Op::UserMessage {
                session,
                origin: crate::protocol::Origin::Tui,
                text: ESCALATE_TEXT.into(),
            })];
        }
        // The core answers with `memory_hits`, shown in the memory pane.
        "/memory" if arg.is_empty() => app.notice(Level::Warning, "usage: /memory QUERY"),
        "/memory" => {
            return vec![Effect::submit(Op::Command {
                session,
                command: Command::MemorySearch {
                    query: arg.to_string(),
                },
            })];
        }
        // The core answers with `compaction` (the divider) or an error.
        "/compact" => {
            let spoke = app.transcript.entries.iter().any(|e| {
                e.session == session && matches!(e.kind, super::transcript::Kind::User { .. })
            });
            if !spoke {
                app.notice(Level::Info, "nothing to compact yet");
                return Vec::new();
            }
            app.notice(Level::Info, "compacting…");
            return vec![Effect::submit(Op::Command {
                session,
                command: Command::Compact {
                    focus: (!arg.is_empty()).then(|| arg.to_string()),
                    origin: crate::protocol::Origin::Tui,
                },
            })];
        }
        "/theme" => theme_command(app, arg),
        "/sessions" => app.open_session_picker(),
        "/skills" => app.notice(Level::Info, skills::listing(app)),
        "/cron" => cron_command(app),
        "/fork" => return app.fork(),
        "/rewind" => app.open_rewind_picker(),
        "/find" => app.start_search(arg),
        "/mcp" => {
            let text = super::mcp::listing(&app.status.mcp);
            app.notice(Level::Info, text);
        }
        _ if NOT_YET.contains(&name) => {
            app.notice(Level::Warning, format!("{name} is not available yet"));
        }
        _ => match skills::invocation(app, name, arg) {
            Some(text) => {
                return vec![Effect::submit(Op::UserMessage {
                    session,
                    origin: crate::protocol::Origin::Tui,
                    text,
                })];
            }
            None => app.notice(
                Level::Warning,
                format!("unknown command {name} (/help lists them)"),
            ),
        },
    }
    Vec::new()
}

/// Lists the jobs from the workspace's store (shared with whichever
/// process runs the scheduler).
fn cron_command(app: &mut App) {
    // Sessions live in `<workspace>/sessions`.
    let Some(workspace) = app
        .sessions_dir
        .as_deref()
        .and_then(std::path::Path::parent)
    else {
        app.notice(Level::Warning, "no workspace: cron jobs unknown");
        return;
    };
    let store = crate::scheduler::cron::CronStore::in_workspace(workspace);
    match store.load() {
        Ok(jobs) if jobs.is_empty() => app.notice(
            Level::Info,
            "no cron jobs (ask egirl to schedule one: it has the cron_add tool)",
        ),
        Ok(jobs) => {
            let now = chrono::Utc::now();
            let lines: Vec<String> = jobs.iter().map(|j| j.describe(now)).collect();
            app.notice(
                Level::Info,
                format!("cron jobs ({}):\n{}", jobs.len(), lines.join("\n")),
            );
        }
        Err(e) => app.notice(Level::Error, format!("{e:#}")),
    }
}

fn theme_command(app: &mut App, name: &str) {
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
            if !super::highlight::has_theme(&theme.syntax) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn app() -> App {
        App::new(super::super::app::AppOptions {
            session: "s".into(),
            theme: Theme::default(),
            theme_dirs: Vec::new(),
            model: "m".into(),
            endpoint: "http://127.0.0.1:1".into(),
            context_length: 1024,
        })
    }

    #[test]
    fn completes_unique_and_common_prefixes() {
        let app = app();
        let completion = |typed: &str| completion(&app, typed);
        assert_eq!(completion("/he").as_deref(), Some("/help"));
        assert_eq!(completion("/th").as_deref(), Some("/theme "));
        assert_eq!(completion("/help"), None);
        // /skills and /sessions share only "/s".
        assert_eq!(completion("/s"), None);
        assert_eq!(completion("/se").as_deref(), Some("/sessions"));
        // /remote and /rewind share "/re".
        assert_eq!(completion("/r").as_deref(), Some("/re"));
        assert_eq!(completion("/rem").as_deref(), Some("/remote"));
        assert_eq!(completion("/rew").as_deref(), Some("/rewind"));
        assert_eq!(completion("hello"), None);
        assert_eq!(matches(&app, "/theme x").len(), 0);
    }

    #[test]
    fn skill_commands_are_slugs() {
        assert_eq!(skill_command("github"), "/github");
        assert_eq!(skill_command("Daily Standup"), "/daily-standup");
    }
}
