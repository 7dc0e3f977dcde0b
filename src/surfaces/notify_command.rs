//! `[ui] notify_command` in `egirl serve`: the user's program, run for the
//! events the TUI would notify about, where no TUI may be looking: an
//! approval waiting while no client is attached to the gateway, and a
//! turn that ran at least `[ui] notify_after` ending.
//!
//! The program is an argv (no shell) with the text as its last argument
//! (`["notify-send", "egirl"]` works as is). It runs with the environment
//! commands get (no egirl secrets), stdin and output discarded, and is
//! killed after [`RUN_LIMIT`]; a program that fails or cannot start is a
//! warning in the log, never a stop. The text names the tool, the origin
//! and the turn's length, never a command or its arguments.

use std::collections::HashMap;
use std::ffi::OsString;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use crate::bus::EventReceiver;
use crate::protocol::{ApprovalRequest, Event, EventKind, Origin, TurnEnded};

/// How long the program may run.
pub const RUN_LIMIT: Duration = Duration::from_secs(10);

/// The program and when it runs.
#[derive(Clone, Debug)]
pub struct NotifyCommand {
    pub argv: Vec<String>,
    /// The environment it gets (the one commands get).
    pub env: Vec<(OsString, OsString)>,
    /// `[ui] notify_after`.
    pub after: Duration,
}

/// Runs `command` for the events of `events` until the stream ends;
/// `attached` says whether a client is connected now.
pub fn spawn(
    command: NotifyCommand,
    mut events: EventReceiver,
    attached: impl Fn() -> bool + Send + 'static,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut started: HashMap<String, Instant> = HashMap::new();
        while let Some(event) = events.recv().await {
            if let Some(text) = text_for(&event, &mut started, command.after, &attached) {
                run(&command, text);
            }
        }
    })
}

/// The notification `event` calls for, if any.
fn text_for(
    event: &Event,
    started: &mut HashMap<String, Instant>,
    after: Duration,
    attached: &impl Fn() -> bool,
) -> Option<String> {
    match &event.kind {
        EventKind::TurnStarted(_) => {
            started
                .entry(event.session.clone())
                .or_insert_with(Instant::now);
            None
        }
        EventKind::ApprovalRequest(ApprovalRequest { tool, .. }) if !attached() => Some(format!(
            "egirl: {tool} needs approval ({})",
            from(&event.origin)
        )),
        EventKind::TurnEnded(TurnEnded { interrupted }) => {
            let took = started.remove(&event.session)?.elapsed();
            (!interrupted && took >= after).then(|| {
                format!(
                    "egirl: a turn ({}) finished after {}s",
                    from(&event.origin),
                    took.as_secs()
                )
            })
        }
        _ => None,
    }
}

fn from(origin: &Origin) -> String {
    format!("from {origin}")
}

/// Starts the program with `text` and reaps it in the background.
fn run(command: &NotifyCommand, text: String) {
    let Some((program, args)) = command.argv.split_first() else {
        return;
    };
    let text: String = text.chars().filter(|c| !c.is_control()).collect();
    let child = tokio::process::Command::new(program)
        .args(args)
        .arg(&text)
        .env_clear()
        .envs(command.env.iter().cloned())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            tracing::warn!("[ui] notify_command `{program}` did not start: {e}");
            return;
        }
    };
    let program = program.clone();
    tokio::spawn(async move {
        match tokio::time::timeout(RUN_LIMIT, child.wait()).await {
            Ok(Ok(status)) if status.success() => {}
            Ok(Ok(status)) => {
                tracing::warn!("[ui] notify_command `{program}` exited with {status}")
            }
            Ok(Err(e)) => tracing::warn!("[ui] notify_command `{program}`: {e}"),
            Err(_) => {
                tracing::warn!(
                    "[ui] notify_command `{program}` ran past {}s: killed",
                    RUN_LIMIT.as_secs()
                );
                let _ = child.kill().await;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::TurnStarted;

    fn event(origin: Origin, kind: EventKind) -> Event {
        Event {
            agent: None,
            submission: None,
            session: "s".into(),
            origin,
            kind,
        }
    }

    fn request() -> EventKind {
        EventKind::ApprovalRequest(ApprovalRequest {
            id: "1".into(),
            tool: "exec".into(),
            command: "echo SECRET-VALUE".into(),
            cwd: "/w".into(),
            rule: None,
            rule_covers: None,
            sandbox: None,
            escalation: None,
        })
    }

    #[test]
    fn an_approval_notifies_only_with_nobody_attached_and_never_shows_the_command() {
        let mut started = HashMap::new();
        let webhook = event(Origin::Webhook, request());
        let text = text_for(&webhook, &mut started, Duration::ZERO, &|| false);
        assert_eq!(
            text.as_deref(),
            Some("egirl: exec needs approval (from webhook)")
        );
        assert!(text_for(&webhook, &mut started, Duration::ZERO, &|| true).is_none());
    }

    #[test]
    fn a_turn_notifies_when_it_ran_long_enough() {
        let mut started = HashMap::new();
        let begin = event(
            Origin::Tui,
            EventKind::TurnStarted(TurnStarted {
                text: "hi".into(),
                ..TurnStarted::default()
            }),
        );
        let end = event(
            Origin::Tui,
            EventKind::TurnEnded(TurnEnded { interrupted: false }),
        );
        let never = || false;
        text_for(&begin, &mut started, Duration::ZERO, &never);
        let text = text_for(&end, &mut started, Duration::ZERO, &never);
        assert!(text.is_some_and(|t| t.contains("finished after")));
        text_for(&begin, &mut started, Duration::from_secs(3600), &never);
        assert!(text_for(&end, &mut started, Duration::from_secs(3600), &never).is_none());
    }
}
