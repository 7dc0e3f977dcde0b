//! `egirl -m TEXT`: one turn without a UI. The final answer goes to stdout;
//! with `--json` every event of the session goes to stdout, one per line.
//! Exec is denied (the model hears "denied by user") unless
//! `--approve-exec` or the approval policy allows it.

use std::io::Write;

use crate::agent::AgentHandle;
use crate::protocol::{EventKind, Op, Origin, ReviewDecision};

pub struct HeadlessOptions {
    pub session: String,
    pub json: bool,
    pub approve_exec: bool,
}

/// What the turn ended with, for the exit code.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Answered,
    Failed,
    Interrupted,
}

pub async fn run_once(agent: &AgentHandle, text: String, opts: &HeadlessOptions) -> Outcome {
    let mut events = agent.bus.subscribe();
    agent.submit(Op::UserMessage {
        session: opts.session.clone(),
        origin: Origin::Cli,
        text,
    });
    let mut outcome = Outcome::Failed;
    let mut stdout = std::io::stdout().lock();
    loop {
        let event = tokio::select! {
            e = events.recv() => match e {
                Some(e) => e,
                None => return Outcome::Failed,
            },
            _ = tokio::signal::ctrl_c() => {
                agent.submit(Op::Interrupt { session: opts.session.clone() });
                continue;
            }
        };
        if event.session != opts.session {
            continue;
        }
        if opts.json
            && let Ok(line) = serde_json::to_string(&event)
        {
            let _ = writeln!(stdout, "{line}");
            let _ = stdout.flush();
        }
        match event.kind {
            EventKind::ApprovalRequest {
                id,
                command,
                escalation,
                ..
            } => {
                // --approve-exec never covers running outside the sandbox.
                let decision = if opts.approve_exec && escalation.is_none() {
                    ReviewDecision::ApprovedOnce
                } else {
                    if !opts.json {
                        eprintln!(
                            "egirl: denied `{command}` (pass --approve-exec to allow commands)"
                        );
                    }
                    ReviewDecision::Denied
                };
                agent.submit(Op::ApprovalDecision {
                    id,
                    decision,
                    by: Origin::Cli,
                });
            }
            EventKind::Final { text } => {
                if !opts.json {
                    let _ = writeln!(stdout, "{text}");
                }
                outcome = Outcome::Answered;
            }
            EventKind::Error { message } => {
                eprintln!("egirl: {message}");
                outcome = Outcome::Failed;
            }
            EventKind::TurnEnded { interrupted } => {
                if interrupted {
                    outcome = Outcome::Interrupted;
                }
                return outcome;
            }
            _ => {}
        }
    }
}
