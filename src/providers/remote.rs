//! The remote providers egirl can escalate to, built from `[remote.*]` and
//! the keys in the environment. A section without its key is left out with
//! a notice for the user; nothing here ever fails the start-up.

use tokio_util::sync::CancellationToken;

use super::anthropic::{self, Anthropic};
use super::openai::{self, OpenAi};
use super::remote_api::RetryPolicy;
use super::{ChatRequest, ChatResponse, ProviderError, StreamChunk};
use crate::config::{RemoteConfig, Secrets};

/// One remote provider, ready to call.
#[derive(Clone, Debug)]
pub enum RemoteProvider {
    Anthropic(Anthropic),
    /// OpenAI, a compatible API, or Azure OpenAI (see `OpenAi::name`).
    OpenAi(OpenAi),
}

impl RemoteProvider {
    /// "anthropic", "openai" or "azure": the `provider` of events.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Anthropic(_) => "anthropic",
            Self::OpenAi(p) => p.name(),
        }
    }

    /// The configured model (Azure: the deployment); a reply's `model`
    /// names the exact version that answered.
    pub fn model(&self) -> &str {
        match self {
            Self::Anthropic(p) => p.model(),
            Self::OpenAi(p) => p.model(),
        }
    }

    /// Most tokens one reply may have (`[remote.*] max_tokens`).
    pub fn max_tokens(&self) -> u64 {
        match self {
            Self::Anthropic(p) => p.max_tokens(),
            Self::OpenAi(p) => p.max_tokens(),
        }
    }

    /// The base URL (Azure: the resource endpoint), for diagnostics.
    pub fn endpoint(&self) -> &str {
        match self {
            Self::Anthropic(p) => p.endpoint(),
            Self::OpenAi(p) => p.endpoint(),
        }
    }

    /// Streams one reply, as `LlamaCpp::chat` does.
    pub async fn chat(
        &self,
        req: &ChatRequest,
        cancel: &CancellationToken,
        on_chunk: &mut (dyn FnMut(StreamChunk) + Send),
    ) -> Result<ChatResponse, ProviderError> {
        match self {
            Self::Anthropic(p) => p.chat(req, cancel, on_chunk).await,
            Self::OpenAi(p) => p.chat(req, cancel, on_chunk).await,
        }
    }

    pub fn with_retry_policy(self, policy: RetryPolicy) -> Self {
        match self {
            Self::Anthropic(p) => Self::Anthropic(p.with_retry_policy(policy)),
            Self::OpenAi(p) => Self::OpenAi(p.with_retry_policy(policy)),
        }
    }
}

/// What is available, in preference order: anthropic, openai, azure.
#[derive(Clone, Debug, Default)]
pub struct RemoteProviders {
    pub providers: Vec<RemoteProvider>,
    /// One line per configured provider left out, for the user to see
    /// ("anthropic disabled: ANTHROPIC_API_KEY is not set").
    pub notices: Vec<String>,
}

impl RemoteProviders {
    pub fn from_config(remote: &RemoteConfig, secrets: &Secrets) -> Self {
        let mut out = Self::default();
        if let Some(cfg) = &remote.anthropic {
            match &secrets.anthropic_api_key {
                Some(key) => out
                    .providers
                    .push(RemoteProvider::Anthropic(Anthropic::new(cfg, key.clone()))),
                None => out.notices.push(disabled("anthropic", anthropic::KEY_VAR)),
            }
        }
        if let Some(cfg) = &remote.openai {
            match &secrets.openai_api_key {
                Some(key) => out
                    .providers
                    .push(RemoteProvider::OpenAi(OpenAi::new(cfg, key.clone()))),
                None => out.notices.push(disabled("openai", openai::OPENAI_KEY_VAR)),
            }
        }
        if let Some(cfg) = &remote.azure {
            match &secrets.azure_openai_api_key {
                Some(key) => out
                    .providers
                    .push(RemoteProvider::OpenAi(OpenAi::azure(cfg, key.clone()))),
                None => out.notices.push(disabled("azure", openai::AZURE_KEY_VAR)),
            }
        }
        out
    }

    /// No remote provider: every turn stays local.
    pub fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }

    /// Where an escalation goes: the first available.
    pub fn preferred(&self) -> Option<&RemoteProvider> {
        self.providers.first()
    }

    /// By name: "anthropic", "openai", "azure".
    pub fn get(&self, name: &str) -> Option<&RemoteProvider> {
        self.providers.iter().find(|p| p.name() == name)
    }

    /// The first OpenAI or Azure provider with an embeddings model.
    pub fn embedder(&self) -> Option<&OpenAi> {
        self.providers.iter().find_map(|p| match p {
            RemoteProvider::OpenAi(o) if o.can_embed() => Some(o),
            _ => None,
        })
    }

    /// Every provider with these retries (tests use short waits).
    pub fn with_retry_policy(self, policy: RetryPolicy) -> Self {
        Self {
            providers: self
                .providers
                .into_iter()
                .map(|p| p.with_retry_policy(policy))
                .collect(),
            notices: self.notices,
        }
    }
}

fn disabled(provider: &str, key_var: &str) -> String {
    format!("{provider} disabled: {key_var} is not set")
}
