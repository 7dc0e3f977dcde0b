//! `egirl -m TEXT`: one turn without a UI. The final answer goes to stdout;
//! with `--json` every event of the session goes to stdout, one per line.
//! Exec is denied (the model hears "denied by user") unless
//! `--approve-exec` or the approval policy allows it.

use crate::link::CoreLink;
use crate::print;
use crate::protocol::{
    ApprovalRequest, CLAUDE_CODE_PERMISSION, Command, Compacted, ErrorEvent, EventKind,
    FinalAnswer, Notice, Op, Origin, ReviewDecision, TurnEnded,
};
use crate::stop_signals::StopSignals;

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

pub async fn run_once(agent: &CoreLink, text: String, opts: &HeadlessOptions) -> Outcome {
    let mut events = agent.subscribe();
    // One turn, no later one to pick up a server that connects meanwhile:
    // it starts once every MCP server is up or has failed (each bounded by
    // its startup_timeout).
    agent.start_mcp();
    let mut status = agent.status.clone();
    let _ = status
        .wait_for(|status| status.mcp.iter().all(|s| s.state != "starting"))
        .await;
    agent.submit(Op::UserMessage {
        session: opts.session.clone(),
        origin: Origin::Cli,
        text,
    });
    let mut outcome = Outcome::Failed;
    let mut stdout = std::io::stdout().lock();
    let mut stop = StopSignals::watch();
    loop {
        let event = tokio::select! {
            e = events.recv() => match e {
                Some(e) => e,
                None => return Outcome::Failed,
            },
            // Ctrl+C, SIGTERM and SIGHUP interrupt the turn, which kills a
            // running command's process group, and the turn then ends.
            () = stop.next() => {
                agent.submit(Op::Interrupt { session: opts.session.clone() });
                continue;
            }
        };
        if event.session != opts.session {
            continue;
        }
        // JSON is escaped, C1 controls included; the answer is cleaned of
        // escape sequences; a closed stdout just ends the output.
        if opts.json
            && let Ok(line) = serde_json::to_string(&event)
        {
            let _ = print::write_clean(&mut stdout, &format!("{}\n", print::json_line(&line)));
        }
        match event.kind {
            EventKind::ApprovalRequest(ApprovalRequest {
                id,
                tool,
                command,
                escalation,
                ..
            }) => {
                // --approve-exec never covers running outside the sandbox,
                // nor Claude Code's own permission requests (nobody saw them),
                // nor an MCP server's tool.
                let mcp_tool = tool.starts_with("mcp__");
                let decision = if opts.approve_exec
                    && escalation.is_none()
                    && tool != CLAUDE_CODE_PERMISSION
                    && !mcp_tool
                {
                    ReviewDecision::ApprovedOnce
                } else {
                    if !opts.json && mcp_tool {
                        print::err(format_args!(
                            "egirl: denied `{tool}` (headless runs never approve MCP tools; `approval = \"allow\"` on a server trusts it)"
                        ));
                    } else if !opts.json {
                        print::err(format_args!(
                            "egirl: denied `{command}` (pass --approve-exec to allow commands)"
                        ));
                    }
                    ReviewDecision::Denied
                };
                agent.submit(Op::ApprovalDecision {
                    id,
                    decision,
                    by: Origin::Cli,
                });
            }
            EventKind::Final(FinalAnswer { text }) => {
                if !opts.json {
                    let _ = print::write_clean(&mut stdout, &format!("{text}\n"));
                }
                outcome = Outcome::Answered;
            }
            EventKind::Error(ErrorEvent { message }) => {
                print::err(format_args!("egirl: {message}"));
                outcome = Outcome::Failed;
            }
            EventKind::TurnEnded(TurnEnded { interrupted }) => {
                if interrupted {
                    outcome = Outcome::Interrupted;
                }
                return outcome;
            }
            _ => {}
        }
    }
}

/// `egirl --session ID --compact`: compacts the session now and prints
/// the summary (what the model sees from then on in place of older turns).
pub async fn compact(agent: &CoreLink, session: &str) -> Outcome {
    let mut events = agent.subscribe();
    agent.submit(Op::Command {
        session: session.to_string(),
        command: Command::Compact {
            focus: None,
            origin: Origin::Cli,
        },
    });
    let mut stop = StopSignals::watch();
    loop {
        let event = tokio::select! {
            e = events.recv() => match e {
                Some(e) => e,
                None => return Outcome::Failed,
            },
            () = stop.next() => {
                agent.submit(Op::Interrupt { session: session.to_string() });
                continue;
            }
        };
        if event.session != session {
            continue;
        }
        match event.kind {
            EventKind::Compaction(Compacted {
                summary,
                summarized_messages,
                before_tokens,
                after_tokens,
                ..
            }) => {
                print::err(format_args!(
                    "egirl: compacted {summarized_messages} messages ({before_tokens} → {after_tokens} tokens)"
                ));
                let mut stdout = std::io::stdout().lock();
                let _ = print::write_clean(&mut stdout, &format!("{summary}\n"));
                return Outcome::Answered;
            }
            EventKind::Error(ErrorEvent { message }) => {
                print::err(format_args!("egirl: {message}"));
                return Outcome::Failed;
            }
            EventKind::Notice(Notice { message }) => print::err(format_args!("egirl: {message}")),
            _ => {}
        }
    }
}
