//! The slash commands an editor offers (`available_commands_update`):
//! the TUI's commands that make sense outside it, each one op, and the
//! user-invocable skills. A prompt that starts with one runs it.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};

use super::Acp;
use crate::protocol::{Command, Origin, Target};

/// A built-in: its name (without the slash), its argument's hint (empty:
/// none) and what it does.
struct Builtin {
    name: &'static str,
    hint: &'static str,
    help: &'static str,
}

const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "compact",
        hint: "what to keep (optional)",
        help: "summarize the older turns now",
    },
    Builtin {
        name: "clear",
        hint: "",
        help: "forget this session's history (the transcript stays)",
    },
    Builtin {
        name: "memory",
        hint: "what to search for",
        help: "search memory",
    },
    Builtin {
        name: "local",
        hint: "",
        help: "send the next turn to the local model",
    },
    Builtin {
        name: "remote",
        hint: "",
        help: "send the next turn to a remote provider",
    },
    Builtin {
        name: "approvals",
        hint: "",
        help: "list the approval rules in force",
    },
    Builtin {
        name: "rewind",
        hint: "message number",
        help: "go back to before your message N, restoring the files changed since",
    },
];

/// What a prompt that starts with a slash asks for.
#[derive(Debug, PartialEq)]
pub enum Slash {
    /// A built-in: the command for the core.
    Core(Command),
    /// A built-in the core answers with no event: the command, and the
    /// line to show.
    Silent(Command, &'static str),
    /// A skill: the message that asks the model to use it.
    Message(String),
    /// A built-in used wrongly: why.
    Bad(String),
}

/// Tells the client the session's commands.
pub fn announce(acp: &Acp, session: &str) {
    let mut commands: Vec<AvailableCommand> = BUILTINS
        .iter()
        .map(|b| {
            let command = AvailableCommand::new(b.name, b.help);
            match b.hint {
                "" => command,
                hint => command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(hint),
                )),
            }
        })
        .collect();
    if let Some(skills) = &acp.options.skills {
        for skill in skills.snapshot().commands() {
            let name = skill_name(&skill.name);
            if commands.iter().all(|c| c.name != name) {
                let input = UnstructuredCommandInput::new("what to do (optional)");
                commands.push(
                    AvailableCommand::new(name, skill.description.clone())
                        .input(AvailableCommandInput::Unstructured(input)),
                );
            }
        }
    }
    let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands));
    acp.update(session, update);
}

/// A skill's command: lowercase, spaces as hyphens (as in the TUI).
fn skill_name(name: &str) -> String {
    name.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-")
}

/// The command `text` starts with, when it is one of the session's.
pub fn parse(acp: &Acp, text: &str) -> Option<Slash> {
    let rest = text.trim().strip_prefix('/')?;
    let (name, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let arg = arg.trim();
    if let Some(slash) = builtin(name, arg) {
        return Some(slash);
    }
    let skills = acp.options.skills.as_ref()?.snapshot();
    let skill = skills.commands().find(|s| skill_name(&s.name) == name)?;
    let ask = format!(
        "Use the {} skill for this: read {} first and follow it.",
        skill.name, skill.location
    );
    Some(Slash::Message(if arg.is_empty() {
        ask
    } else {
        format!("{ask}\n\n{arg}")
    }))
}

fn builtin(name: &str, arg: &str) -> Option<Slash> {
    Some(match name {
        "compact" => Slash::Core(Command::Compact {
            focus: (!arg.is_empty()).then(|| arg.to_string()),
            origin: Origin::Acp,
        }),
        "clear" => Slash::Silent(Command::Clear, "forgot this session's history"),
        "memory" if arg.is_empty() => Slash::Bad("/memory needs what to search for".into()),
        "memory" => Slash::Core(Command::MemorySearch {
            query: arg.to_string(),
        }),
        "local" => Slash::Silent(
            Command::ForceTarget {
                target: Target::Local,
            },
            "the next turn goes to the local model",
        ),
        "remote" => Slash::Silent(
            Command::ForceTarget {
                target: Target::Remote,
            },
            "the next turn goes to a remote provider",
        ),
        "approvals" => Slash::Core(Command::ListApprovals),
        "rewind" => match arg.parse::<usize>() {
            Ok(turn) if turn > 0 => Slash::Core(Command::Rewind { turn }),
            _ => Slash::Bad("/rewind needs the number of your message (1 is the first)".into()),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_with_their_argument() {
        assert_eq!(
            builtin("memory", "dentist"),
            Some(Slash::Core(Command::MemorySearch {
                query: "dentist".into()
            }))
        );
        assert_eq!(
            builtin("rewind", "2"),
            Some(Slash::Core(Command::Rewind { turn: 2 }))
        );
        assert!(matches!(builtin("rewind", "x"), Some(Slash::Bad(_))));
        assert!(matches!(builtin("memory", ""), Some(Slash::Bad(_))));
        assert!(matches!(
            builtin("compact", ""),
            Some(Slash::Core(Command::Compact { focus: None, .. }))
        ));
        assert_eq!(builtin("quit", ""), None);
        assert_eq!(skill_name("Daily Notes"), "daily-notes");
    }
}
