//! Each op of a session handed to its agent: the agent named, else the
//! session's (see `agents`); built on its first op; an unknown one gets
//! one `error` line and nothing runs.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::agents::Agents;
use super::approvals;
use super::memory::search_memory;
use super::shared::Shared;
use super::worker::{Job, Work};
use crate::protocol::{Command, EventKind, Op, Queued, SessionId, SubmissionId};
use crate::tools::client_files::Offer;

/// An op for one agent's session, as submitted.
pub(super) struct Routed {
    pub submission: SubmissionId,
    pub agent: Option<String>,
    pub op: Op,
}

/// Hands a session's op to its agent (built on its first op); an unknown
/// agent gets one `error` line and nothing runs.
pub(super) fn route(
    agents: &mut Agents,
    Routed {
        submission,
        agent,
        op,
    }: Routed,
    busy: &Arc<watch::Sender<usize>>,
    shutdown: &CancellationToken,
) {
    let (session, origin) = match &op {
        Op::UserMessage {
            session, origin, ..
        } => (session.clone(), origin.clone()),
        Op::Interrupt { session } | Op::Command { session, .. } => {
            (session.clone(), crate::protocol::Origin::Tui)
        }
        _ => return,
    };
    let message = matches!(op, Op::UserMessage { .. });
    let name = agents.agent_for(agent.as_deref(), &session);
    let state = agents.check(&name).and_then(|()| match op {
        // Only a live session has a turn to stop: nothing to build.
        Op::Interrupt { .. } => Ok(None),
        _ => agents.state(&name).map(Some),
    });
    let shared = match state {
        Ok(Some(shared)) => shared,
        Ok(None) => {
            if let Some(handle) = agents.live(&name, &session) {
                handle.interrupt();
            }
            return;
        }
        Err(why) => {
            agents.refuse(&name, &session, &origin, why, message);
            if message {
                busy.send_modify(|n| *n = n.saturating_sub(1));
            }
            return;
        }
    };
    match op {
        Op::UserMessage {
            session,
            origin,
            text,
            images,
        } => {
            let handle = agents.session(&shared, &session, busy, shutdown);
            // Turns ahead of this one (the running one included).
            let ahead = handle.outstanding.fetch_add(1, Ordering::SeqCst);
            if ahead > 0 {
                shared.bus.emit(
                    &session,
                    &origin,
                    EventKind::Queued(Queued {
                        text: text.clone(),
                        position: ahead,
                    }),
                );
            }
            let job = Job::Message {
                origin,
                text,
                images,
            };
            let work = Work { submission, job };
            agents.send(&shared, &session, work, busy, shutdown);
        }
        Op::Command { session, command } => command_for(
            agents, &shared, submission, session, command, busy, shutdown,
        ),
        _ => {}
    }
}

/// A session's command, run by its agent.
fn command_for(
    agents: &mut Agents,
    shared: &Arc<Shared>,
    submission: SubmissionId,
    session: SessionId,
    command: Command,
    busy: &Arc<watch::Sender<usize>>,
    shutdown: &CancellationToken,
) {
    match command {
        Command::MemorySearch { query } => search_memory(shared, submission, session, query),
        Command::ListApprovals => approvals::list(shared, &session),
        Command::RevokeApproval { id } => approvals::revoke(shared, &session, &id),
        command @ (Command::ClientFiles { .. }
        | Command::WorkIn { .. }
        | Command::SessionMcp { .. }) => client_session(shared, &session, command),
        command => {
            let job = Job::Command(command);
            agents.send(shared, &session, Work { submission, job }, busy, shutdown);
        }
    }
}

/// What a session's client provides (`egirl acp`): `client_files` (it
/// reads and writes files for the file tools), `work_in` (its project,
/// where the session's files and commands start, when it lies in the
/// workspace or an allowed path), `session_mcp` (MCP servers for this
/// session's turns, answered by a notice or an error).
fn client_session(shared: &Shared, session: &str, command: Command) {
    let origin = crate::protocol::Origin::Acp;
    let dir = match command {
        Command::ClientFiles { read, write } => {
            return shared.client_files.offer(session, Offer { read, write });
        }
        Command::SessionMcp { servers } => {
            let answer = match shared.mcp.set_session_servers(session, servers) {
                Ok(message) => EventKind::Notice(crate::protocol::Notice { message }),
                Err(message) => EventKind::Error(crate::protocol::ErrorEvent { message }),
            };
            return shared.bus.emit(session, &origin, answer);
        }
        Command::WorkIn { dir } => dir,
        _ => return,
    };
    let roots: Vec<&std::path::Path> = std::iter::once(shared.workspace.as_path())
        .chain(shared.allowed_paths.iter().map(PathBuf::as_path))
        .collect();
    let dir = std::path::Path::new(&dir);
    if let Err(message) = shared.client_files.work_in(session, dir, &roots) {
        let error = EventKind::Error(crate::protocol::ErrorEvent { message });
        shared.bus.emit(session, &origin, error);
    }
}
