//! `[remote.anthropic]`, `[remote.openai]`, `[remote.azure]`: the remote
//! providers a weak local answer escalates to.

use serde::Deserialize;

use super::ConfigDuration;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RemoteConfig {
    /// Most USD the remote models may cost per local calendar day, counted
    /// from the usage log (every process using the workspace); none: no cap.
    pub budget_day_usd: Option<f64>,
    /// The same per local calendar month.
    pub budget_month_usd: Option<f64>,
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
