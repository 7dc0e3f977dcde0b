//! `egirl.toml`: typed sections with built-in defaults. Every key is
//! documented in docs/configuration.md and in the repo's egirl.toml
//! (tests/docs/config_reference.rs holds all three in step).

pub mod agents;
mod browser;
mod delegate;
mod duration;
pub mod gateway;
mod hooks;
mod images;
mod load;
mod local;
mod locate;
pub mod mcp;
mod proactive;
pub mod reach;
mod remote;
pub mod secrets;
pub mod trust;
mod web;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

pub use agents::{
    AgentEntry, Binding, BindingChannel, BindingProblem, BindingTarget, DEFAULT_AGENT,
};
pub use browser::BrowserConfig;
pub use delegate::{ClaudeCodeConfig, ClaudePermissions, DelegateAgent, DelegateConfig};
pub use duration::{ConfigDuration, parse_duration};
pub use gateway::GatewayConfig;
pub use hooks::{HookConfig, HookEvent};
pub use images::ImagesConfig;
pub use load::config_candidates;
pub use load::{
    ConfigError, FoundConfig, LoadedConfig, find_config, find_config_path, load, load_text, parse,
    read_config,
};
pub use local::{
    Balance, EmbeddingsConfig, FastConfig, LocalConfig, ManagedServerConfig, ToolFormat,
};
pub use mcp::{McpApproval, McpConfig, McpServerConfig, McpToolFilter};
pub use proactive::{CronConfig, Delivery, HeartbeatConfig, WebhookConfig};
pub use remote::{AnthropicConfig, AzureConfig, OpenAiConfig, RemoteConfig};
pub use secrets::Secrets;

pub use web::{BRAVE_KEY_VAR, SearchProvider, WebConfig, WebFetchPolicy, WebSearchConfig};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub workspace: WorkspaceConfig,
    pub agent: AgentConfig,
    pub local: LocalConfig,
    pub remote: RemoteConfig,
    pub routing: RoutingConfig,
    pub tools: ToolsConfig,
    pub channels: ChannelsConfig,
    pub skills: SkillsConfig,
    pub memory: MemoryConfig,
    pub heartbeat: HeartbeatConfig,
    pub cron: CronConfig,
    pub webhook: WebhookConfig,
    /// `[gateway]`: the TCP + WebSocket listener.
    pub gateway: GatewayConfig,
    pub ui: UiConfig,
    pub log: LogConfig,
    pub pricing: BTreeMap<String, Pricing>,
    /// `[delegate.claude_code]`: the delegate_claude_code tool;
    /// `[delegate.agents.NAME]`: the delegate tool's ACP agents.
    pub delegate: DelegateConfig,
    pub checkpoints: CheckpointsConfig,
    pub mcp: McpConfig,
    /// `[images]`: picture size caps and their token estimate.
    pub images: ImagesConfig,
    /// `[[hooks]]`: the user's commands at points of a turn.
    pub hooks: Vec<HookConfig>,
    /// `[agents.NAME]`: agents besides `default`, each with its own
    /// workspace (see `agents`).
    pub agents: BTreeMap<String, AgentEntry>,
    /// `[[bindings]]`: which agent each channel's messages go to.
    pub bindings: Vec<Binding>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceConfig {
    /// `~` expands to the home directory.
    pub path: String,
}

impl Default for WorkspaceConfig {
    fn default() -> Self {
        Self {
            path: "~/.egirl/workspace".into(),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Model requests per user message before the turn gives up.
    pub max_turns: u32,
    /// Share of the local window the next request may fill before older
    /// turns are replaced by a summary (0 turns compaction off).
    pub compact_at: f64,
    /// Before a compaction, one silent step asks the model to `memory_save`
    /// what should outlive the session.
    pub memory_flush: bool,
    /// Turns kept verbatim after the summary.
    pub keep_recent: usize,
    /// Who writes the summary: "fast" (`[local.fast]`, else the main
    /// model), "local" (the main model) or "remote".
    pub compaction_model: String,
    /// How long a session with nothing to do keeps its history in memory;
    /// its next message reads it again from the transcript (0: kept until
    /// egirl stops).
    pub session_idle_release: ConfigDuration,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_turns: 10,
            compact_at: 0.75,
            memory_flush: true,
            keep_recent: 2,
            compaction_model: "fast".into(),
            session_idle_release: ConfigDuration::from_secs(15 * 60),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RoutingConfig {
    /// Where a turn goes when nothing decides.
    pub default: crate::protocol::Target,
    /// Below this confidence a local answer is escalated.
    pub escalation_threshold: f64,
    /// Rules pinning turns to a side: a task kind ("greeting", "code", ...)
    /// or "text:<phrase>" (case-insensitive substring of the message);
    /// checked by `routing::Router::new`.
    pub always_local: Vec<String>,
    pub always_remote: Vec<String>,
    /// Ask the local model "local or remote?" when the heuristics are unsure.
    pub classify: bool,
    /// How long that question may take before the heuristics' guess stands.
    pub classify_timeout: ConfigDuration,
    /// Quick local turns (greetings, thanks, quick facts) go to `[local.fast]`.
    pub fast_for_quick: bool,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        Self {
            default: crate::protocol::Target::Local,
            escalation_threshold: 0.4,
            always_local: Vec::new(),
            always_remote: Vec::new(),
            classify: true,
            classify_timeout: ConfigDuration::from_secs(3),
            fast_for_quick: false,
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    /// Directories outside the workspace the file tools may use.
    pub allowed_paths: Vec<String>,
    /// Only these tools are offered to the model (empty: all of them).
    pub allow: Vec<String>,
    /// Tools never offered, whatever `allow` says (e.g. ["exec"]).
    pub deny: Vec<String>,
    pub exec: ExecConfig,
    /// `[tools.web]`: web_fetch and web_search.
    pub web: WebConfig,
    /// `[tools.browser]`: the browser tool.
    pub browser: BrowserConfig,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecApproval {
    /// Ask for every command no allow rule covers.
    #[default]
    Ask,
    /// Run what an allow rule covers, deny the rest without asking.
    Allowlist,
    /// Never run commands.
    Deny,
    /// Run everything without asking.
    Full,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExecConfig {
    pub approval: ExecApproval,
    /// Command prefixes (shell words, e.g. "git status", "ls") that run without asking.
    pub allow: Vec<String>,
    pub timeout_secs: u64,
    /// Bytes of stdout/stderr kept per command (the middle is cut).
    pub max_output_bytes: usize,
    /// How long an approval raised by a webhook, cron, heartbeat or
    /// Telegram turn waits for an answer before it counts as denied
    /// (`Origin::approval_times_out`).
    pub unattended_timeout: ConfigDuration,
    /// Variables commands keep although they look secret (a `*_TOKEN`, a
    /// name from `.env`, one of egirl's keys). Their values stay redacted
    /// in everything egirl shows or stores.
    pub env_passthrough: Vec<String>,
    /// The OS sandbox every command runs in (see `tools::sandbox`).
    pub sandbox: ExecSandbox,
    /// Whether sandboxed commands may open network sockets.
    pub network: bool,
}

/// `[tools.exec] sandbox`: what an approved command may write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecSandbox {
    /// Writes only the workspace, `[tools] allowed_paths` and a private temp
    /// dir; the protected paths stay read-only.
    #[default]
    WorkspaceWrite,
    /// Writes only a private temp dir.
    ReadOnly,
    /// As `workspace-write`, but a command is refused when the kernel lacks
    /// a piece of the sandbox instead of running with what there is.
    Required,
    /// No sandbox: commands run as the user, as before.
    Off,
}

impl Default for ExecConfig {
    fn default() -> Self {
        Self {
            approval: ExecApproval::Ask,
            allow: Vec::new(),
            timeout_secs: 120,
            max_output_bytes: 16 * 1024,
            unattended_timeout: ConfigDuration::from_secs(600),
            env_passthrough: Vec::new(),
            sandbox: ExecSandbox::WorkspaceWrite,
            network: false,
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChannelsConfig {
    pub discord: DiscordConfig,
    pub telegram: TelegramConfig,
}

/// `[channels.telegram]`: the Telegram bot (long polling; the token is
/// `TELEGRAM_BOT_TOKEN`).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TelegramConfig {
    pub enabled: bool,
    /// Numeric Telegram user ids the bot answers (empty: nobody).
    #[serde(deserialize_with = "duration::string_or_int_list")]
    pub allowed_users: Vec<String>,
    /// `"dm"` (private chats) and/or chat ids (groups are negative).
    #[serde(deserialize_with = "duration::string_or_int_list")]
    pub allowed_chats: Vec<String>,
    /// In groups, answer only messages that mention the bot or reply to it.
    pub require_mention: bool,
    /// The Bot API's base URL (a local Bot API server, or the tests' fake).
    pub api_url: String,
}

impl Default for TelegramConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            allowed_users: Vec::new(),
            allowed_chats: vec!["dm".into()],
            require_mention: true,
            api_url: "https://api.telegram.org".into(),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiscordConfig {
    pub enabled: bool,
    #[serde(deserialize_with = "duration::string_or_int_list")]
    pub allowed_users: Vec<String>,
    #[serde(deserialize_with = "duration::string_or_int_list")]
    pub allowed_channels: Vec<String>,
    pub require_mention: bool,
    /// REST base of a Discord API proxy (or a local fake): requests go to
    /// `{proxy}/api/v10/...` and the client-side ratelimiter is off.
    pub proxy: Option<String>,
    /// The allowed users may answer an exec approval from Discord (a reply
    /// "yes"/"no" or a ✅/❌ reaction); the first answer anywhere wins.
    pub approve_in_discord: bool,
}

impl Default for DiscordConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            allowed_users: Vec::new(),
            allowed_channels: vec!["dm".into()],
            require_mention: true,
            proxy: None,
            approve_in_discord: false,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SkillsConfig {
    /// Extra skills directories after `<workspace>/skills` (which wins);
    /// `~` and `{workspace}` expand, relative paths are in the workspace.
    pub dirs: Vec<String>,
    /// Characters the `<available_skills>` block of the system prompt may
    /// take; descriptions are shortened first.
    pub prompt_chars: usize,
    /// Reload skills when a SKILL.md changes.
    pub watch: bool,
}

/// Memory search (`memory_search`, `/memory`, `egirl memory search`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Share of a hybrid score from vector similarity.
    pub vector_weight: f64,
    /// Share from full-text relevance (BM25).
    pub text_weight: f64,
    /// Hits returned when the caller does not say.
    pub max_results: usize,
    /// Hits scoring below this (0 to 1) are left out.
    pub min_score: f64,
    /// Each side (text, vectors) proposes max_results × this many candidates.
    pub candidate_multiplier: usize,
    /// Daily logs lose half their score per this age ("0": no decay);
    /// MEMORY.md never decays.
    pub recency_half_life: ConfigDuration,
    /// Re-index when memory files change on disk.
    pub watch: bool,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            vector_weight: 0.7,
            text_weight: 0.3,
            max_results: 6,
            min_score: 0.2,
            candidate_multiplier: 4,
            recency_half_life: ConfigDuration::from_secs(0),
            watch: true,
        }
    }
}

impl Default for SkillsConfig {
    fn default() -> Self {
        Self {
            dirs: Vec::new(),
            prompt_chars: 2000,
            watch: true,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UiConfig {
    pub theme: String,
    /// How the TUI says an approval waits or a long turn ended while its
    /// window is not focused.
    pub notify: NotifyMode,
    /// A turn at least this long says when it ends (unfocused).
    pub notify_after: ConfigDuration,
    /// `egirl serve`: a program (argv, no shell) run for the same events,
    /// with the text as its last argument; empty: none.
    pub notify_command: Vec<String>,
}

impl Default for UiConfig {
    fn default() -> Self {
        Self {
            theme: "default".into(),
            notify: NotifyMode::Osc9,
            notify_after: ConfigDuration::from_secs(30),
            notify_command: Vec::new(),
        }
    }
}

/// `[ui] notify`: the desktop-notification escape the TUI writes (each
/// also rings the bell), or only the bell, or nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyMode {
    /// `ESC ] 9 ; text BEL` (iTerm2, WezTerm, Windows Terminal, kitty…).
    #[default]
    Osc9,
    /// `ESC ] 777 ; notify ; egirl ; text BEL` (foot, rxvt, Ghostty…).
    Osc777,
    Bell,
    Off,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogConfig {
    /// Log files rotate daily here; `~` expands.
    pub dir: String,
    /// A tracing filter such as "info" or "egirl=debug".
    pub level: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            dir: "~/.egirl/logs".into(),
            level: "info".into(),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pricing {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    /// Prompt tokens read from the provider's cache; default: the input rate.
    #[serde(default)]
    pub cached_input_per_mtok: Option<f64>,
    /// Prompt tokens written to the cache (Anthropic); default: the input rate.
    #[serde(default)]
    pub cache_write_per_mtok: Option<f64>,
}

/// Expands a leading `~` to the home directory.
pub fn expand_home(path: &str) -> PathBuf {
    if let Some(rest) = path
        .strip_prefix("~/")
        .or_else(|| (path == "~").then_some(""))
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    PathBuf::from(path)
}

/// `[checkpoints]`: what `write_file`/`edit_file` keep of a file before
/// changing it, so `/rewind` can put it back.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckpointsConfig {
    /// Off: no copies are kept and `/rewind` restores no file.
    pub enabled: bool,
    /// Checkpoints older than this are deleted (at start, after a turn that
    /// kept a copy, else at most once a minute after a turn).
    pub max_age: ConfigDuration,
    /// All checkpoints together stay under this many MiB: the oldest turns
    /// go first; a single file larger than this is not kept.
    pub max_total_mb: u64,
}

impl Default for CheckpointsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_age: ConfigDuration::from_secs(7 * 24 * 3600),
            max_total_mb: 512,
        }
    }
}
