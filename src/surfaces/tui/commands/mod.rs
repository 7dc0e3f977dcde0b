//! Slash commands typed in the input box (docs/design.md §2, docs/tui.md).
//!
//! One table ([`COMMANDS`]) that help, the completion list and the
//! dispatcher read.

use super::app::{App, Effect, Overlay};
use super::conversation::Level;
use super::skills;
use crate::protocol::{Op, Target};

mod actions;
pub mod popup;

/// A built-in command: what help and completion show, and what runs it.
pub struct SlashCommand {
    pub name: &'static str,
    /// Other names the dispatcher accepts (not listed).
    pub aliases: &'static [&'static str],
    /// The argument as help shows it (`NAME`, `[KEEP]`); empty: none.
    pub arg: &'static str,
    /// One line for help and the input hint.
    pub help: &'static str,
    /// Runs it with the (trimmed) argument.
    pub run: fn(&mut App, &str) -> Vec<Effect>,
}

/// Every built-in command, in help order: help, the completion list
/// and the dispatcher all read this table, so a command cannot be listed
/// without being implemented.
pub const COMMANDS: &[SlashCommand] = &[
    SlashCommand {
        name: "/help",
        aliases: &["/?"],
        arg: "",
        help: "keys and commands",
        run: |app, _| {
            app.overlay = Some(Overlay::Help);
            Vec::new()
        },
    },
    SlashCommand {
        name: "/local",
        aliases: &[],
        arg: "",
        help: "force the next turn to the local model",
        run: |app, _| actions::force_target(app, Target::Local),
    },
    SlashCommand {
        name: "/remote",
        aliases: &[],
        arg: "",
        help: "force the next turn to a remote provider",
        run: |app, _| actions::force_target(app, Target::Remote),
    },
    SlashCommand {
        name: "/model",
        aliases: &["/models"],
        arg: "[NAME]",
        help: "pick the model this session runs on",
        run: |app, arg| app.model_command(arg),
    },
    SlashCommand {
        name: "/agent",
        aliases: &["/agents"],
        arg: "[NAME]",
        help: "send what you type next to agent NAME (a new session)",
        run: |app, arg| app.agent_command(arg),
    },
    SlashCommand {
        name: "/clear",
        aliases: &[],
        arg: "",
        help: "forget this session's history (not the transcript)",
        run: |app, _| actions::clear(app),
    },
    SlashCommand {
        name: "/new",
        aliases: &[],
        arg: "",
        help: "start a fresh TUI session",
        run: |app, _| actions::new_session(app),
    },
    SlashCommand {
        name: "/theme",
        aliases: &[],
        arg: "NAME",
        help: "switch theme (default, light, high-contrast)",
        run: |app, arg| {
            actions::theme_command(app, arg);
            Vec::new()
        },
    },
    SlashCommand {
        name: "/escalate",
        aliases: &[],
        arg: "",
        help: "re-run the last turn remotely",
        run: |app, _| actions::escalate(app),
    },
    SlashCommand {
        name: "/skills",
        aliases: &[],
        arg: "",
        help: "list skills",
        run: |app, _| {
            app.notice(Level::Info, skills::listing(app));
            Vec::new()
        },
    },
    SlashCommand {
        name: "/memory",
        aliases: &[],
        arg: "Q",
        help: "search memory",
        run: actions::memory_search,
    },
    SlashCommand {
        name: "/compact",
        aliases: &[],
        arg: "[KEEP]",
        help: "summarize older turns now, keeping KEEP",
        run: actions::compact,
    },
    SlashCommand {
        name: "/sessions",
        aliases: &[],
        arg: "",
        help: "list sessions and pick one",
        run: |app, _| {
            app.open_session_picker();
            Vec::new()
        },
    },
    SlashCommand {
        name: "/stats",
        aliases: &[],
        arg: "",
        help: "usage per agent, today and in all (the usage logs)",
        run: |app, _| {
            app.stats_command();
            Vec::new()
        },
    },
    SlashCommand {
        name: "/cron",
        aliases: &[],
        arg: "",
        help: "list scheduled jobs with their next run",
        run: |app, _| {
            actions::cron_command(app);
            Vec::new()
        },
    },
    SlashCommand {
        name: "/fork",
        aliases: &[],
        arg: "",
        help: "copy this session into a new one and switch to it",
        run: |app, _| app.fork(),
    },
    SlashCommand {
        name: "/rewind",
        aliases: &[],
        arg: "",
        help: "go back to before a message, restoring files",
        run: |app, _| {
            app.open_rewind_picker();
            Vec::new()
        },
    },
    SlashCommand {
        name: "/find",
        aliases: &[],
        arg: "TEXT",
        help: "highlight TEXT in the conversation (n/N jump)",
        run: |app, arg| {
            app.start_search(arg);
            Vec::new()
        },
    },
    SlashCommand {
        name: "/mcp",
        aliases: &[],
        arg: "",
        help: "list MCP servers, their state and tools",
        run: |app, _| {
            let text = super::mcp::listing(&app.status.mcp);
            app.notice(Level::Info, text);
            Vec::new()
        },
    },
    SlashCommand {
        name: "/approvals",
        aliases: &["/permissions"],
        arg: "",
        help: "approval rules in force; d revokes one",
        run: |app, _| app.list_approvals(),
    },
    SlashCommand {
        name: "/quit",
        aliases: &["/exit", "/q"],
        arg: "",
        help: "leave egirl",
        run: |_, _| vec![Effect::Quit],
    },
];

/// Commands help and completion list only when the config declares
/// agents (typed without them, each says what it can).
const AGENTS_ONLY: &[&str] = &["/agent", "/stats"];

/// What `/escalate` sends: plain words the remote model understands, with
/// "escalate" for the router.
pub const ESCALATE_TEXT: &str =
    "Please escalate: answer my previous request again, properly and in full.";

/// A command as the completion list and help show it.
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
        .filter(|c| app.agents.enabled() || !AGENTS_ONLY.contains(&c.name))
        .map(|c| CommandInfo {
            name: c.name.to_string(),
            arg: c.arg.to_string(),
            help: c.help.to_string(),
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

/// What Enter does with the input's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Typed {
    /// A built-in command or a skill: run it (the line, trimmed).
    Command(String),
    /// Sent to the model as this text.
    Message(String),
    /// `/word` that names no command: said, and nothing sent.
    Unknown(String),
    /// A built-in that takes no argument, with one: said, nothing run
    /// (the words after it would be lost).
    NoArgument(String),
}

/// Only known commands (and skills) are commands. `//text` sends
/// `/text`; a leading space sends the text as it is; a first word that
/// is a path (`/etc/hosts …`) is a message too. Any other unknown `/word`
/// is most likely a mistyped command: it is not sent.
pub fn classify(app: &App, text: &str) -> Typed {
    if let Some(escaped) = text.strip_prefix("//") {
        return Typed::Message(format!("/{escaped}"));
    }
    if !text.starts_with('/') {
        return Typed::Message(text.to_string());
    }
    let line = text.trim_end();
    let name = line.split(char::is_whitespace).next().unwrap_or(line);
    let builtin = COMMANDS
        .iter()
        .find(|c| c.name == name || c.aliases.contains(&name));
    if builtin.is_some_and(|c| c.arg.is_empty()) && line.len() > name.len() {
        return Typed::NoArgument(name.to_string());
    }
    if builtin.is_some() || skills::invocation(app, name, "").is_some() {
        return Typed::Command(line.to_string());
    }
    // A path: another slash after the first (`/etc/hosts`, `/tmp/`).
    if name[1..].contains('/') {
        return Typed::Message(text.to_string());
    }
    Typed::Unknown(name.to_string())
}

/// How to type `sent`, a message already sent, so that Enter sends it
/// again as a message: `//` before one that would otherwise run as a
/// command or be refused as an unknown one (what Up recalls from a
/// transcript and what `/rewind` puts back in the box).
pub fn as_typed(app: &App, sent: &str) -> String {
    match classify(app, sent) {
        Typed::Message(text) if text == sent => sent.to_string(),
        _ => format!("/{sent}"),
    }
}

/// The notice for an unknown `/word`: how to send it after all.
pub fn unknown_notice(name: &str) -> String {
    format!(
        "unknown command {name}: //{rest} sends it as a message (or start with a space); /help lists the commands",
        rest = name.trim_start_matches('/')
    )
}

/// The notice for a built-in given an argument it does not take.
pub fn no_argument_notice(name: &str) -> String {
    format!("{name} takes no argument: {name} alone runs it; /{name} … sends the line as a message")
}

/// Runs a typed command line: a built-in from [`COMMANDS`], else a skill,
/// else a warning.
pub fn run(app: &mut App, line: &str) -> Vec<Effect> {
    let (name, arg) = match line.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (line, ""),
    };
    let command = COMMANDS
        .iter()
        .find(|c| c.name == name || c.aliases.contains(&name));
    if let Some(command) = command {
        return (command.run)(app, arg);
    }
    match skills::invocation(app, name, arg) {
        Some(text) => vec![Effect::submit(Op::UserMessage {
            session: app.session.clone(),
            origin: crate::protocol::Origin::Tui,
            text,
            images: Vec::new(),
        })],
        None => {
            app.notice(Level::Warning, unknown_notice(name));
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::surfaces::tui::theme::Theme;

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
    fn matches_are_the_commands_the_word_begins_in_help_order() {
        let app = app();
        let names = |typed: &str| -> Vec<String> {
            matches(&app, typed).into_iter().map(|c| c.name).collect()
        };
        assert_eq!(names("/he"), ["/help"]);
        assert_eq!(names("/f"), ["/fork", "/find"]);
        assert_eq!(names("/re"), ["/remote", "/rewind"]);
        assert_eq!(names("/help"), ["/help"]);
        assert!(names("hello").is_empty());
        assert!(names("/theme x").is_empty());
        assert!(names("/zz").is_empty());
    }

    #[test]
    fn every_name_and_alias_is_taken_once() {
        let mut seen = std::collections::HashSet::new();
        for command in COMMANDS {
            for name in std::iter::once(&command.name).chain(command.aliases) {
                assert!(name.starts_with('/'), "{name}");
                assert!(seen.insert(*name), "{name} twice");
            }
        }
    }

    #[test]
    fn only_known_commands_are_commands() {
        let app = app();
        let classify = |text: &str| classify(&app, text);
        assert_eq!(classify("/help"), Typed::Command("/help".into()));
        assert_eq!(classify("/q"), Typed::Command("/q".into()));
        assert_eq!(
            classify("/theme light  "),
            Typed::Command("/theme light".into())
        );
        assert_eq!(
            classify("/etc/hosts is wrong"),
            Typed::Message("/etc/hosts is wrong".into())
        );
        assert_eq!(classify("//help"), Typed::Message("/help".into()));
        assert_eq!(classify(" /help"), Typed::Message(" /help".into()));
        assert_eq!(classify("/hepl me"), Typed::Unknown("/hepl".into()));
        assert_eq!(classify("/new plan"), Typed::NoArgument("/new".into()));
        assert_eq!(classify("/q now"), Typed::NoArgument("/q".into()));
        assert_eq!(classify("hi /help"), Typed::Message("hi /help".into()));
        assert!(unknown_notice("/hepl").contains("//hepl sends it"));
    }

    #[test]
    fn a_sent_message_is_typed_so_that_it_is_sent_again() {
        let app = app();
        for sent in [
            "/help me",
            "/hepl",
            "//x",
            "/etc/hosts is wrong",
            " /help",
            "hi",
        ] {
            let typed = as_typed(&app, sent);
            assert_eq!(
                classify(&app, &typed),
                Typed::Message(sent.into()),
                "{sent}"
            );
        }
        assert_eq!(as_typed(&app, "hi"), "hi");
        assert_eq!(as_typed(&app, "/help me"), "//help me");
    }

    #[test]
    fn skill_commands_are_slugs() {
        assert_eq!(skill_command("github"), "/github");
        assert_eq!(skill_command("Daily Standup"), "/daily-standup");
    }
}
