//! Slash commands typed in the input box (DESIGN.md §2).

use super::app::{App, Effect, Overlay};
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
    ("/approvals", "", "list approval rules"),
    ("/sessions", "", "list sessions and pick one"),
    ("/quit", "", "leave egirl"),
];

/// Commands whose features have not landed yet.
const NOT_YET: &[&str] = &["/model", "/skills", "/approvals"];

/// What `/escalate` sends: plain words the remote model understands, with
/// "escalate" for the router.
pub const ESCALATE_TEXT: &str =
    "Please escalate: answer my previous request again, properly and in full.";

/// Commands matching what is typed (a `/word` with no space yet).
pub fn matches(typed: &str) -> Vec<&'static (&'static str, &'static str, &'static str)> {
    if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
        return Vec::new();
    }
    COMMANDS
        .iter()
        .filter(|(name, _, _)| name.starts_with(typed))
        .collect()
}

/// What Tab turns the input into: the one match (plus a space when the
/// command takes an argument), else the longest common prefix when it
/// adds something.
pub fn completion(typed: &str) -> Option<String> {
    let found = matches(typed);
    match found.as_slice() {
        [] => None,
        [(name, _, _)] if *name == typed => None,
        [(name, arg, _)] => Some(if arg.is_empty() {
            name.to_string()
        } else {
            format!("{name} ")
        }),
        many => {
            let first = many[0].0;
            let common = many.iter().fold(first.len(), |n, (name, _, _)| {
                first
                    .bytes()
                    .zip(name.bytes())
                    .take(n)
                    .take_while(|(a, b)| a == b)
                    .count()
            });
            (common > typed.len()).then(|| first[..common].to_string())
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
            return vec![Effect::Submit(Op::Command {
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
            return vec![Effect::Submit(Op::Command {
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
            return vec![Effect::Submit(Op::UserMessage {
                session,
                origin: crate::protocol::Origin::Tui,
                text: ESCALATE_TEXT.into(),
            })];
        }
        // The core answers with `memory_hits`, shown in the memory pane.
        "/memory" if arg.is_empty() => app.notice(Level::Warning, "usage: /memory QUERY"),
        "/memory" => {
            return vec![Effect::Submit(Op::Command {
                session,
                command: Command::MemorySearch {
                    query: arg.to_string(),
                },
            })];
        }
        "/theme" => theme_command(app, arg),
        "/sessions" => app.open_session_picker(),
        _ if NOT_YET.contains(&name) => {
            app.notice(Level::Warning, format!("{name} is not available yet"));
        }
        _ => app.notice(
            Level::Warning,
            format!("unknown command {name} (/help lists them)"),
        ),
    }
    Vec::new()
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

    #[test]
    fn completes_unique_and_common_prefixes() {
        assert_eq!(completion("/he").as_deref(), Some("/help"));
        assert_eq!(completion("/th").as_deref(), Some("/theme "));
        assert_eq!(completion("/help"), None);
        // /skills and /sessions share only "/s".
        assert_eq!(completion("/s"), None);
        assert_eq!(completion("/se").as_deref(), Some("/sessions"));
        assert_eq!(completion("/r").as_deref(), Some("/remote"));
        assert_eq!(completion("hello"), None);
        assert_eq!(matches("/theme x").len(), 0);
    }
}
