//! HTTP answers and transport failures as `ProviderError`s, shared by every
//! provider: one short line with the server's own message.

use serde_json::Value;

use super::ProviderError;

const BODY_EXCERPT_CHARS: usize = 300;

/// An error answer: context overflows are told apart (the agent trims and
/// retries), everything else keeps the status and a short message.
pub(crate) fn http_error(endpoint: &str, status: u16, body: &str) -> ProviderError {
    let message = server_message(body);
    let lower = body.to_ascii_lowercase();
    let overflow = [
        "exceed_context_size_error",
        "exceeds the available context size",
        "maximum context length",
        "context_length_exceeded",
        // Anthropic: "prompt is too long: 201234 tokens > 200000 maximum".
        "prompt is too long",
    ]
    .iter()
    .any(|marker| lower.contains(marker));
    if overflow {
        return ProviderError::ContextOverflow(message);
    }
    ProviderError::Http {
        endpoint: endpoint.to_string(),
        status,
        body: message,
    }
}

/// `{"error": {"message": ...}}` (llama-server, OpenAI, Anthropic) or the
/// raw body, on one short line.
pub(crate) fn server_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        let error = v.get("error").unwrap_or(v);
        error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.as_str())
            .map(String::from)
    });
    excerpt(&message.unwrap_or_else(|| body.to_string()))
}

/// One line, at most `BODY_EXCERPT_CHARS` characters.
pub(crate) fn excerpt(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= BODY_EXCERPT_CHARS {
        return line;
    }
    let cut: String = line.chars().take(BODY_EXCERPT_CHARS).collect();
    format!("{cut}…")
}

/// The innermost cause ("Connection refused (os error 111)"), which says
/// more than reqwest's "error sending request for url".
pub(crate) fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(source) = cause.source() {
        cause = source;
    }
    excerpt(&cause.to_string())
}
