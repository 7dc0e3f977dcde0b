//! `[[hooks]]`: the user's own commands, run at points of a turn (see
//! `tools::hooks`). Only this file names them: the model can never add
//! one (the config is a protected path).

use serde::Deserialize;

use super::ConfigDuration;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    /// When it runs.
    pub event: HookEvent,
    /// Runs only when one of these `|`-separated names is the tool's name,
    /// the origin (`discord:123` or just `discord`) or the session id;
    /// none (or `*`): always.
    #[serde(default, rename = "match")]
    pub matcher: Option<String>,
    /// The program and its arguments, run without a shell.
    pub command: Vec<String>,
    /// Killed (its whole process group) when it runs longer.
    #[serde(default = "default_hook_timeout")]
    pub timeout: ConfigDuration,
}

fn default_hook_timeout() -> ConfigDuration {
    ConfigDuration::from_secs(10)
}

/// The points of a turn a hook can run at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookEvent {
    /// The first turn of a session in this process (a resumed one too).
    SessionStart,
    /// A user's message, before the model sees it.
    UserMessage,
    /// Before a tool call runs (before its approval): exit 2 blocks it.
    PreTool,
    /// After a tool call, with its result.
    PostTool,
    /// A tool call waits for the user's approval.
    ApprovalRequest,
    /// A turn ended (answered, failed or interrupted).
    TurnEnd,
    /// Older turns were replaced by a summary.
    Compaction,
}

impl HookEvent {
    pub fn name(self) -> &'static str {
        match self {
            Self::SessionStart => "session_start",
            Self::UserMessage => "user_message",
            Self::PreTool => "pre_tool",
            Self::PostTool => "post_tool",
            Self::ApprovalRequest => "approval_request",
            Self::TurnEnd => "turn_end",
            Self::Compaction => "compaction",
        }
    }
}

impl HookConfig {
    /// Whether it runs for a call of `tool` (if any) in `session` from `origin`.
    pub fn matches(&self, tool: Option<&str>, origin: &str, session: &str) -> bool {
        let Some(matcher) = self.matcher.as_deref().map(str::trim) else {
            return true;
        };
        let origin_kind = origin.split(':').next().unwrap_or(origin);
        matcher.split('|').map(str::trim).any(|name| {
            name == "*"
                || tool == Some(name)
                || name == origin
                || name == origin_kind
                || name == session
        })
    }

    /// The command as one line, for events and notices.
    pub fn shown(&self) -> String {
        self.command.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(matcher: Option<&str>) -> HookConfig {
        HookConfig {
            event: HookEvent::PreTool,
            matcher: matcher.map(String::from),
            command: vec!["true".into()],
            timeout: default_hook_timeout(),
        }
    }

    #[test]
    fn match_names_a_tool_an_origin_or_a_session() {
        assert!(hook(None).matches(Some("exec"), "cli", "s"));
        assert!(hook(Some("exec|write_file")).matches(Some("write_file"), "cli", "s"));
        assert!(!hook(Some("exec")).matches(Some("read_file"), "cli", "s"));
        assert!(hook(Some("discord")).matches(None, "discord:42", "s"));
        assert!(hook(Some("tui-1")).matches(None, "tui", "tui-1"));
        assert!(!hook(Some("exec")).matches(None, "cli", "s"));
    }
}
