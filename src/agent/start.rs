//! Building the state the core shares, in start-up order: the router, the
//! bus (guarded by the redactor), approvals, the local pools, skills,
//! memory, checkpoints and the MCP servers (started in the background).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use tokio::sync::OnceCell;

use super::memory::start_memory;
use super::shared::Shared;
use super::slots;
use crate::bus::EventBus;
use crate::config::{Config, LocalConfig};
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
use crate::tools::sandbox::ProtectedPaths;

/// The shared state and the approvals still waiting for an answer (the
/// core resolves them as decisions arrive).
pub(super) fn shared_state(
    config: Config,
    workspace: PathBuf,
    allowed_paths: Vec<PathBuf>,
    remote: RemoteProviders,
    protected: ProtectedPaths,
    redactor: Arc<Redactor>,
) -> (Arc<Shared>, PendingApprovals) {
    let router = router(&config);
    let bus = event_bus(&redactor);
    let (written, usage_written) = tokio::sync::watch::channel(0);
    crate::usage::spawn_usage_log_counted(&bus, &workspace, written);
    let pending = PendingApprovals::default();
    let approver = Arc::new(Approver::new(
        bus.clone(),
        pending.clone(),
        config.tools.exec.clone(),
        workspace.join(".egirl").join("approvals.toml"),
        config.tools.exec.unattended_timeout.0,
    ));
    let (main, fast, fast_config) = local_pools(&config, &remote);
    let skills = Arc::new(skills::Registry::load(&config.skills, &workspace));
    let skills_watcher = if config.skills.watch {
        skills::watch::start(&skills)
            .map_err(|e| tracing::warn!("skills will not hot-reload: {e:#}"))
            .ok()
    } else {
        None
    };
    let memory = start_memory(&config, &workspace, &remote, &bus, &redactor);
    let memory_watcher = memory_watcher(&config, &memory);
    let checkpoints = checkpoints(&config, &workspace);
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
    let shared = Arc::new(Shared {
        checkpoints,
        mcp,
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
        allowed_paths,
        protected: Arc::new(protected),
        bus,
        approver,
        memory,
        _memory_watcher: memory_watcher,
        limits: OnceCell::new(),
        server_counts_tokens: AtomicBool::new(true),
        slot_owners: slots::SlotOwners::default(),
        redactor,
        usage_written,
        client_files: Default::default(),
    });
    (shared, pending)
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

/// `[local]`'s pool, and `[local.fast]`'s when configured.
fn local_pools(
    config: &Config,
    remote: &RemoteProviders,
) -> (Pool, Option<Pool>, Option<LocalConfig>) {
    // Confidence is only worth its bytes when a weak answer can go somewhere.
    let logprobs = !remote.is_empty() && config.routing.escalation_threshold > 0.0;
    let main = Pool::new(LocalRole::Main, &config.local, logprobs);
    let fast_config = config.local.fast_role();
    let fast = fast_config
        .as_ref()
        .map(|cfg| Pool::new(LocalRole::Fast, cfg, logprobs));
    (main, fast, fast_config)
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
