//! The agent core: one task that takes `Op`s, one worker task per session
//! that runs its turns in order, and events out through the bus. It never
//! knows which surface is listening.
//!
//! Its modules import one way only, each from those before it:
//!
//! 1. leaves: `context` (prompts), `window`, `trim`, `redact`,
//!    `unattended`, `slots`, `summary`;
//! 2. `shared` (the state every worker shares), then `local` (the local
//!    roles), `route` (where a turn runs), `pin` (a session pinned to a
//!    model), `memory`, `approvals` (`/approvals`), `rewind`;
//! 3. `session` (transcript, history, `Turn`), then `usage`, `tool_calls`,
//!    `models` (`/model`'s commands), `vision` (who sees a turn's images);
//! 4. `steps` (one request), then `compact`, then `turn` (the loop);
//! 5. `start` (building `shared`), `worker` (a session's task), and this
//!    file (the core's task and the handle surfaces hold).

mod approvals;
mod budget;
mod compact;
mod context;
mod hooks;
mod local;
mod memory;
mod models;
mod pin;
mod prompt;
pub mod rewind;
mod route;
mod session;
mod shared;
mod slots;
mod start;
mod steps;
mod summary;
mod tool_calls;
mod trim;
mod turn;
mod unattended;
mod usage;
mod vision;
mod window;
mod worker;

use memory::search_memory;
use shared::Shared;
use worker::{Job, SessionHandle, Work, start_session};

pub use context::{
    STATIC_SYSTEM, system_prompt, system_prompt_with_skills, user_message, user_message_with_skill,
};
pub use slots::file_name as slot_file_name;
pub use unattended::{HEARTBEAT_OK, heartbeat_reply};
pub use window::{DoesNotFit, Fit, fit};

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::bus::EventBus;
use crate::config::Config;
use crate::protocol::{Command, EventKind, Op, SessionId};
use crate::protocol::{Queued, Submission};
use crate::providers::remote::RemoteProviders;
use crate::redact::Redactor;
use crate::skills;
use crate::tools::approval::PendingApprovals;
use crate::tools::client_files::Offer;
use crate::tools::sandbox::ProtectedPaths;

/// How long an approval raised by an unattended origin (webhook, cron,
/// heartbeat) waits before it counts as denied, unless `[tools.exec]
/// unattended_timeout` says otherwise.
pub const UNATTENDED_APPROVAL_TIMEOUT: Duration = Duration::from_secs(600);

/// What surfaces hold: a way to send ops and the bus to subscribe to.
#[derive(Clone)]
pub struct AgentHandle {
    ops: mpsc::UnboundedSender<Submission>,
    pub bus: EventBus,
    /// The skills the core uses, hot-reloaded (`/skills`, slash commands).
    pub skills: Arc<skills::Registry>,
    /// Messages accepted whose turn has not ended, across all sessions.
    outstanding: watch::Receiver<usize>,
    /// Counts a message in as it is sent (the core counts it out), so
    /// `busy()` is true from the moment `submit` returns.
    counter: Arc<watch::Sender<usize>>,
    /// The MCP servers' state as it changes (status line, `/mcp`).
    pub mcp: watch::Receiver<Vec<crate::protocol::McpServerInfo>>,
    /// Lets the MCP servers start (see `start_mcp`).
    mcp_manager: Arc<crate::mcp::McpManager>,
    /// Why no remote provider can take a turn (`/remote` and `/escalate`
    /// say so rather than run locally); `None` when one can.
    pub no_remote: Option<String>,
    /// The remote spend caps as they stand, for the status; `None` without caps.
    pub spend: Option<crate::usage::budget::SpendWatch>,
    /// The workspace's image store and `[images]` limits: where a surface
    /// puts a picture a user sends before naming it in `Op::UserMessage`.
    pub images: crate::images::Store,
}

impl AgentHandle {
    /// Sends an op; false when the core has stopped.
    pub fn submit(&self, op: Op) -> bool {
        self.submit_with(Submission::new(op))
    }

    /// Sends an op for `agent` (a bound channel, `/agent`, `--agent`, the
    /// webhook's `/api/webhook/{agent}`); false when the core has stopped.
    pub fn submit_to(&self, agent: &str, op: Op) -> bool {
        self.submit_with(Submission::to_agent(agent, op))
    }

    /// Hands a submission to the core under the id its events will carry
    /// (a surface that matches answers to its requests picks it).
    pub fn submit_with(&self, submission: Submission) -> bool {
        let message = matches!(submission.op, Op::UserMessage { .. });
        if message {
            self.counter.send_modify(|n| *n += 1);
        }
        let sent = self.ops.send(submission).is_ok();
        if message && !sent {
            self.counter.send_modify(|n| *n = n.saturating_sub(1));
        }
        sent
    }

    /// Whether any session has a turn running or queued (the scheduler
    /// defers a tick rather than stacking one behind it).
    pub fn busy(&self) -> bool {
        *self.outstanding.borrow() > 0
    }

    /// Lets the MCP servers start: a surface calls it once it is up (the
    /// TUI after its first frame); they start on their own soon after
    /// anyway.
    pub fn start_mcp(&self) {
        self.mcp_manager.open();
    }

    /// Resolves once no turn is running or queued (at once when idle, or
    /// when the core has stopped).
    pub async fn idle(&self) {
        let mut outstanding = self.outstanding.clone();
        let _ = outstanding.wait_for(|n| *n == 0).await;
    }
}

/// Starts the core on the current tokio runtime.
///
/// `workspace` must exist (see `workspace::ensure`); `allowed_paths` are the
/// canonical extra roots for file tools.
pub fn spawn(
    config: Config,
    workspace: PathBuf,
    allowed_paths: Vec<PathBuf>,
) -> (AgentHandle, JoinHandle<()>) {
    spawn_with(config, workspace, allowed_paths, RemoteProviders::default())
}

/// `spawn` with the remote providers escalation and routing may use.
pub fn spawn_with(
    config: Config,
    workspace: PathBuf,
    allowed_paths: Vec<PathBuf>,
    remote: RemoteProviders,
) -> (AgentHandle, JoinHandle<()>) {
    let protected = ProtectedPaths::new(&workspace, None, &[]);
    let redactor = Arc::new(Redactor::default());
    spawn_guarded(
        config,
        workspace,
        allowed_paths,
        remote,
        protected,
        redactor,
    )
}

/// `spawn_with`, protecting what start-up read (the config file and the
/// `.env` files, see `tools::sandbox::protected`) and redacting the
/// secret values start-up found (see `redact`).
pub fn spawn_guarded(
    config: Config,
    workspace: PathBuf,
    allowed_paths: Vec<PathBuf>,
    remote: RemoteProviders,
    protected: ProtectedPaths,
    redactor: Arc<Redactor>,
) -> (AgentHandle, JoinHandle<()>) {
    let (shared, pending) = start::shared_state(
        config,
        workspace,
        allowed_paths,
        remote,
        protected,
        redactor,
    );
    hooks::spawn_event_hooks(&shared);
    let bus = shared.bus.clone();
    let skills = shared.skills.clone();
    let no_remote = shared
        .remote
        .preferred()
        .is_none()
        .then(|| crate::routing::NO_REMOTE_REASON.to_string());
    let spend = crate::usage::budget::SpendWatch::new(
        &shared.config.remote,
        &shared.workspace,
        shared.usage_written.clone(),
    );
    let images = crate::images::Store {
        workspace: shared.workspace.clone(),
        limits: crate::images::limits(
            shared.config.images.max_side,
            shared.config.images.max_file_mb,
        ),
    };
    let mcp_status = shared.mcp.watch();
    let mcp_manager = shared.mcp.clone();
    let (tx, rx) = mpsc::unbounded_channel();
    let (busy, outstanding) = watch::channel(0usize);
    let counter = Arc::new(busy);
    let task = tokio::spawn(crate::bus::answering(
        None,
        run_core(shared, pending, rx, counter.clone()),
    ));
    (
        AgentHandle {
            ops: tx,
            bus,
            skills,
            outstanding,
            counter,
            mcp: mcp_status,
            mcp_manager,
            no_remote,
            spend,
            images,
        },
        task,
    )
}

async fn run_core(
    shared: Arc<Shared>,
    pending: PendingApprovals,
    mut ops: mpsc::UnboundedReceiver<Submission>,
    busy: Arc<watch::Sender<usize>>,
) {
    let mut sessions: HashMap<SessionId, SessionHandle> = HashMap::new();
    // Cancelled at shutdown: the running turns stop and queued ones never start.
    let shutdown = CancellationToken::new();
    while let Some(Submission {
        id: submission, op, ..
    }) = ops.recv().await
    {
        crate::bus::answer(Some(submission.clone()));
        match op {
            Op::UserMessage {
                session,
                origin,
                text,
                images,
            } => {
                let handle = sessions
                    .entry(session.clone())
                    .or_insert_with(|| start_session(&shared, session.clone(), &busy, &shutdown));
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
                let _ = handle.work.send(Work {
                    submission,
                    job: Job::Message {
                        origin,
                        text,
                        images,
                    },
                });
            }
            Op::ApprovalDecision { id, decision, by } => {
                // First answer wins; a late answer from another surface is dropped quietly.
                if !pending.resolve(&id, decision, by) {
                    tracing::debug!(%id, "approval already decided or unknown");
                }
            }
            Op::Interrupt { session } => {
                if let Some(handle) = sessions.get(&session) {
                    handle.interrupt();
                }
            }
            Op::Command {
                session,
                command: Command::MemorySearch { query },
            } => search_memory(&shared, submission, session, query),
            Op::Command {
                session,
                command: Command::ListApprovals,
            } => approvals::list(&shared, &session),
            Op::Command {
                session,
                command: Command::RevokeApproval { id },
            } => approvals::revoke(&shared, &session, &id),
            Op::Command {
                session,
                command:
                    command @ (Command::ClientFiles { .. }
                    | Command::WorkIn { .. }
                    | Command::SessionMcp { .. }),
            } => client_session(&shared, &session, command),
            Op::FileAnswer { id, content, error } => {
                shared.client_files.answer(&id, content, error)
            }
            Op::Command { session, command } => {
                let handle = sessions
                    .entry(session.clone())
                    .or_insert_with(|| start_session(&shared, session.clone(), &busy, &shutdown));
                let _ = handle.work.send(Work {
                    submission,
                    job: Job::Command(command),
                });
            }
            Op::Shutdown => break,
        }
    }
    shutdown.cancel();
    stop_core(&shared, ops, &busy, sessions).await;
}

/// After `Op::Shutdown`: what was sent later never runs, every session's
/// running turn ends, slots are saved and the MCP servers stopped.
async fn stop_core(
    shared: &Shared,
    mut ops: mpsc::UnboundedReceiver<Submission>,
    busy: &watch::Sender<usize>,
    mut sessions: HashMap<SessionId, SessionHandle>,
) {
    // Messages sent after the shutdown never run: count them out, so
    // `idle()` resolves. Closed first: later sends fail (and say so).
    ops.close();
    while let Ok(Submission { op, .. }) = ops.try_recv() {
        if matches!(op, Op::UserMessage { .. }) {
            busy.send_modify(|n| *n = n.saturating_sub(1));
        }
    }
    for (_, handle) in sessions.drain() {
        drop(handle.work);
        let _ = handle.task.await;
    }
    // After every turn has stopped, so each slot holds its final state.
    slots::save_all(&shared.main, &shared.slot_owners).await;
    // No server outlives egirl.
    shared.mcp.shutdown().await;
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
