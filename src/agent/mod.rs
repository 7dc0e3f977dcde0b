//! The agent core: one task that takes `Op`s, one worker task per session
//! that runs its turns in order, and events out through the bus. It never
//! knows which surface is listening.
//!
//! Its modules import one way only, each from those before it:
//!
//! 1. leaves: `context` (prompts), `window`, `trim`, `redact`,
//!    `unattended` (then `tool_list`, the tools offered), `slots`, `summary`;
//! 2. `shared` (the state every worker shares), then `local` (the local
//!    roles), `route` (where a turn runs), `pin` (a session pinned to a
//!    model), `memory`, `approvals` (`/approvals`), `rewind`;
//! 3. `session` (transcript, history, `Turn`), then `usage`, `tool_calls`,
//!    `models` (`/model`'s commands), `vision` (who sees a turn's images);
//! 4. `steps` (one request), then `compact`, then `turn` (the loop);
//! 5. `start` (what the agents share, and each agent's `shared`),
//!    `worker` (a session's task), `agents` (which agent an op is for,
//!    the live sessions), `dispatch` (an op to its agent), and this file (the core's task and the handle
//!    surfaces hold).

mod agents;
mod approvals;
mod budget;
mod compact;
mod context;
mod dispatch;
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
mod tool_list;
mod trim;
mod turn;
mod unattended;
mod usage;
mod vision;
mod window;
mod worker;

use agents::Agents;
use dispatch::{Routed, route};
use shared::Shared;

pub use context::{
    STATIC_SYSTEM, system_prompt, system_prompt_with_skills, user_message, user_message_with_skill,
};
pub use slots::file_name as slot_file_name;
pub use unattended::{HEARTBEAT_OK, heartbeat_reply};
pub use window::{DoesNotFit, Fit, fit};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::bus::EventBus;
use crate::config::{Config, DEFAULT_AGENT};
use crate::protocol::{AgentName, Op, Submission};
use crate::providers::remote::RemoteProviders;
use crate::redact::Redactor;
use crate::skills;
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
    /// The default agent's image store and `[images]` limits: where a
    /// surface puts a picture a user sends before naming it in
    /// `Op::UserMessage` (another agent's: `images_for`).
    pub images: crate::images::Store,
    per_agent: PerAgent,
}

/// What the handle needs to answer for any agent.
#[derive(Clone)]
struct PerAgent {
    /// The base config.
    config: Arc<Config>,
    /// Each agent's skills, shared with the core.
    skills: start::SkillsCache,
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

    /// The agents of the config, `default` first.
    pub fn agents(&self) -> Vec<AgentName> {
        self.per_agent.config.agent_names()
    }

    /// The agent's image store (its workspace's); `None` for an agent the
    /// config does not declare.
    pub fn images_for(&self, agent: &str) -> Option<crate::images::Store> {
        if agent == DEFAULT_AGENT {
            return Some(self.images.clone());
        }
        let config = self.per_agent.config.for_agent(agent)?;
        let workspace = self.per_agent.config.agent_workspace(agent);
        Some(images_store(&config, workspace))
    }

    /// The agent's skills (slash commands, `/skills`), loaded on first use
    /// (its workspace made then, as its first op would); `None` for an
    /// agent the config does not declare or whose workspace cannot be made.
    pub fn skills_for(&self, agent: &str) -> Option<Arc<skills::Registry>> {
        if agent == DEFAULT_AGENT {
            return Some(self.skills.clone());
        }
        let config = self.per_agent.config.for_agent(agent)?;
        let path = self.per_agent.config.agent_workspace(agent);
        let (workspace, _) = crate::workspace::ensure(&path)
            .map_err(|e| tracing::warn!("agent {agent}'s skills: {e:#}"))
            .ok()?;
        Some(start::skills_of(
            &self.per_agent.skills,
            agent,
            &config,
            &workspace,
        ))
    }

    /// The number of turns running or queued, as it changes (a daemon
    /// hands memory back after a burst of them).
    pub fn outstanding(&self) -> watch::Receiver<usize> {
        self.outstanding.clone()
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
///
/// `config` is the base config: the core builds each agent's from it
/// (`Config::for_agent`) on the agent's first op; `workspace` is the
/// default agent's, built at once.
pub fn spawn_guarded(
    config: Config,
    workspace: PathBuf,
    allowed_paths: Vec<PathBuf>,
    remote: RemoteProviders,
    protected: ProtectedPaths,
    redactor: Arc<Redactor>,
) -> (AgentHandle, JoinHandle<()>) {
    let common = start::Common::new(
        config,
        workspace,
        allowed_paths,
        remote,
        protected,
        redactor,
    );
    let shared = match start::agent_state(&common, DEFAULT_AGENT) {
        Ok(shared) => shared,
        // The default agent is always declared and its workspace is the
        // one start-up made: only an unwritable `.egirl` gets here.
        Err(e) => panic!("the default agent cannot start: {e}"),
    };
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
    let images = images_store(&shared.config, shared.workspace.clone());
    let mcp_status = common.mcp.watch();
    let mcp_manager = common.mcp.clone();
    let (tx, rx) = mpsc::unbounded_channel();
    let (busy, outstanding) = watch::channel(0usize);
    let counter = Arc::new(busy);
    let per_agent = PerAgent {
        config: common.config.clone(),
        skills: common.skills.clone(),
    };
    let agents = Agents::new(common, shared);
    let task = tokio::spawn(crate::bus::answering(
        None,
        run_core(agents, rx, counter.clone()),
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
            per_agent,
        },
        task,
    )
}

fn images_store(config: &Config, workspace: PathBuf) -> crate::images::Store {
    crate::images::Store {
        workspace,
        limits: crate::images::limits(config.images.max_side, config.images.max_file_mb),
    }
}

async fn run_core(
    mut agents: Agents,
    mut ops: mpsc::UnboundedReceiver<Submission>,
    busy: Arc<watch::Sender<usize>>,
) {
    // Cancelled at shutdown: the running turns stop and queued ones never start.
    let shutdown = CancellationToken::new();
    while let Some(Submission {
        id: submission,
        op,
        agent,
    }) = ops.recv().await
    {
        crate::bus::answer(Some(submission.clone()));
        match op {
            Op::ApprovalDecision { id, decision, by } => {
                // First answer wins; a late answer from another surface is dropped quietly.
                if !agents.common.pending.resolve(&id, decision, by) {
                    tracing::debug!(%id, "approval already decided or unknown");
                }
            }
            Op::FileAnswer { id, content, error } => {
                agents.common.client_files.answer(&id, content, error)
            }
            Op::Shutdown => break,
            op => {
                let routed = Routed {
                    submission,
                    agent,
                    op,
                };
                route(&mut agents, routed, &busy, &shutdown);
            }
        }
    }
    shutdown.cancel();
    stop_core(agents, ops, &busy).await;
}

/// After `Op::Shutdown`: what was sent later never runs, every agent's
/// sessions end, slots are saved and the MCP servers stopped.
async fn stop_core(
    agents: Agents,
    mut ops: mpsc::UnboundedReceiver<Submission>,
    busy: &watch::Sender<usize>,
) {
    // Messages sent after the shutdown never run: count them out, so
    // `idle()` resolves. Closed first: later sends fail (and say so).
    ops.close();
    while let Ok(Submission { op, .. }) = ops.try_recv() {
        if matches!(op, Op::UserMessage { .. }) {
            busy.send_modify(|n| *n = n.saturating_sub(1));
        }
    }
    agents.stop().await;
}
