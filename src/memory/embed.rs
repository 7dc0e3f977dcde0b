//! Embeddings for memory: llama.cpp's `/v1/embeddings` (`[local.embeddings]`)
//! first, else OpenAI or Azure (`embedding_model` / `embedding_deployment`).
//! Texts go in batches; vectors come back L2-normalised so that cosine
//! similarity is a dot product.

use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

use crate::config::LocalConfig;
use crate::providers::openai::OpenAi;
use crate::providers::remote::RemoteProviders;

/// Texts per request: few requests, each well under a server's body limit.
pub const BATCH_SIZE: usize = 32;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// A CPU embedding server may take a while for a full batch.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Clone, Debug)]
pub enum Embedder {
    /// A llama.cpp server (or any server with OpenAI's `/v1/embeddings`).
    Local {
        client: reqwest::Client,
        /// `{endpoint}/v1/embeddings`.
        url: String,
        model: String,
    },
    Remote(Box<OpenAi>),
}

impl Embedder {
    /// `[local.embeddings]` when configured, else the first remote provider
    /// with an embeddings model, else none (full-text search only).
    pub fn from_config(local: &LocalConfig, remote: &RemoteProviders) -> Option<Self> {
        if let Some(cfg) = &local.embeddings {
            return Some(Self::local(&cfg.endpoint, &cfg.model));
        }
        remote.embedder().map(|p| Self::Remote(Box::new(p.clone())))
    }

    pub fn local(endpoint: &str, model: &str) -> Self {
        let endpoint = endpoint.trim_end_matches('/');
        let endpoint = endpoint.strip_suffix("/v1").unwrap_or(endpoint);
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .build()
            .unwrap_or_default();
        Self::Local {
            client,
            url: format!("{endpoint}/v1/embeddings"),
            model: model.to_string(),
        }
    }

    /// Names the vectors this embedder makes; stored with the index, and a
    /// different one invalidates every stored vector.
    pub fn id(&self) -> String {
        match self {
            Self::Local { model, url, .. } if model.is_empty() => format!("llamacpp {url}"),
            Self::Local { model, .. } => format!("llamacpp {model}"),
            Self::Remote(p) => format!("{} {}", p.name(), p.embedding_model().unwrap_or("")),
        }
    }

    /// One vector per text, in order, normalised. One request: callers
    /// split into [`BATCH_SIZE`] batches.
    pub async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let mut vectors = match self {
            Self::Local { client, url, model } => local_embed(client, url, model, texts).await?,
            Self::Remote(p) => p
                .embed(texts)
                .await
                .with_context(|| format!("{} embeddings", p.name()))?,
        };
        if vectors.len() != texts.len() {
            bail!(
                "the embeddings server returned {} vectors for {} texts",
                vectors.len(),
                texts.len()
            );
        }
        let dims = vectors[0].len();
        if dims == 0 || vectors.iter().any(|v| v.len() != dims) {
            bail!("the embeddings server returned vectors of different sizes");
        }
        vectors.iter_mut().for_each(|v| normalize(v));
        Ok(vectors)
    }
}

async fn local_embed(
    client: &reqwest::Client,
    url: &str,
    model: &str,
    texts: &[&str],
) -> Result<Vec<Vec<f32>>> {
    let mut body = json!({ "input": texts, "encoding_format": "float" });
    if !model.is_empty() {
        body["model"] = json!(model);
    }
    let response = client
        .post(url)
        .json(&body)
        .send()
        .await
        .map_err(|e| anyhow!("embeddings at {url}: {}", root_cause(&e)))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .with_context(|| format!("embeddings at {url}: reading the answer"))?;
    if !status.is_success() {
        let shown: String = text.chars().take(200).collect();
        bail!("embeddings at {url}: HTTP {status}: {shown}");
    }
    let reply: Value = serde_json::from_str(&text)
        .with_context(|| format!("embeddings at {url}: the answer is not JSON"))?;
    vectors_from(&reply, texts.len()).with_context(|| format!("embeddings at {url}"))
}

/// `{"data": [{"index": i, "embedding": [...]}, ...]}` in input order.
fn vectors_from(reply: &Value, expected: usize) -> Result<Vec<Vec<f32>>> {
    let data = reply["data"]
        .as_array()
        .ok_or_else(|| anyhow!("the answer has no \"data\""))?;
    let mut out: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in data.iter().enumerate() {
        let index = item["index"].as_u64().map_or(position, |i| i as usize);
        let vector = item["embedding"].as_array().map(|v| {
            v.iter()
                .filter_map(Value::as_f64)
                .map(|x| x as f32)
                .collect()
        });
        match (out.get_mut(index), vector) {
            (Some(slot), Some(v)) => *slot = Some(v),
            _ => bail!("embedding {index} is missing or out of range"),
        }
    }
    out.into_iter()
        .enumerate()
        .map(|(i, v)| v.ok_or_else(|| anyhow!("no embedding came back for text {i}")))
        .collect()
}

/// The innermost cause ("Connection refused (os error 111)"), which says
/// more than reqwest's "error sending request for url".
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_come_back_in_input_order() {
        let reply = json!({"data": [
            {"index": 1, "embedding": [0.0, 2.0]},
            {"index": 0, "embedding": [1.0, 0.0]},
        ]});
        let v = vectors_from(&reply, 2).unwrap();
        assert_eq!(v, vec![vec![1.0, 0.0], vec![0.0, 2.0]]);
        assert!(vectors_from(&json!({"data": []}), 1).is_err());
        assert!(vectors_from(&json!({}), 1).is_err());
    }

    #[test]
    fn ids_name_the_model() {
        let e = Embedder::local("http://127.0.0.1:8081/v1/", "nomic");
        assert_eq!(e.id(), "llamacpp nomic");
        let Embedder::Local { url, .. } = Embedder::local("http://h:1", "") else {
            unreachable!()
        };
        assert_eq!(url, "http://h:1/v1/embeddings");
    }
}
