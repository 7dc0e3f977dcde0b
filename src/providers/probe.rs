//! Which server answers at a local endpoint, found once by documented
//! probes (what egirl can do with each is `server_kind`).
//!
//! - llama-server: `GET /props` (n_ctx, slots, template caps); exact counts
//!   by `/apply-template` + `/tokenize`; cache hits in `timings.cache_n`;
//!   slots (`id_slot`, save/restore).
//! - Ollama: `GET /api/version` (`{"version": "0.5.1"}`); the context length
//!   from `POST /api/show` (`num_ctx` in `parameters` when the model sets
//!   one, else `model_info["<arch>.context_length"]`); no token counting.
//! - vLLM: `GET /version` (`{"version": "0.6.3"}`); `max_model_len` of the
//!   model in `GET /v1/models`; exact counts by its own `POST /tokenize`
//!   (`{"count": N, "max_model_len": M, "tokens": [...]}`).
//! - anything else OpenAI-compatible: the configured `context_length` and
//!   a byte-bound estimate.

use serde_json::{Value, json};

use super::ProviderError;
use super::llamacpp::LlamaCpp;
use super::server_kind::{ServerInfo, ServerKind};

/// What the endpoint serves: the ids `GET /v1/models` lists, else the
/// file name of `/props`' `model_path` (llama-server without the list).
pub async fn served_models(server: &LlamaCpp) -> Result<Vec<String>, ProviderError> {
    let listed = match server.get_json("/v1/models").await {
        Ok(reply) => reply["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["id"].as_str().map(String::from))
            .collect(),
        Err(_) => Vec::new(),
    };
    if !listed.is_empty() {
        return Ok(listed);
    }
    let props = server.props().await?;
    Ok(props
        .model_path
        .map(|path| {
            let name = path.rsplit(['/', '\\']).next().unwrap_or(&path);
            vec![name.to_string()]
        })
        .unwrap_or_default())
}

/// Probes the endpoint: `/props`, then `/api/version`, then `/version`. An
/// error only when nothing answered at all (the caller asks again later).
pub async fn discover(server: &LlamaCpp) -> Result<ServerInfo, ProviderError> {
    let props_error = match server.props().await {
        Ok(props) => {
            return Ok(ServerInfo {
                kind: ServerKind::LlamaCpp,
                version: None,
                n_ctx: props.n_ctx,
                total_slots: props.total_slots,
                supports_tools: props.supports_tools,
                vision: props.vision,
            });
        }
        Err(e) => e,
    };
    if let Ok(reply) = server.get_json("/api/version").await
        && let Some(version) = reply["version"].as_str()
    {
        let show = server
            .post_json("/api/show", &json!({ "model": server.model() }))
            .await;
        let (n_ctx, vision) = match show {
            Ok(show) => (ollama_context(&show), ollama_vision(&show)),
            Err(e) => {
                tracing::info!("Ollama /api/show failed ({e}); using [local] context_length");
                (None, None)
            }
        };
        return Ok(ServerInfo {
            kind: ServerKind::Ollama,
            version: Some(version.to_string()),
            n_ctx,
            vision,
            ..ServerInfo::default()
        });
    }
    if let Ok(reply) = server.get_json("/version").await
        && let Some(version) = reply["version"].as_str()
    {
        let n_ctx = match server.get_json("/v1/models").await {
            Ok(models) => vllm_max_model_len(&models, server.model()),
            Err(e) => {
                tracing::info!("vLLM /v1/models failed ({e}); using [local] context_length");
                None
            }
        };
        return Ok(ServerInfo {
            kind: ServerKind::Vllm,
            version: Some(version.to_string()),
            n_ctx,
            ..ServerInfo::default()
        });
    }
    match props_error {
        ProviderError::Unreachable { .. } | ProviderError::Timeout { .. } => Err(props_error),
        _ => Ok(ServerInfo {
            kind: ServerKind::Other,
            ..ServerInfo::default()
        }),
    }
}

/// `max_model_len` of the served model named `model` (or of the only one).
fn vllm_max_model_len(models: &Value, model: &str) -> Option<u64> {
    let data = models["data"].as_array()?;
    let entry = data
        .iter()
        .find(|m| m["id"].as_str() == Some(model))
        .or_else(|| (data.len() == 1).then(|| &data[0]))?;
    entry["max_model_len"].as_u64()
}

/// The window Ollama runs the model with: `num_ctx` in `parameters` (a
/// Modelfile setting) wins; else the model's trained context length.
fn ollama_context(show: &Value) -> Option<u64> {
    let from_parameters = show["parameters"].as_str().and_then(|params| {
        params.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx"))
                .then(|| words.next()?.parse().ok())
                .flatten()
        })
    });
    from_parameters.or_else(|| {
        let info = show["model_info"].as_object()?;
        let arch = info.get("general.architecture")?.as_str()?;
        info.get(&format!("{arch}.context_length"))?.as_u64()
    })
}

/// Whether Ollama lists `vision` among the model's `capabilities`
/// (`None`: an older Ollama without the list).
fn ollama_vision(show: &Value) -> Option<bool> {
    let capabilities = show["capabilities"].as_array()?;
    Some(capabilities.iter().any(|c| c.as_str() == Some("vision")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ollama_num_ctx_wins_over_the_trained_length() {
        let show = json!({
            "parameters": "stop \"<|im_end|>\"\nnum_ctx 8192",
            "model_info": { "general.architecture": "qwen2", "qwen2.context_length": 32768 },
        });
        assert_eq!(ollama_context(&show), Some(8192));
        let show = json!({
            "model_info": { "general.architecture": "llama", "llama.context_length": 131072 },
        });
        assert_eq!(ollama_context(&show), Some(131072));
        assert_eq!(ollama_context(&json!({})), None);
    }

    #[test]
    fn ollama_says_vision_in_its_capabilities() {
        let show = json!({ "capabilities": ["completion", "vision"] });
        assert_eq!(ollama_vision(&show), Some(true));
        assert_eq!(
            ollama_vision(&json!({ "capabilities": ["completion"] })),
            Some(false)
        );
        assert_eq!(ollama_vision(&json!({})), None);
    }

    #[test]
    fn vllm_length_is_the_named_models() {
        let models = json!({ "object": "list", "data": [
            { "id": "big", "object": "model", "max_model_len": 131072 },
            { "id": "small", "object": "model", "max_model_len": 4096 },
        ]});
        assert_eq!(vllm_max_model_len(&models, "small"), Some(4096));
        assert_eq!(vllm_max_model_len(&models, "other"), None);
        let one = json!({ "data": [{ "id": "x", "max_model_len": 2048 }] });
        assert_eq!(vllm_max_model_len(&one, "local"), Some(2048));
    }
}
