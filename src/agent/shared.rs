//! The state every session worker of one agent shares: its config, the
//! local pools and remote providers, the router, skills, memory, approvals
//! and the bus stamping its name. Built when the agent is first used (see
//! `start`); the methods that ask a local model are in `local`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use tokio::sync::OnceCell;

use super::slots;
use crate::bus::EventBus;
use crate::config::{Config, LocalConfig};
use crate::memory::Memory;
use crate::memory::watch::MemoryWatcher;
use crate::providers::endpoints::{LocalRole, Pool};
use crate::providers::remote::RemoteProviders;
use crate::redact::Redactor;
use crate::routing::Router;
use crate::skills;
use crate::tools::approval::Approver;
use crate::tools::sandbox::ProtectedPaths;

/// What the window knows about the local server, read once from /props.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ServerLimits {
    pub n_ctx: u64,
    pub total_slots: u32,
    /// `tool_format = "auto"` against a chat template that drops native
    /// tools: put them in the system prompt (Qwen3 format) instead.
    pub tools_in_prompt: bool,
    /// The model takes images: the server says so (`/props`
    /// `modalities.vision`, Ollama's capabilities) or the role's config
    /// has `vision = true`.
    pub vision: bool,
}

/// State every session worker of one agent shares.
pub(crate) struct Shared {
    /// The agent's name (`default` without `[agents]`).
    pub agent: String,
    /// Behind an `Arc`: each tool batch shares it rather than copying it.
    pub config: Arc<Config>,
    pub workspace: PathBuf,
    pub allowed_paths: Vec<PathBuf>,
    /// Paths the model may never change or read.
    pub protected: Arc<ProtectedPaths>,
    /// `[local]`: the main model's endpoints (shared with every agent
    /// using the same ones).
    pub main: Arc<Pool>,
    /// `[local.fast]`, when configured (see `local`).
    pub fast: Option<Arc<Pool>>,
    pub fast_config: Option<LocalConfig>,
    pub fast_limits: OnceCell<ServerLimits>,
    /// The remote providers with keys, in preference order (may be none).
    pub remote: RemoteProviders,
    pub router: Router,
    /// The loaded skills; each turn takes the current snapshot.
    pub skills: Arc<skills::Registry>,
    /// Reloads `skills` when a SKILL.md changes; stops when dropped.
    pub(super) _skills_watcher: Option<skills::watch::Watcher>,
    pub bus: EventBus,
    pub approver: Arc<Approver>,
    /// The memory index, synced at start, on file changes and before searches.
    pub memory: Arc<Memory>,
    /// Re-indexes memory on file changes while the core runs.
    pub(super) _memory_watcher: Option<MemoryWatcher>,
    /// The system prompt, kept while the memory watcher vouches for the
    /// workspace's files.
    pub(super) system_prompt: super::context::KeptSystemPrompt,
    pub limits: OnceCell<ServerLimits>,
    /// The session whose cache each slot holds, saved at shutdown (one
    /// map for every agent: a slot is the server's, whoever used it).
    pub(super) slot_owners: Arc<slots::SlotOwners>,
    /// Cleared when the local server turns out to have no /tokenize or
    /// /apply-template (vLLM, Ollama): estimates from then on.
    pub server_counts_tokens: AtomicBool,
    /// Secret values out of what the core stores, sends and shows.
    pub redactor: Arc<Redactor>,
    /// The file tools' copies for `/rewind` (`.egirl/checkpoints/`).
    pub checkpoints: crate::tools::checkpoints::Checkpoints,
    /// The MCP servers, started in the background, stopped at shutdown.
    pub mcp: Arc<crate::mcp::McpManager>,
    /// Lines the usage log has written (what a status's spend waits on).
    pub usage_written: tokio::sync::watch::Receiver<u64>,
    /// Sessions whose editor serves the file tools (`egirl acp`); one for
    /// every agent.
    pub client_files: crate::tools::client_files::ClientFiles,
    /// The tool lists turns offered under `config`, kept while offered.
    pub tool_lists: super::tool_list::ToolLists,
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
    pub(super) fn assign_slot(&self, session: &str, total_slots: u32) -> Option<u32> {
        // Round-robin requests (a balancer's view) cannot keep a slot: the
        // server picks the slot whose cache is most like the prompt.
        if self.config.local.balance == crate::config::Balance::RoundRobin {
            return None;
        }
        let (_, ordinal) = self.main.place(session);
        (total_slots > 1).then(|| (ordinal % total_slots as usize) as u32)
    }
}
