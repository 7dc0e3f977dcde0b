//! The `usage` event of each model request, priced from `[pricing]` or the
//! built-in remote prices.

use super::session::Turn;
use crate::protocol::EventKind;
use crate::protocol::{ContextUse, TokenUsage};
use crate::providers::ChatResponse;

/// Usage under the configured model name, the one the status line shows
/// (llama-server names the path of its GGUF file instead); the server's own
/// id still finds a price, and goes to the debug log.
pub(super) fn emit_usage(
    turn: &Turn<'_>,
    provider: &str,
    configured: &str,
    endpoint: Option<String>,
    response: &ChatResponse,
    context: Option<ContextUse>,
) -> f64 {
    let config = &turn.shared.config;
    let served = response.model.as_str();
    let model = if configured.is_empty() {
        served.to_string()
    } else {
        configured.to_string()
    };
    if served != model {
        tracing::debug!(provider, model, served, "usage");
    }
    // Local models cost nothing unless `[pricing]` says so; remote ones
    // have built-in prices (overridable); a dated id is the more exact.
    let pricing = if provider == "llamacpp" {
        config
            .pricing
            .get(&model)
            .or_else(|| config.pricing.get(served))
            .cloned()
    } else {
        crate::usage::price_for(&config.pricing, served)
            .or_else(|| crate::usage::price_for(&config.pricing, &model))
    };
    let cost_usd = crate::usage::cost_usd(pricing.as_ref(), &response.usage);
    turn.emit(EventKind::Usage(TokenUsage {
        provider: provider.to_string(),
        cost_usd,
        model,
        input_tokens: response.usage.input_tokens,
        output_tokens: response.usage.output_tokens,
        cached_tokens: response.usage.cached_tokens,
        tokens_per_sec: response.usage.tokens_per_sec(),
        latency_ms: {
            let ms = response.usage.prompt_ms + response.usage.predicted_ms;
            (ms > 0.0).then(|| ms.round() as u64)
        },
        endpoint,
        context,
    }));
    cost_usd
}
