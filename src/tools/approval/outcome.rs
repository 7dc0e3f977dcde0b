//! What a check answers: [`Granted`] (why it may go ahead) or [`Refusal`]
//! (why not). A refusal's text is what the model is told, as is; a grant's
//! text is shown with an escalation's re-run ("approved once by tui").

use std::fmt;
use std::time::Duration;

use super::{DENIED_BY_USER, Grant, Source};
use crate::protocol::Origin;

/// Why an action may go ahead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Granted {
    /// A setting or the tool itself lets it through without asking; the
    /// text names which (`policy full`, `read-only (readOnlyHint)`).
    Policy(String),
    /// A remembered grant covers it.
    Covered { grant: Grant, source: Source },
    /// Someone approved it just now.
    Approved { by: Origin, kept: Kept },
}

/// What an approval given just now leaves behind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kept {
    /// Nothing: approved once.
    Nothing,
    /// Nothing, though the user asked for more: a command with shell syntax
    /// can never become a rule.
    NotARule,
    /// The grant, for this session.
    Session(Grant),
    /// The grant, saved in the approvals file.
    Always(Grant),
}

/// Why an action may not go ahead; its text goes to the model as is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A setting forbids it, or nobody could be asked; the text says which.
    Policy(String),
    /// The user said no.
    DeniedByUser,
    /// An escalation answered with anything but "run it outside the sandbox".
    KeptInSandbox,
    /// The turn was interrupted while the request waited.
    Interrupted,
    /// Nobody answered in time (`unattended_run`: cron, heartbeat, webhook).
    TimedOut {
        after: Duration,
        unattended_run: bool,
    },
}

impl fmt::Display for Granted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Granted::Policy(why) => f.write_str(why),
            Granted::Covered { grant, source } => match grant {
                Grant::ExecRule(rule) => write!(f, "allowed by rule `{rule}`"),
                Grant::Host(host) if *source == Source::Session => {
                    write!(f, "`{host}` approved for this session")
                }
                Grant::Host(host) => write!(f, "`{host}` approved always"),
                Grant::McpTool(rule) => write!(f, "allowed by {source} rule `{rule}`"),
            },
            Granted::Approved { by, kept } => match kept {
                Kept::Nothing => write!(f, "approved once by {by}"),
                Kept::NotARule => write!(
                    f,
                    "approved once by {by} (this command cannot become a rule)"
                ),
                Kept::Session(grant) => write!(
                    f,
                    "approved by {by}; `{}` allowed for this session",
                    grant.text()
                ),
                Kept::Always(grant) => write!(
                    f,
                    "approved by {by}; `{}` allowed from now on",
                    grant.text()
                ),
            },
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Policy(why) => f.write_str(why),
            Refusal::DeniedByUser => f.write_str(DENIED_BY_USER),
            Refusal::KeptInSandbox => write!(f, "{DENIED_BY_USER} (outside the sandbox)"),
            Refusal::Interrupted => f.write_str("interrupted"),
            Refusal::TimedOut {
                after,
                unattended_run,
            } => {
                let why = if *unattended_run {
                    " (unattended run)"
                } else {
                    ""
                };
                write!(
                    f,
                    "denied: no one approved within {}{why}",
                    human_duration(*after)
                )
            }
        }
    }
}

/// For callers whose errors are the model's text.
impl From<Refusal> for String {
    fn from(refusal: Refusal) -> Self {
        refusal.to_string()
    }
}

fn human_duration(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0 => format!("{}ms", d.as_millis()),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_read_as_the_model_is_told_them() {
        assert_eq!(Refusal::DeniedByUser.to_string(), DENIED_BY_USER);
        assert_eq!(
            Refusal::KeptInSandbox.to_string(),
            "denied by user (outside the sandbox)"
        );
        let timed_out = Refusal::TimedOut {
            after: Duration::from_secs(600),
            unattended_run: true,
        };
        assert_eq!(
            timed_out.to_string(),
            "denied: no one approved within 10m (unattended run)"
        );
    }

    #[test]
    fn grants_say_what_was_kept() {
        let by = Origin::Tui;
        let kept = |kept| {
            Granted::Approved {
                by: by.clone(),
                kept,
            }
            .to_string()
        };
        assert_eq!(kept(Kept::Nothing), "approved once by tui");
        assert_eq!(
            kept(Kept::Always(Grant::Host("example.com".into()))),
            "approved by tui; `example.com` allowed from now on"
        );
        let covered = Granted::Covered {
            grant: Grant::Host("example.com".into()),
            source: Source::File,
        };
        assert_eq!(covered.to_string(), "`example.com` approved always");
    }
}
