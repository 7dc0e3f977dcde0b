//! A line REPL on stdin/stdout: the interactive surface until the
//! full-screen TUI lands. Approvals are asked inline.

use std::io::Write;

use tokio::io::{AsyncBufReadExt, BufReader};

use crate::agent::AgentHandle;
use crate::protocol::{Command, EventKind, Op, Origin, ReviewDecision, Target};

pub async fn run(agent: &AgentHandle, session: String) -> u8 {
    let mut events = agent.bus.subscribe();
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    println!(
        "egirl · session {session} · /quit to leave, /local or /remote to force the next turn"
    );
    loop {
        print!("\n> ");
        let _ = std::io::stdout().flush();
        let Ok(Some(line)) = lines.next_line().await else {
            return super::EXIT_OK;
        };
        let text = line.trim();
        match text {
            "" => continue,
            "/quit" | "/exit" => return super::EXIT_OK,
            "/local" | "/remote" => {
                let target = if text == "/local" {
                    Target::Local
                } else {
                    Target::Remote
                };
                agent.submit(Op::Command {
                    session: session.clone(),
                    command: Command::ForceTarget(target),
                });
                println!("next turn: {target}");
                continue;
            }
            "/clear" => {
                agent.submit(Op::Command {
                    session: session.clone(),
                    command: Command::Clear,
                });
                println!("history cleared (the transcript stays on disk)");
                continue;
            }
            _ => {}
        }
        agent.submit(Op::UserMessage {
            session: session.clone(),
            origin: Origin::Tui,
            text: text.to_string(),
        });
        loop {
            let event = tokio::select! {
                e = events.recv() => match e { Some(e) => e, None => return super::EXIT_FAILURE },
                _ = tokio::signal::ctrl_c() => {
                    agent.submit(Op::Interrupt { session: session.clone() });
                    continue;
                }
            };
            if event.session != session {
                continue;
            }
            match event.kind {
                EventKind::Delta { text } => {
                    print!("{text}");
                    let _ = std::io::stdout().flush();
                }
                EventKind::ToolCall {
                    name, arguments, ..
                } => println!("\n· {name} {arguments}"),
                EventKind::ToolResult {
                    name,
                    success,
                    duration_ms,
                    ..
                } => {
                    println!(
                        "· {name} {} in {duration_ms} ms",
                        if success { "ok" } else { "failed" }
                    );
                }
                EventKind::ApprovalRequest {
                    id, command, cwd, ..
                } => {
                    print!(
                        "\nrun `{command}` in {cwd}? [y]es once / [a] this prefix for the session / [p]ermanently / [N]o: "
                    );
                    let _ = std::io::stdout().flush();
                    let answer = lines.next_line().await.ok().flatten().unwrap_or_default();
                    let decision = match answer.trim() {
                        "y" | "Y" | "yes" => ReviewDecision::ApprovedOnce,
                        "a" | "A" => ReviewDecision::ApprovedForSession,
                        "p" | "P" => ReviewDecision::ApprovedAlways,
                        _ => ReviewDecision::Denied,
                    };
                    agent.submit(Op::ApprovalDecision {
                        id,
                        decision,
                        by: Origin::Tui,
                    });
                }
                EventKind::ContextTrimmed {
                    dropped_messages, ..
                } => {
                    println!(
                        "\n(left out {dropped_messages} older messages to fit the context window)"
                    );
                }
                EventKind::Error { message } => println!("\nerror: {message}"),
                EventKind::Notice { message } => println!("\nnote: {message}"),
                EventKind::TurnEnded { interrupted } => {
                    if interrupted {
                        println!("\n(interrupted)");
                    }
                    break;
                }
                _ => {}
            }
        }
    }
}
