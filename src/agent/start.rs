//! Building the state the core shares: first what every agent of the
//! process shares ([`Common`]: the bus, the redactor, the approvals
//! waiting, the editor's files, the remote providers, the local pools and
//! the MCP servers), then each agent's own ([`Shared`]), when it is first
//! used, in start-up order: the router, the usage log, approvals, the
//! local pools, skills, memory, checkpoints.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use super::memory::start_memory;
use super::shared::Shared;
use super::slots;
use crate::bus::EventBus;
use crate::config::{Config, DEFAULT_AGENT, LocalConfig};
use crate::mcp::McpManager;
use crate::memory::Memory;
use crate::memory::watch::MemoryWatcher;
use crate::providers::endpoints::{LocalRole, Pool};
use crate::providers::remote::RemoteProviders;
use crate::redact;
use crate::redact::Redactor;
use crate::routing::Router;
use crate::skills;
use crate::tools::approval::{Approver, PendingApprovals};
use crate::tools::checkpoints::Checkpoints;
use crate::tools::client_files::ClientFiles;
use crate::tools::sandbox::ProtectedPaths;

/// Each agent's skills, loaded on first use by the core or a surface
/// (`AgentHandle::skills_for`), whichever asks first.
pub(crate) type SkillsCache = Arc<Mutex<HashMap<String, Arc<skills::Registry>>>>;

/// What every agent of the process shares.
pub(super) struct Common {
    /// The base config (`for_agent` gives each agent's).
    pub config: Arc<Config>,
    /// Unstamped: each agent's handle on it stamps its name.
    pub bus: EventBus,
    pub redactor: Arc<Redactor>,
    /// One pool: a decision resolves whichever agent's request it answers.
    pub pending: PendingApprovals,
    pub client_files: ClientFiles,
    remote: RemoteProviders,
    /// Started once with every server; each agent is offered its own.
    pub mcp: Arc<McpManager>,
    /// By endpoints: agents whose endpoints are the same share a pool
    /// (its permits, its sessions' placement).
    pools: Mutex<HashMap<String, Arc<Pool>>>,
    pub slot_owners: Arc<slots::SlotOwners>,
    /// Built on the default agent's workspace.
    protected: ProtectedPaths,
    allowed_paths: Vec<PathBuf>,
    /// The default agent's, as start-up made it (`--workspace`).
    default_workspace: PathBuf,
    pub skills: SkillsCache,
}

impl Common {
    pub fn new(
        config: Config,
        workspace: PathBuf,
        allowed_paths: Vec<PathBuf>,
        remote: RemoteProviders,
        protected: ProtectedPaths,
        redactor: Arc<Redactor>,
    ) -> Arc<Self> {
        let bus = event_bus(&redactor);
        // In the background: the first frame never waits for a server.
        let mcp = McpManager::start_deferred(
            &config.mcp,
            &workspace,
            crate::tools::sandbox::env::command_env(
                &config.tools.exec.env_passthrough,
                protected.env_files(),
            ),
            bus.clone(),
        );
        Arc::new(Self {
            config: Arc::new(config),
            bus,
            redactor,
            pending: PendingApprovals::default(),
            client_files: ClientFiles::default(),
            remote,
            mcp,
            pools: Mutex::new(HashMap::new()),
            slot_owners: Arc::default(),
            protected,
            allowed_paths,
            default_workspace: workspace,
            skills: Arc::default(),
        })
    }

    /// Every pool an agent built so far (slots are saved on each at shutdown).
    pub fn pools(&self) -> Vec<Arc<Pool>> {
        lock(&self.pools).values().cloned().collect()
    }

    /// The pool of `config`'s endpoints, shared with every agent using them.
    fn pool(&self, role: LocalRole, config: &LocalConfig) -> Arc<Pool> {
        let key = format!("{}|{}", config.model, config.endpoint_list().join(" "));
        // Confidence is only worth its bytes when a weak answer can go
        // somewhere; one pool serves every agent, so it asks when any may
        // escalate (routing is the base config's for every agent).
        let logprobs = !self.remote.is_empty() && self.config.routing.escalation_threshold > 0.0;
        lock(&self.pools)
            .entry(key)
            .or_insert_with(|| Arc::new(Pool::new(role, config, logprobs)))
            .clone()
    }

    /// The agent's workspace: the default's as start-up made it, another's
    /// created from the templates on first use.
    fn workspace(&self, name: &str) -> Result<PathBuf, String> {
        if name == DEFAULT_AGENT {
            return Ok(self.default_workspace.clone());
        }
        let path = self.config.agent_workspace(name);
        let (workspace, created) =
            crate::workspace::ensure(&path).map_err(|e| format!("agent `{name}`: {e:#}"))?;
        if !created.is_empty() {
            tracing::info!(
                "created agent {name}'s workspace {} ({})",
                workspace.display(),
                created.join(", ")
            );
        }
        Ok(workspace)
    }

    /// The agent's protected paths: the process's, its own workspace's,
    /// and every other agent's workspace.
    fn protected_for(&self, name: &str, workspace: &Path) -> ProtectedPaths {
        let others: Vec<(String, PathBuf)> = self
            .config
            .agent_names()
            .into_iter()
            .filter(|other| other != name)
            .map(|other| {
                let path = match other.as_str() {
                    DEFAULT_AGENT => self.default_workspace.clone(),
                    _ => self.config.agent_workspace(&other),
                };
                (other, path)
            })
            .collect();
        for (_, path) in &others {
            reserve_if_reachable(path, &self.allowed_paths);
        }
        self.protected
            .clone()
            .with_workspace(workspace)
            .with_other_workspaces(others.iter().map(|(a, p)| (a.as_str(), p.as_path())))
    }
}

/// Makes another agent's workspace, empty, when it does not exist yet and
/// lies in an allowed path: commands see an existing one as an empty
/// read-only directory (`sandbox::mounts`), but a missing one could be
/// made by this agent's commands, with a SOUL.md, skills or memory of
/// their own, for the other agent to load as its own on its first use.
/// Its templates are written then, beside nothing.
fn reserve_if_reachable(workspace: &Path, allowed_paths: &[PathBuf]) {
    if std::fs::symlink_metadata(workspace).is_ok() {
        return;
    }
    let reachable = allowed_paths.iter().any(|allowed| {
        crate::tools::sandbox::protected::canonical(workspace).starts_with(allowed)
            || workspace.starts_with(allowed)
    });
    if !reachable {
        return;
    }
    use std::os::unix::fs::DirBuilderExt;
    let made = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(workspace);
    if let Err(e) = made {
        tracing::warn!("cannot make {}: {e}", workspace.display());
    }
}

/// The agent's skills, from the cache or loaded now.
pub(crate) fn skills_of(
    cache: &SkillsCache,
    name: &str,
    config: &Config,
    workspace: &Path,
) -> Arc<skills::Registry> {
    lock(cache)
        .entry(name.to_string())
        .or_insert_with(|| Arc::new(skills::Registry::load(&config.skills, workspace)))
        .clone()
}

/// The agent `name`'s state, built now (its workspace created when
/// missing); one line saying why not for an unknown agent or a workspace
/// that cannot be made.
pub(super) fn agent_state(common: &Arc<Common>, name: &str) -> Result<Arc<Shared>, String> {
    let Some(mut config) = common.config.for_agent(name) else {
        return Err(unknown_agent(&common.config, name));
    };
    let workspace = common.workspace(name)?;
    config.workspace.path = workspace.display().to_string();
    crate::tools::policy::deny_servers_left_out(&common.config, &mut config);
    let bus = common
        .bus
        .for_agent(common.config.has_agents().then_some(name));
    // `remote = false`: never remote, never escalated, whatever keys are set.
    let local_only = common
        .config
        .agents
        .get(name)
        .is_some_and(|entry| entry.remote == Some(false));
    let remote = match local_only {
        true => RemoteProviders::default(),
        false => common.remote.clone(),
    };
    let router = router(&config);
    let (written, usage_written) = tokio::sync::watch::channel(0);
    crate::usage::spawn_usage_log_counted(&bus, &workspace, written);
    let approver = Arc::new(Approver::new(
        bus.clone(),
        common.pending.clone(),
        config.tools.exec.clone(),
        workspace.join(".egirl").join("approvals.toml"),
        config.tools.exec.unattended_timeout.0,
    ));
    let main = common.pool(LocalRole::Main, &config.local);
    let fast_config = config.local.fast_role();
    let fast = fast_config
        .as_ref()
        .map(|cfg| common.pool(LocalRole::Fast, cfg));
    let skills = skills_of(&common.skills, name, &config, &workspace);
    let skills_watcher = if config.skills.watch {
        skills::watch::start(&skills)
            .map_err(|e| tracing::warn!("skills will not hot-reload: {e:#}"))
            .ok()
    } else {
        None
    };
    let memory = start_memory(&config, &workspace, &remote, &bus, &common.redactor);
    let memory_watcher = memory_watcher(&config, &memory);
    let checkpoints = checkpoints(&config, &workspace);
    let protected = common.protected_for(name, &workspace);
    let shared = Arc::new(Shared {
        agent: name.to_string(),
        checkpoints,
        mcp: common.mcp.clone(),
        main,
        fast,
        fast_config,
        fast_limits: OnceCell::new(),
        remote,
        router,
        skills,
        _skills_watcher: skills_watcher,
        config: Arc::new(config),
        workspace,
        allowed_paths: common.allowed_paths.clone(),
        protected: Arc::new(protected),
        bus,
        approver,
        memory,
        _memory_watcher: memory_watcher,
        system_prompt: Default::default(),
        limits: OnceCell::new(),
        server_counts_tokens: AtomicBool::new(true),
        slot_owners: common.slot_owners.clone(),
        redactor: common.redactor.clone(),
        usage_written,
        client_files: common.client_files.for_another_agent(),
        tool_lists: Default::default(),
    });
    super::hooks::spawn_event_hooks(&shared);
    Ok(shared)
}

/// The one line an op for an agent the config does not declare gets.
pub(super) fn unknown_agent(config: &Config, name: &str) -> String {
    format!(
        "no agent `{name}`: the config declares {}",
        config.agent_names().join(", ")
    )
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Start-up checks the rules and exits 2 on a bad one; a caller that
/// skipped that check gets the rules left out rather than a crash.
fn router(config: &Config) -> Router {
    Router::new(&config.routing).unwrap_or_else(|e| {
        tracing::error!("[routing] rules ignored: {e}");
        let without_rules = crate::config::RoutingConfig {
            always_local: Vec::new(),
            always_remote: Vec::new(),
            ..config.routing.clone()
        };
        Router::new(&without_rules).expect("empty rule lists always parse")
    })
}

fn event_bus(redactor: &Arc<Redactor>) -> EventBus {
    if redactor.is_empty() {
        EventBus::new()
    } else {
        EventBus::new().with_guard(redact::event_guard(redactor.clone()))
    }
}

fn memory_watcher(config: &Config, memory: &Arc<Memory>) -> Option<MemoryWatcher> {
    config
        .memory
        .watch
        .then(|| match crate::memory::watch::spawn(memory.clone()) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!("memory is re-indexed before searches only: {e:#}");
                None
            }
        })
        .flatten()
}

fn checkpoints(config: &Config, workspace: &Path) -> Checkpoints {
    let checkpoints = Checkpoints::new(workspace, &config.checkpoints);
    // Checkpoints past their age or the size budget go at start too.
    let pruning = checkpoints.clone();
    tokio::task::spawn_blocking(move || pruning.prune(std::time::SystemTime::now()));
    checkpoints
}
