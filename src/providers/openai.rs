//! OpenAI chat completions, streamed, for OpenAI itself, any compatible API
//! (OpenRouter, Groq, vLLM, Ollama behind `[remote.openai] base_url`) and
//! Azure OpenAI; plus embeddings.
//!
//! OpenAI: `POST {base_url}/chat/completions` with `Authorization: Bearer`,
//! where `base_url` includes the version path like the OpenAI SDKs' (default
//! `https://api.openai.com/v1`). Azure: `POST {endpoint}/openai/deployments/
//! {deployment}/chat/completions?api-version={api_version}` with `api-key`.
//! The stream is the same chat-completions format llama-server speaks, read
//! by the same accumulator (`completions::stream`): text, tool calls
//! assembled by index, `prompt_tokens_details.cached_tokens`.

use std::time::Instant;

use reqwest::header::HeaderMap;
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::completions::{self, stream};
use super::remote_api::RetryPolicy;
use super::remote_api::history;
use super::remote_api::transport::{Flow, KeyHeader, Transport};
use super::sse::SseEvent;
use super::{ChatRequest, ChatResponse, ProviderError, StreamChunk};
use crate::chat::ToolSpec;
use crate::config::{AzureConfig, OpenAiConfig, ToolFormat};

pub const OPENAI_KEY_VAR: &str = "OPENAI_API_KEY";
pub const AZURE_KEY_VAR: &str = "AZURE_OPENAI_API_KEY";

#[derive(Clone, Debug)]
enum Flavor {
    OpenAi {
        /// Without a trailing `/`; with the version path.
        base_url: String,
        embedding_model: Option<String>,
    },
    Azure {
        /// Without a trailing `/`.
        endpoint: String,
        deployment: String,
        api_version: String,
        embedding_deployment: Option<String>,
    },
}

#[derive(Clone, Debug)]
pub struct OpenAi {
    transport: Transport,
    flavor: Flavor,
    /// The configured model (Azure: the deployment); the reply names the real one.
    model: String,
    max_tokens: u64,
}

impl OpenAi {
    /// OpenAI or a compatible server.
    pub fn new(cfg: &OpenAiConfig, key: SecretString) -> Self {
        let base_url = cfg.base_url.trim_end_matches('/').to_string();
        Self {
            transport: Transport::new(
                "openai",
                OPENAI_KEY_VAR,
                key,
                KeyHeader::Bearer,
                &base_url,
                cfg.timeout,
            ),
            flavor: Flavor::OpenAi {
                base_url,
                embedding_model: cfg.embedding_model.clone(),
            },
            model: cfg.model.clone(),
            max_tokens: cfg.max_tokens,
        }
    }

    /// Azure OpenAI: a deployment instead of a model, `api-key` instead of a bearer token.
    pub fn azure(cfg: &AzureConfig, key: SecretString) -> Self {
        let endpoint = cfg.endpoint.trim_end_matches('/').to_string();
        Self {
            transport: Transport::new(
                "azure",
                AZURE_KEY_VAR,
                key,
                KeyHeader::ApiKey,
                &endpoint,
                cfg.timeout,
            ),
            flavor: Flavor::Azure {
                endpoint,
                deployment: cfg.deployment.clone(),
                api_version: cfg.api_version.clone(),
                embedding_deployment: cfg.embedding_deployment.clone(),
            },
            model: cfg.deployment.clone(),
            max_tokens: cfg.max_tokens,
        }
    }

    /// Retries other than the default (tests use short waits).
    pub fn with_retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.transport.retry = policy;
        self
    }

    /// "openai" or "azure".
    pub fn name(&self) -> &'static str {
        self.transport.provider
    }

    /// The configured model (for Azure, the deployment name).
    /// Most tokens one reply may have (what a spend cap must allow for).
    pub fn max_tokens(&self) -> u64 {
        self.max_tokens
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    pub fn endpoint(&self) -> &str {
        &self.transport.endpoint
    }

    /// Whether `embed` has a model or deployment to call.
    pub fn can_embed(&self) -> bool {
        match &self.flavor {
            Flavor::OpenAi {
                embedding_model, ..
            } => embedding_model.is_some(),
            Flavor::Azure {
                embedding_deployment,
                ..
            } => embedding_deployment.is_some(),
        }
    }

    /// The embeddings model (Azure: the embeddings deployment), if any.
    pub fn embedding_model(&self) -> Option<&str> {
        match &self.flavor {
            Flavor::OpenAi {
                embedding_model, ..
            } => embedding_model.as_deref(),
            Flavor::Azure {
                embedding_deployment,
                ..
            } => embedding_deployment.as_deref(),
        }
    }

    /// The chat completions URL.
    pub fn chat_url(&self) -> String {
        match &self.flavor {
            Flavor::OpenAi { base_url, .. } => format!("{base_url}/chat/completions"),
            Flavor::Azure {
                endpoint,
                deployment,
                api_version,
                ..
            } => azure_url(endpoint, deployment, "chat/completions", api_version),
        }
    }

    /// Streams one reply: text goes to `on_chunk` as it arrives; the
    /// finished reply comes back. `req.max_tokens` and `req.slot` are
    /// ignored (the section's `max_tokens` applies).
    pub async fn chat(
        &self,
        req: &ChatRequest,
        cancel: &CancellationToken,
        on_chunk: &mut (dyn FnMut(StreamChunk) + Send),
    ) -> Result<ChatResponse, ProviderError> {
        let body = self.chat_body(req);
        let sent_at = Instant::now();
        let response = self
            .transport
            .post(&self.chat_url(), &HeaderMap::new(), &body, cancel)
            .await?;
        let endpoint = self.transport.endpoint.clone();
        let mut acc = stream::Accumulator::new(&endpoint, ToolFormat::Native);
        let mut first_event = None;
        let mut on_event = |event: SseEvent| {
            first_event.get_or_insert_with(Instant::now);
            match event {
                SseEvent::Data(data) => acc.frame(&data, &mut *on_chunk)?,
                SseEvent::Done => acc.done = true,
                SseEvent::OverCap => acc.cut(),
                SseEvent::Error(text) => {
                    let error = serde_json::from_str(&text).unwrap_or(Value::String(text));
                    return Err(stream::stream_error(&endpoint, &error));
                }
            }
            // A cut reply stops the reading: the connection is dropped.
            Ok(if acc.done || acc.is_cut() {
                Flow::Done
            } else {
                Flow::More
            })
        };
        self.transport
            .read_sse(response, cancel, &mut on_event)
            .await?;
        let mut response = acc.finish()?;
        if response.model.is_empty() {
            response.model = self.model.clone();
        }
        // OpenAI reports no timings: measured here, to the first event and after it.
        let now = Instant::now();
        let first = first_event.unwrap_or(now);
        response.usage.prompt_ms = first.duration_since(sent_at).as_secs_f64() * 1000.0;
        response.usage.predicted_ms = now.duration_since(first).as_secs_f64() * 1000.0;
        Ok(response)
    }

    /// The request body: history as native OpenAI messages, every tool call
    /// answered (see `remote_api::history`).
    pub fn chat_body(&self, req: &ChatRequest) -> Value {
        let messages = completions::native_messages(&history::paired(&req.messages), &req.images);
        let mut body = json!({});
        if let Flavor::OpenAi { .. } = self.flavor {
            body["model"] = json!(self.model);
        }
        body["messages"] = Value::Array(messages);
        if !req.tools.is_empty() {
            body["tools"] = Value::Array(req.tools.iter().map(ToolSpec::to_openai_json).collect());
        }
        body["stream"] = json!(true);
        body["stream_options"] = json!({ "include_usage": true });
        body[self.max_tokens_field()] = json!(self.max_tokens);
        body
    }

    /// OpenAI's reasoning models (o-series, GPT-5) refuse `max_tokens`
    /// and want `max_completion_tokens`, which OpenAI and Azure accept for
    /// every model; other compatible servers know only `max_tokens`.
    fn max_tokens_field(&self) -> &'static str {
        match &self.flavor {
            Flavor::Azure { .. } => "max_completion_tokens",
            Flavor::OpenAi { base_url, .. } => {
                let official = reqwest::Url::parse(base_url)
                    .ok()
                    .and_then(|u| u.host_str().map(|h| h == "api.openai.com"))
                    .unwrap_or(false);
                if official {
                    "max_completion_tokens"
                } else {
                    "max_tokens"
                }
            }
        }
    }

    /// One embedding per text, in order: OpenAI `{base_url}/embeddings`
    /// with `embedding_model`, Azure the `embedding_deployment`.
    pub async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ProviderError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let (url, body) = match &self.flavor {
            Flavor::OpenAi {
                base_url,
                embedding_model: Some(model),
            } => (
                format!("{base_url}/embeddings"),
                json!({ "model": model, "input": texts }),
            ),
            Flavor::Azure {
                endpoint,
                api_version,
                embedding_deployment: Some(deployment),
                ..
            } => (
                azure_url(endpoint, deployment, "embeddings", api_version),
                json!({ "input": texts }),
            ),
            Flavor::OpenAi { .. } => {
                return Err(ProviderError::NotConfigured(
                    "openai embeddings need [remote.openai] embedding_model".into(),
                ));
            }
            Flavor::Azure { .. } => {
                return Err(ProviderError::NotConfigured(
                    "azure embeddings need [remote.azure] embedding_deployment".into(),
                ));
            }
        };
        // Embeddings are short and never interrupted by the user.
        let cancel = CancellationToken::new();
        let response = self
            .transport
            .post(&url, &HeaderMap::new(), &body, &cancel)
            .await?;
        let reply = self.transport.read_json(response, &cancel).await?;
        self.embeddings_from(&reply, texts.len())
    }

    /// `{"data": [{"index": i, "embedding": [...]}, ...]}`, put in input order.
    fn embeddings_from(
        &self,
        reply: &Value,
        expected: usize,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        let Some(data) = reply["data"].as_array() else {
            return Err(self
                .transport
                .bad_reply("the embeddings answer has no \"data\""));
        };
        let mut out: Vec<Option<Vec<f32>>> = vec![None; expected];
        for (position, item) in data.iter().enumerate() {
            let index = item["index"].as_u64().map_or(position, |i| i as usize);
            let vector: Option<Vec<f32>> = item["embedding"].as_array().map(|v| {
                v.iter()
                    .filter_map(Value::as_f64)
                    .map(|x| x as f32)
                    .collect()
            });
            match (out.get_mut(index), vector) {
                (Some(slot), Some(vector)) => *slot = Some(vector),
                _ => {
                    return Err(self
                        .transport
                        .bad_reply(&format!("embedding {index} is missing or out of range")));
                }
            }
        }
        out.into_iter()
            .enumerate()
            .map(|(i, v)| {
                v.ok_or_else(|| {
                    self.transport.bad_reply(&format!(
                        "no embedding came back for text {i} of {expected}"
                    ))
                })
            })
            .collect()
    }
}

fn azure_url(endpoint: &str, deployment: &str, path: &str, api_version: &str) -> String {
    format!("{endpoint}/openai/deployments/{deployment}/{path}?api-version={api_version}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigDuration;

    fn body_for(base_url: &str) -> Value {
        let cfg = OpenAiConfig {
            model: "gpt-5".into(),
            base_url: base_url.into(),
            max_tokens: 77,
            timeout: ConfigDuration::from_secs(1),
            embedding_model: None,
        };
        let provider = OpenAi::new(&cfg, SecretString::from("k".to_string()));
        provider.chat_body(&ChatRequest::default())
    }

    #[test]
    fn openai_itself_gets_max_completion_tokens_others_max_tokens() {
        let official = body_for("https://api.openai.com/v1/");
        assert_eq!(official["max_completion_tokens"], 77);
        assert!(official.get("max_tokens").is_none());
        let compatible = body_for("https://openrouter.ai/api/v1");
        assert_eq!(compatible["max_tokens"], 77);
        assert!(compatible.get("max_completion_tokens").is_none());
    }

    #[test]
    fn urls_follow_the_flavor() {
        let cfg = OpenAiConfig {
            model: "m".into(),
            base_url: "https://openrouter.ai/api/v1/".into(),
            max_tokens: 1,
            timeout: ConfigDuration::from_secs(1),
            embedding_model: None,
        };
        let key = || SecretString::from("k".to_string());
        assert_eq!(
            OpenAi::new(&cfg, key()).chat_url(),
            "https://openrouter.ai/api/v1/chat/completions"
        );
        let azure = AzureConfig {
            endpoint: "https://res.openai.azure.com/".into(),
            deployment: "gpt4o".into(),
            api_version: "2024-10-21".into(),
            embedding_deployment: None,
            max_tokens: 1,
            timeout: ConfigDuration::from_secs(1),
        };
        assert_eq!(
            OpenAi::azure(&azure, key()).chat_url(),
            "https://res.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21"
        );
    }
}
