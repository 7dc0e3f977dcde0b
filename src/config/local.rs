//! `[local]`, `[local.fast]`, `[local.embeddings]`, `[local.server]`: the
//! local models, their endpoints and the llama-server egirl may manage.

use serde::Deserialize;

use super::ConfigDuration;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolFormat {
    /// Send native `tools`; also accept `<tool_call>` blocks in the content.
    #[default]
    Auto,
    /// Only the server's parsed `tool_calls` (llama-server `--jinja`).
    Native,
    /// The Qwen3 format (docs/design.md §6): tools in the system prompt,
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
    /// Replicas of the model: each session lives on one (its prefix cache),
    /// chosen by hashing its id (`providers::placement`). Replaces `endpoint` when set.
    pub endpoints: Vec<String>,
    /// How sessions are spread over `endpoints` (round-robin is for benchmarks).
    pub balance: Balance,
    /// How often an endpoint marked down is probed (`/health`) until it is back.
    pub probe_every: ConfigDuration,
    /// `[local.fast]`: a small fast model beside the main one.
    pub fast: Option<FastConfig>,
    /// The model sees images, whatever the server's probes say (vLLM and
    /// other servers do not tell).
    pub vision: bool,
}

/// `[local] balance`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Balance {
    /// A session keeps its endpoint (and slot), its rendezvous home.
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
    /// As `[local] vision`, for the fast model (not inherited: another model).
    pub vision: bool,
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
            vision: fast.vision,
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
            vision: false,
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
