//! `egirl.toml`: typed sections with built-in defaults. Every key is
//! documented in the README's config reference and in the repo's egirl.toml.

mod delegate;
mod duration;
mod load;
mod proactive;
pub mod redact;
pub mod secrets;
mod web;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

pub use delegate::{ClaudeCodeConfig, ClaudePermissions, DelegateConfig};
pub use duration::{ConfigDuration, parse_duration};
pub use load::config_candidates;
pub use load::{ConfigError, LoadedConfig, find_config_path, load, parse};
pub use proactive::{CronConfig, Delivery, HeartbeatConfig, WebhookConfig};
pub use redact::Redactor;
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
    pub ui: UiConfig,
    pub log: LogConfig,
    pub pricing: BTreeMap<String, Pricing>,
    /// `[delegate.claude_code]`: the delegate_claude_code tool.
    pub delegate: DelegateConfig,
    pub checkpoints: CheckpointsConfig,
    pub mcp: crate::mcp::McpConfig,
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
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_turns: 10,
            compact_at: 0.75,
            memory_flush: true,
            keep_recent: 2,
            compaction_model: "fast".into(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolFormat {
    /// Send native `tools`; also accept `<tool_call>` blocks in the content.
    #[default]
    Auto,
    /// Only the server's parsed `tool_calls` (llama-server `--jinja`).
    Native,
    /// The Qwen3 format of the egirl spec: tools in the system prompt,
    /// `<tool_call>` blocks, `<tool_response>` user messages.
    Qwen3,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocalConfig {
    pub endpoint: String,
    pub model: String,
    /// Upper bound for the prompt; the server's own n_ctx (from /props) wins when smaller.
    pub context_length: u64,
    /// Concurrent requests egirl sends to the local server (across sessions).
    pub max_concurrent: usize,
    pub tool_format: ToolFormat,
    /// Tokens the model may generate per request.
    pub max_tokens: u64,
    /// Give up on a request that produces nothing for this long.
    pub timeout: ConfigDuration,
    pub embeddings: Option<EmbeddingsConfig>,
    pub server: Option<ManagedServerConfig>,
    /// Replicas of the model: each session stays on one (its prefix cache),
    /// new sessions go to the least loaded. Replaces `endpoint` when set.
    pub endpoints: Vec<String>,
    /// How sessions are spread over `endpoints` (round-robin is for benchmarks).
    pub balance: Balance,
    /// How often an endpoint marked down is probed (`/health`) until it is back.
    pub probe_every: ConfigDuration,
    /// `[local.fast]`: a small fast model beside the main one.
    pub fast: Option<FastConfig>,
}

/// `[local] balance`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Balance {
    /// A session keeps its endpoint (and slot); new ones go to the least loaded.
    #[default]
    Affinity,
    /// Every request to the next endpoint in turn (to measure what affinity saves).
    RoundRobin,
}

/// `[local.fast]`: the model for the router's classification, compaction
/// summaries, heartbeat turns and (with `[routing] fast_for_quick`) quick
/// turns. Unset keys are the main `[local]` ones.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FastConfig {
    pub endpoint: String,
    pub endpoints: Vec<String>,
    pub model: String,
    pub context_length: Option<u64>,
    pub max_concurrent: Option<usize>,
    pub max_tokens: Option<u64>,
    pub server: Option<ManagedServerConfig>,
}

impl LocalConfig {
    /// The endpoints to use: `endpoints` when given, else `endpoint`.
    pub fn endpoint_list(&self) -> Vec<String> {
        if self.endpoints.is_empty() {
            vec![self.endpoint.clone()]
        } else {
            self.endpoints.clone()
        }
    }

    /// `[local.fast]` as a full local config (its own endpoints, model and
    /// server; the rest from `[local]`); `None` without that section.
    pub fn fast_role(&self) -> Option<LocalConfig> {
        let fast = self.fast.as_ref()?;
        let endpoints = match (fast.endpoints.is_empty(), fast.endpoint.is_empty()) {
            (false, _) => fast.endpoints.clone(),
            (true, false) => vec![fast.endpoint.clone()],
            (true, true) => self.endpoint_list(),
        };
        Some(LocalConfig {
            endpoint: endpoints[0].clone(),
            endpoints,
            model: if fast.model.is_empty() {
                self.model.clone()
            } else {
                fast.model.clone()
            },
            context_length: fast.context_length.unwrap_or(self.context_length),
            max_concurrent: fast.max_concurrent.unwrap_or(self.max_concurrent),
            max_tokens: fast.max_tokens.unwrap_or(self.max_tokens),
            embeddings: None,
            server: fast.server.clone(),
            fast: None,
            ..self.clone()
        })
    }
}

impl Default for LocalConfig {
    fn default() -> Self {
        Self {
            endpoint: "http://127.0.0.1:8080".into(),
            model: "local".into(),
            context_length: 32768,
            max_concurrent: 2,
            tool_format: ToolFormat::Auto,
            max_tokens: 2048,
            timeout: ConfigDuration::from_secs(300),
            embeddings: None,
            server: None,
            endpoints: Vec::new(),
            balance: Balance::Affinity,
            probe_every: ConfigDuration::from_secs(5),
            fast: None,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingsConfig {
    pub endpoint: String,
    #[serde(default)]
    pub model: String,
}

/// A llama-server egirl starts itself when nothing answers at `[local] endpoint`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManagedServerConfig {
    pub binary: String,
    pub model: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// How long to wait for /health after starting it.
    #[serde(default = "default_server_startup")]
    pub startup_timeout: ConfigDuration,
}

fn default_server_startup() -> ConfigDuration {
    ConfigDuration::from_secs(120)
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RemoteConfig {
    pub anthropic: Option<AnthropicConfig>,
    pub openai: Option<OpenAiConfig>,
    pub azure: Option<AzureConfig>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnthropicConfig {
    pub model: String,
    /// Without `/v1`: requests go to `{base_url}/v1/messages`.
    #[serde(default = "default_anthropic_url")]
    pub base_url: String,
    /// Tokens the model may generate per request (the API requires a bound).
    #[serde(default = "default_remote_max_tokens")]
    pub max_tokens: u64,
    /// Give up on a request that sends nothing for this long ("0": never).
    #[serde(default = "default_remote_timeout")]
    pub timeout: ConfigDuration,
}

fn default_remote_max_tokens() -> u64 {
    8192
}

/// Generous: a reasoning model may think for minutes before its first token.
fn default_remote_timeout() -> ConfigDuration {
    ConfigDuration::from_secs(300)
}

fn default_anthropic_url() -> String {
    "https://api.anthropic.com".into()
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiConfig {
    pub model: String,
    /// With the version path, like the OpenAI SDKs' base URL: requests go to
    /// `{base_url}/chat/completions` (so `https://openrouter.ai/api/v1` or
    /// `http://localhost:11434/v1` work as written).
    #[serde(default = "default_openai_url")]
    pub base_url: String,
    #[serde(default = "default_remote_max_tokens")]
    pub max_tokens: u64,
    #[serde(default = "default_remote_timeout")]
    pub timeout: ConfigDuration,
    /// Model for `{base_url}/embeddings`; none: no remote embeddings.
    #[serde(default)]
    pub embedding_model: Option<String>,
}

fn default_openai_url() -> String {
    "https://api.openai.com/v1".into()
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AzureConfig {
    pub endpoint: String,
    pub deployment: String,
    #[serde(default = "default_azure_api_version")]
    pub api_version: String,
    #[serde(default)]
    pub embedding_deployment: Option<String>,
    #[serde(default = "default_remote_max_tokens")]
    pub max_tokens: u64,
    #[serde(default = "default_remote_timeout")]
    pub timeout: ConfigDuration,
}

fn default_azure_api_version() -> String {
    "2024-10-21".into()
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
    pub exec: ExecConfig,
    /// `[tools.web]`: web_fetch and web_search.
    pub web: WebConfig,
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
    /// How long an approval raised by a webhook, cron or heartbeat turn
    /// waits for an answer before it counts as denied.
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
}

impl Default for UiConfig {
    fn default() -> Self {
        Self {
            theme: "default".into(),
        }
    }
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
    /// Checkpoints older than this are deleted (at start and after each turn).
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
