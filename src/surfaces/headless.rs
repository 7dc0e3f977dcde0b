//! `egirl -m TEXT`: one turn without a UI. The final answer goes to stdout;
//! with `--json` every event of the session goes to stdout, one per line.
//! Exec is denied (the model hears "denied by user") unless
//! `--approve-exec` or the approval policy allows it. The core may be in
//! this process or in a daemon's (`CoreLink`): the run reacts only to the
//! events of its own submission, so it never answers another session's
//! approval, and a lost connection to the daemon ends it with one line.

use tokio::sync::watch;

use crate::bus::EventReceiver;
use crate::link::{CoreLink, LinkState};
use crate::print;
use crate::protocol::{
    AgentName, ApprovalRequest, CLAUDE_CODE_PERMISSION, Command, Compacted, DELEGATE_PERMISSION,
    ErrorEvent, Event, EventKind, FinalAnswer, Notice, Op, Origin, ReviewDecision, Submission,
    SubmissionId, TurnEnded,
};
use crate::stop_signals::StopSignals;

pub struct HeadlessOptions {
    pub session: String,
    pub json: bool,
    pub approve_exec: bool,
    /// `--model`: the session runs on it from this turn (`pin_model`).
    pub model: Option<String>,
    /// `--agent` (or the `tui` binding's): the agent whose session this
    /// is; None for a config without agents.
    pub agent: Option<AgentName>,
}

impl HeadlessOptions {
    /// `op` for this run's agent.
    fn submission(&self, op: Op) -> Submission {
        match &self.agent {
            Some(agent) => Submission::to_agent(agent, op),
            None => Submission::new(op),
        }
    }
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
    let mut status = agent.watch_status();
    let _ = status
        .wait_for(|status| status.mcp.iter().all(|s| s.state != "starting"))
        .await;
    if let Some(model) = &opts.model
        && let Err(why) = pin(agent, opts, model, &mut events).await
    {
        print::err(format_args!("egirl: --model {model}: {why}"));
        return Outcome::Failed;
    }
    let turn = Turn::submit_as(
        agent,
        &opts.session,
        opts.agent.as_deref(),
        Op::UserMessage {
            session: opts.session.clone(),
            origin: Origin::Cli,
            text,
            images: Vec::new(),
        },
    );
    let mut outcome = Outcome::Failed;
    let mut stdout = std::io::stdout().lock();
    let mut stop = StopSignals::watch();
    let mut connection = Connection::of(agent);
    loop {
        let event = match next(&mut events, &mut stop, &mut connection).await {
            Next::Event(event) => *event,
            // Ctrl+C, SIGTERM and SIGHUP interrupt the turn, which kills a
            // running command's process group, and the turn then ends.
            Next::Stop => {
                agent.submit_with(opts.submission(Op::Interrupt {
                    session: opts.session.clone(),
                }));
                continue;
            }
            Next::Lost(why) => {
                print::err(format_args!("egirl: {why}"));
                return Outcome::Failed;
            }
        };
        if !turn.answers(&event) {
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
            EventKind::ApprovalRequest(request) => {
                let id = request.id.clone();
                agent.submit_with(opts.submission(Op::ApprovalDecision {
                    id,
                    decision: decide(opts, &request),
                    by: Origin::Cli,
                }));
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

/// Pins the session (`--model`) and waits for the core's answer.
async fn pin(
    agent: &CoreLink,
    opts: &HeadlessOptions,
    model: &str,
    events: &mut EventReceiver,
) -> Result<(), String> {
    let session = opts.session.as_str();
    let op = Op::Command {
        session: session.to_string(),
        command: Command::PinModel {
            model: model.to_string(),
        },
    };
    let asked = Turn::submit_as(agent, session, opts.agent.as_deref(), op);
    let mut stop = StopSignals::watch();
    let mut connection = Connection::of(agent);
    loop {
        let event = match next(events, &mut stop, &mut connection).await {
            Next::Event(event) => *event,
            Next::Stop => return Err("stopped".into()),
            Next::Lost(why) => return Err(why),
        };
        if !asked.answers(&event) {
            continue;
        }
        match event.kind {
            EventKind::ModelPinned(_) => return Ok(()),
            EventKind::Error(ErrorEvent { message }) => return Err(message),
            _ => {}
        }
    }
}

/// The answer to one of the turn's approval requests. --approve-exec
/// never covers running outside the sandbox, nor a delegated agent's own
/// permission requests (nobody saw them), nor an MCP server's tool.
fn decide(opts: &HeadlessOptions, request: &ApprovalRequest) -> ReviewDecision {
    let ApprovalRequest {
        tool,
        command,
        escalation,
        ..
    } = request;
    let mcp_tool = tool.starts_with("mcp__");
    let delegates_own = tool == CLAUDE_CODE_PERMISSION || tool == DELEGATE_PERMISSION;
    if opts.approve_exec && escalation.is_none() && !delegates_own && !mcp_tool {
        return ReviewDecision::ApprovedOnce;
    }
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
}

/// The one submission a headless run makes, under an id no other client
/// of the same core has (attached, other processes submit too), so that
/// it reacts only to its own events: never to another session's, nor to
/// another surface's turn or approval in the same session.
pub struct Turn {
    session: String,
    id: SubmissionId,
}

impl Turn {
    pub fn submit(agent: &CoreLink, session: &str, op: Op) -> Self {
        Self::submit_as(agent, session, None, op)
    }

    /// As `submit`, for the agent named (`--agent`).
    pub fn submit_as(link: &CoreLink, session: &str, agent: Option<&str>, op: Op) -> Self {
        let unique = uuid::Uuid::new_v4().simple().to_string();
        let id = SubmissionId(format!("cli-{}", &unique[..12]));
        link.submit_with(Submission {
            id: id.clone(),
            agent: agent.map(str::to_string),
            op,
        });
        Turn {
            session: session.to_string(),
            id,
        }
    }

    /// Whether `event` is this submission's. Events carry the id of the
    /// submission they answer; one emitted from a task of its own may carry
    /// none, and is the session's.
    pub fn answers(&self, event: &Event) -> bool {
        event.session == self.session && event.submission.as_ref().is_none_or(|id| *id == self.id)
    }
}

/// What a headless run waits for next.
pub enum Next {
    Event(Box<Event>),
    /// Ctrl+C, SIGTERM or SIGHUP.
    Stop,
    /// The connection to the daemon was lost (attached only): why.
    Lost(String),
}

/// An attached link's connection, and the resyncs it had when the run
/// began (a later one means events of the run may have been skipped).
pub struct Connection {
    state: watch::Receiver<LinkState>,
    resyncs: u64,
}

impl Connection {
    /// `None` in process: there is no connection to lose.
    pub fn of(agent: &CoreLink) -> Option<Self> {
        let state = agent.connection.clone()?;
        let resyncs = match &*state.borrow() {
            LinkState::Connected { resyncs, .. } => *resyncs,
            _ => 0,
        };
        Some(Connection { state, resyncs })
    }
}

/// The next thing the run reacts to. Events already received come first,
/// so a turn that ended just before the daemon went away still counts.
pub async fn next(
    events: &mut EventReceiver,
    stop: &mut StopSignals,
    connection: &mut Option<Connection>,
) -> Next {
    tokio::select! {
        biased;
        e = events.recv() => match e {
            Some(e) => Next::Event(Box::new(e)),
            None => Next::Lost("the core stopped before the turn ended".into()),
        },
        () = stop.next() => Next::Stop,
        why = connection_lost(connection) => Next::Lost(why),
    }
}

/// Resolves when an attached link loses its daemon; never in process. A
/// resync also ends the run: events of the turn may be among those skipped.
async fn connection_lost(connection: &mut Option<Connection>) -> String {
    let Some(Connection { state, resyncs }) = connection else {
        return std::future::pending().await;
    };
    loop {
        let now = state.borrow_and_update().clone();
        match now {
            LinkState::Connected { resyncs: now, .. } if now == *resyncs => {}
            LinkState::Connected { .. } => {
                return "the daemon's event stream skipped events of this turn; it goes on there (see its transcript)".into();
            }
            LinkState::Reconnecting { why, .. } | LinkState::Closed(why) => {
                return format!("lost the connection to the daemon ({why})");
            }
        }
        if state.changed().await.is_err() {
            return "lost the connection to the daemon".into();
        }
    }
}

/// `egirl --session ID --compact`: compacts the session now and prints
/// the summary (what the model sees from then on in place of older turns).
pub async fn compact(agent: &CoreLink, session: &str) -> Outcome {
    let mut events = agent.subscribe();
    let turn = Turn::submit(
        agent,
        session,
        Op::Command {
            session: session.to_string(),
            command: Command::Compact {
                focus: None,
                origin: Origin::Cli,
            },
        },
    );
    let mut stop = StopSignals::watch();
    let mut connection = Connection::of(agent);
    loop {
        let event = match next(&mut events, &mut stop, &mut connection).await {
            Next::Event(event) => *event,
            Next::Stop => {
                agent.submit(Op::Interrupt {
                    session: session.to_string(),
                });
                continue;
            }
            Next::Lost(why) => {
                print::err(format_args!("egirl: {why}"));
                return Outcome::Failed;
            }
        };
        if !turn.answers(&event) {
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
