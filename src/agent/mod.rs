//! The agent core: one task that takes `Op`s, one worker task per session
//! that runs its turns in order, and events out through the bus. It never
//! knows which surface is listening.

mod compact;
mod context;
mod local;
mod memory;
mod redact;
pub mod rewind;
mod route;
mod slots;
mod steps;
mod trim;
mod turn;
mod unattended;
mod window;

use memory::{search_memory, start_memory};

pub use context::{
    STATIC_SYSTEM, system_prompt, system_prompt_with_skills, user_message, user_message_with_skill,
};
pub use slots::file_name as slot_file_name;
pub use unattended::{HEARTBEAT_OK, heartbeat_reply};
pub use window::{DoesNotFit, Fit, fit};

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OnceCell, mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::bus::EventBus;
use crate::config::{Config, LocalConfig, Redactor};
use crate::memory::Memory;
use crate::memory::watch::MemoryWatcher;
use crate::protocol::{
    Command, ErrorEvent, EventKind, Op, Origin, Queued, SessionId, Submission, SubmissionId,
    TurnEnded,
};
use crate::providers::endpoints::{LocalRole, Pool};
use crate::providers::remote::RemoteProviders;
use crate::routing::Router;
use crate::skills;
use crate::tools::approval::{Approver, PendingApprovals};
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
}

impl AgentHandle {
    /// Sends an op; false when the core has stopped.
    pub fn submit(&self, op: Op) -> bool {
        self.submit_with(Submission::new(op))
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

/// What the window knows about the local server, read once from /props.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ServerLimits {
    pub n_ctx: u64,
    pub total_slots: u32,
    /// `tool_format = "auto"` against a chat template that drops native
    /// tools: put them in the system prompt (Qwen3 format) instead.
    pub tools_in_prompt: bool,
}

/// State every session worker shares.
pub(crate) struct Shared {
    pub config: Config,
    pub workspace: PathBuf,
    pub allowed_paths: Vec<PathBuf>,
    /// Paths the model may never change or read.
    pub protected: Arc<ProtectedPaths>,
    /// `[local]`: the main model's endpoints.
    pub main: Pool,
    /// `[local.fast]`, when configured (see `local`).
    pub fast: Option<Pool>,
    pub fast_config: Option<LocalConfig>,
    pub fast_limits: OnceCell<ServerLimits>,
    /// The remote providers with keys, in preference order (may be none).
    pub remote: RemoteProviders,
    pub router: Router,
    /// The loaded skills; each turn takes the current snapshot.
    pub skills: Arc<skills::Registry>,
    /// Reloads `skills` when a SKILL.md changes; stops when dropped.
    _skills_watcher: Option<skills::watch::Watcher>,
    pub bus: EventBus,
    pub approver: Arc<Approver>,
    /// The memory index, synced at start, on file changes and before searches.
    pub memory: Arc<Memory>,
    /// Re-indexes memory on file changes while the core runs.
    _memory_watcher: Option<MemoryWatcher>,
    pub limits: OnceCell<ServerLimits>,
    /// The session whose cache each slot holds, saved at shutdown.
    slot_owners: slots::SlotOwners,
    /// Cleared when the local server turns out to have no /tokenize or
    /// /apply-template (vLLM, Ollama): estimates from then on.
    pub server_counts_tokens: AtomicBool,
    /// Secret values out of what the core stores, sends and shows.
    pub redactor: Arc<Redactor>,
    /// The file tools' copies for `/rewind` (`.egirl/checkpoints/`).
    pub checkpoints: crate::tools::checkpoints::Checkpoints,
    /// The MCP servers, started in the background, stopped at shutdown.
    pub mcp: Arc<crate::mcp::McpManager>,
}

impl Shared {
    /// The main role's limits.
    pub async fn limits(&self) -> ServerLimits {
        self.limits_for(LocalRole::Main).await
    }

    /// Sessions get slots round-robin per endpoint (the session's ordinal
    /// there) so the TUI and Discord keep separate KV caches where the
    /// server has several. With one slot no `id_slot` is sent (any
    /// OpenAI-compatible server takes the request); its cache is still slot
    /// 0's for saving and restoring.
    fn assign_slot(&self, session: &str, total_slots: u32) -> Option<u32> {
        // Round-robin requests (a balancer's view) cannot keep a slot: the
        // server picks the slot whose cache is most like the prompt.
        if self.config.local.balance == crate::config::Balance::RoundRobin {
            return None;
        }
        let (_, ordinal) = self.main.place(session);
        (total_slots > 1).then(|| (ordinal % total_slots as usize) as u32)
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
/// secret values start-up found (see `config::redact`).
pub fn spawn_guarded(
    config: Config,
    workspace: PathBuf,
    allowed_paths: Vec<PathBuf>,
    remote: RemoteProviders,
    protected: ProtectedPaths,
    redactor: Arc<Redactor>,
) -> (AgentHandle, JoinHandle<()>) {
    // Start-up checks the rules and exits 2 on a bad one; a caller that
    // skipped that check gets the rules left out rather than a crash.
    let router = Router::new(&config.routing).unwrap_or_else(|e| {
        tracing::error!("[routing] rules ignored: {e}");
        let without_rules = crate::config::RoutingConfig {
            always_local: Vec::new(),
            always_remote: Vec::new(),
            ..config.routing.clone()
        };
        Router::new(&without_rules).expect("empty rule lists always parse")
    });
    let bus = if redactor.is_empty() {
        EventBus::new()
    } else {
        EventBus::new().with_guard(redact::event_guard(redactor.clone()))
    };
    crate::tracking::spawn_usage_log(&bus, &workspace);
    let pending = PendingApprovals::default();
    let approver = Arc::new(Approver::new(
        bus.clone(),
        pending.clone(),
        config.tools.exec.clone(),
        workspace.join(".egirl").join("approvals.toml"),
        config.tools.exec.unattended_timeout.0,
    ));
    // Confidence is only worth its bytes when a weak answer can go somewhere.
    let logprobs = !remote.is_empty() && config.routing.escalation_threshold > 0.0;
    let main = Pool::new(LocalRole::Main, &config.local, logprobs);
    let fast_config = config.local.fast_role();
    let fast = fast_config
        .as_ref()
        .map(|cfg| Pool::new(LocalRole::Fast, cfg, logprobs));
    let skills = Arc::new(skills::Registry::load(&config.skills, &workspace));
    let skills_watcher = if config.skills.watch {
        skills::watch::start(&skills)
            .map_err(|e| tracing::warn!("skills will not hot-reload: {e:#}"))
            .ok()
    } else {
        None
    };
    let memory = start_memory(&config, &workspace, &remote, &bus, &redactor);
    let memory_watcher = config
        .memory
        .watch
        .then(|| match crate::memory::watch::spawn(memory.clone()) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!("memory is re-indexed before searches only: {e:#}");
                None
            }
        })
        .flatten();
    let checkpoints = crate::tools::checkpoints::Checkpoints::new(&workspace, &config.checkpoints);
    // Checkpoints past their age or the size budget go at start too.
    let pruning = checkpoints.clone();
    tokio::task::spawn_blocking(move || pruning.prune(std::time::SystemTime::now()));
    // In the background: the first frame never waits for a server.
    let mcp = crate::mcp::McpManager::start_deferred(
        &config.mcp,
        &workspace,
        crate::tools::sandbox::env::command_env(
            &config.tools.exec.env_passthrough,
            protected.env_files(),
        ),
        bus.clone(),
    );
    let mcp_status = mcp.watch();
    let mcp_manager = mcp.clone();
    let shared = Arc::new(Shared {
        checkpoints,
        mcp,
        main,
        fast,
        fast_config,
        fast_limits: OnceCell::new(),
        remote,
        router,
        skills: skills.clone(),
        _skills_watcher: skills_watcher,
        config,
        workspace,
        allowed_paths,
        protected: Arc::new(protected),
        bus: bus.clone(),
        approver,
        memory,
        _memory_watcher: memory_watcher,
        limits: OnceCell::new(),
        server_counts_tokens: AtomicBool::new(true),
        slot_owners: slots::SlotOwners::default(),
        redactor,
    });
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
        },
        task,
    )
}

/// One submission's work for a session's worker, with its id.
struct Work {
    submission: SubmissionId,
    job: Job,
}

enum Job {
    Message { origin: Origin, text: String },
    Command(Command),
}

struct SessionHandle {
    work: mpsc::UnboundedSender<Work>,
    /// Messages sent to the worker whose turn has not ended.
    outstanding: Arc<AtomicUsize>,
    cancel: Arc<Mutex<CancellationToken>>,
    task: JoinHandle<()>,
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
    while let Some(Submission { id: submission, op }) = ops.recv().await {
        crate::bus::answer(Some(submission.clone()));
        match op {
            Op::UserMessage {
                session,
                origin,
                text,
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
                    job: Job::Message { origin, text },
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
                    lock(&handle.cancel).cancel();
                }
            }
            Op::Command {
                session,
                command: Command::MemorySearch { query },
            } => search_memory(&shared, submission, session, query),
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
    slots::save_all(&shared).await;
    // No server outlives egirl.
    shared.mcp.shutdown().await;
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn start_session(
    shared: &Arc<Shared>,
    id: SessionId,
    busy: &Arc<watch::Sender<usize>>,
    shutdown: &CancellationToken,
) -> SessionHandle {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let outstanding = Arc::new(AtomicUsize::new(0));
    let cancel = Arc::new(Mutex::new(CancellationToken::new()));
    let task = {
        let (shared, outstanding, cancel) = (shared.clone(), outstanding.clone(), cancel.clone());
        let busy = busy.clone();
        let shutdown = shutdown.clone();
        let turn_over = move || {
            outstanding.fetch_sub(1, Ordering::SeqCst);
            busy.send_modify(|n| *n = n.saturating_sub(1));
        };
        tokio::spawn(crate::bus::answering(None, async move {
            let mut session: Option<turn::Session> = None;
            while let Some(Work { submission, job }) = rx.recv().await {
                crate::bus::answer(Some(submission));
                match job {
                    Job::Message { origin, text } => {
                        if shutdown.is_cancelled() {
                            // Queued when egirl stopped: never started.
                            shared.bus.emit(
                                &id,
                                &origin,
                                EventKind::TurnEnded(TurnEnded { interrupted: true }),
                            );
                            turn_over();
                            continue;
                        }
                        let token = shutdown.child_token();
                        *lock(&cancel) = token.clone();
                        if session.is_none() {
                            match turn::Session::open(&shared, &id).await {
                                Ok(s) => session = Some(s),
                                Err(e) => {
                                    shared.bus.emit(
                                        &id,
                                        &origin,
                                        EventKind::Error(ErrorEvent {
                                            message: format!("{e:#}"),
                                        }),
                                    );
                                    shared.bus.emit(
                                        &id,
                                        &origin,
                                        EventKind::TurnEnded(TurnEnded { interrupted: false }),
                                    );
                                    turn_over();
                                    continue;
                                }
                            }
                        }
                        if let Some(s) = session.as_mut() {
                            turn::run_turn(&shared, s, origin, text, token).await;
                        }
                        turn_over();
                    }
                    Job::Command(Command::Fork) => rewind::fork(&shared, &id),
                    Job::Command(Command::Rewind { turn }) => {
                        // The next turn reads the history as the rewind left it.
                        if rewind::rewind(&shared, &id, turn)
                            && let Some(s) = session.as_mut()
                            && let Err(e) = s.reload(&shared)
                        {
                            tracing::warn!("session {id} reopens at its next turn: {e:#}");
                            session = None;
                        }
                    }
                    Job::Command(Command::Compact { focus, origin }) => {
                        if session.is_none() {
                            match turn::Session::open(&shared, &id).await {
                                Ok(s) => session = Some(s),
                                Err(e) => {
                                    shared.bus.emit(
                                        &id,
                                        &origin,
                                        EventKind::Error(ErrorEvent {
                                            message: format!("{e:#}"),
                                        }),
                                    );
                                    continue;
                                }
                            }
                        }
                        let token = shutdown.child_token();
                        *lock(&cancel) = token.clone();
                        if let Some(s) = session.as_mut() {
                            compact::now(&shared, s, origin, focus, token).await;
                        }
                    }
                    Job::Command(command) => {
                        if let Some(s) = session.as_mut() {
                            s.apply(command);
                        } else if let Ok(mut s) = turn::Session::open(&shared, &id).await {
                            s.apply(command);
                            session = Some(s);
                        }
                    }
                }
            }
        }))
    };
    SessionHandle {
        work: tx,
        outstanding,
        cancel,
        task,
    }
}
