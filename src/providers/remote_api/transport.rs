//! The HTTP side every remote provider shares: the key as a header (marked
//! sensitive, scrubbed from any error text), retries before a reply starts,
//! the idle timeout between chunks, and interrupts.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::retry::{self, RetryPolicy};
use crate::config::ConfigDuration;
use crate::providers::ProviderError;
use crate::providers::bounds;
use crate::providers::http::{excerpt, http_error, root_cause, server_message};
use crate::providers::sse::{SseEvent, SseParser};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Reading an error body: it is small and comes at once, or not at all.
const ERROR_BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// How the key travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyHeader {
    /// `Authorization: Bearer <key>` (OpenAI and compatible servers).
    Bearer,
    /// `x-api-key: <key>` (Anthropic).
    XApiKey,
    /// `api-key: <key>` (Azure OpenAI).
    ApiKey,
}

/// Whether the SSE reader goes on after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    More,
    /// The reply is complete (`message_stop`, `[DONE]`): stop reading.
    Done,
}

#[derive(Clone, Debug)]
pub(crate) struct Transport {
    client: reqwest::Client,
    /// "anthropic", "openai", "azure": named in errors.
    pub provider: &'static str,
    /// The variable the key came from, named when the key is refused.
    pub key_var: &'static str,
    key: SecretString,
    key_header: KeyHeader,
    /// The base URL, shown in errors (never a key, never a query string).
    pub endpoint: String,
    /// The longest wait for the next byte, not for the whole reply.
    pub idle_timeout: Duration,
    pub retry: RetryPolicy,
}

impl Transport {
    pub fn new(
        provider: &'static str,
        key_var: &'static str,
        key: SecretString,
        key_header: KeyHeader,
        endpoint: &str,
        timeout: ConfigDuration,
    ) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .unwrap_or_default();
        // "0" in the config means no limit.
        let idle_timeout = if timeout.is_zero() {
            Duration::from_secs(365 * 24 * 3600)
        } else {
            timeout.0
        };
        Self {
            client,
            provider,
            key_var,
            key,
            key_header,
            endpoint: endpoint.to_string(),
            idle_timeout,
            retry: RetryPolicy::default(),
        }
    }

    /// POSTs `body` to `url` with the key and `extra` headers, retrying
    /// 429, 5xx and connection failures. Returns the first 2xx answer, its
    /// body unread.
    pub async fn post(
        &self,
        url: &str,
        extra: &HeaderMap,
        body: &Value,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, ProviderError> {
        let mut headers = extra.clone();
        let (name, value) = self.key_header()?;
        headers.insert(name, value);
        let mut retries = 0;
        loop {
            let send = self
                .client
                .post(url)
                .headers(headers.clone())
                .json(body)
                .send();
            let sent = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ProviderError::Interrupted),
                sent = tokio::time::timeout(self.idle_timeout, send) => sent,
            };
            let (error, hint) = match sent {
                Err(_) => return Err(self.timeout_error()),
                Ok(Err(e)) if e.is_connect() => (self.unreachable(&e), None),
                Ok(Err(e)) if e.is_timeout() => return Err(self.timeout_error()),
                Ok(Err(e)) => return Err(self.unreachable(&e)),
                Ok(Ok(response)) if response.status().is_success() => return Ok(response),
                Ok(Ok(response)) => {
                    let status = response.status().as_u16();
                    let hint = retry::server_hint(response.headers(), chrono::Utc::now());
                    let text = self.error_body(response).await;
                    let error = self.status_error(status, &text);
                    if !retry::retryable_status(status) {
                        return Err(error);
                    }
                    (error, hint)
                }
            };
            if retries >= self.retry.max_retries {
                return Err(gave_up(error, retries));
            }
            let delay = self.retry.delay(retries, hint, retry::jitter());
            retries += 1;
            tracing::warn!(
                provider = self.provider,
                "{error}; retry {retries}/{} in {delay:?}",
                self.retry.max_retries
            );
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ProviderError::Interrupted),
                _ = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// Reads a server-sent event stream to its end (or until `on_event`
    /// says `Done`), at most `idle_timeout` between chunks. Returns whether
    /// `on_event` finished it; false means the connection simply closed.
    pub async fn read_sse(
        &self,
        response: reqwest::Response,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(SseEvent) -> Result<Flow, ProviderError> + Send),
    ) -> Result<bool, ProviderError> {
        let mut bytes = response.bytes_stream();
        let mut parser = SseParser::new();
        loop {
            let next = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ProviderError::Interrupted),
                next = tokio::time::timeout(self.idle_timeout, bytes.next()) => next,
            };
            let (events, ended) = match next {
                Err(_) => return Err(self.timeout_error()),
                Ok(None) => (parser.finish(), true),
                Ok(Some(Err(e))) => {
                    return Err(ProviderError::Truncated {
                        endpoint: self.endpoint.clone(),
                        detail: root_cause(&e),
                    });
                }
                Ok(Some(Ok(chunk))) => (parser.feed(&chunk), false),
            };
            for event in events {
                if on_event(event)? == Flow::Done {
                    return Ok(true);
                }
            }
            if ended {
                return Ok(false);
            }
        }
    }

    /// Reads a whole JSON answer within the idle timeout.
    pub async fn read_json(
        &self,
        response: reqwest::Response,
        cancel: &CancellationToken,
    ) -> Result<Value, ProviderError> {
        let text = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ProviderError::Interrupted),
            body = tokio::time::timeout(self.idle_timeout, bounds::read_body(response, bounds::MAX_ANSWER_BYTES)) => match body {
                Err(_) => return Err(self.timeout_error()),
                Ok(Err(e)) => return Err(ProviderError::Truncated {
                    endpoint: self.endpoint.clone(),
                    detail: root_cause(&e),
                }),
                Ok(Ok(body)) if body.cut => return Err(bounds::answer_too_large(&self.endpoint)),
                Ok(Ok(body)) => body.text,
            },
        };
        serde_json::from_str(&text).map_err(|_| {
            self.bad_reply(&format!(
                "expected JSON, got: {}",
                excerpt(&self.scrub(&text))
            ))
        })
    }

    /// An error answer as one line: a refused key names the variable to
    /// check; everything else keeps the API's own message.
    pub fn status_error(&self, status: u16, body: &str) -> ProviderError {
        let body = self.scrub(body);
        if matches!(status, 401 | 403) {
            let detail = scrub_key_fragments(&server_message(&body));
            let detail = match detail.is_empty() {
                true if status == 401 => "unauthorized".to_string(),
                true => "forbidden".to_string(),
                false => detail,
            };
            return ProviderError::Auth {
                provider: self.provider.to_string(),
                status,
                key_var: self.key_var,
                detail,
            };
        }
        http_error(&self.endpoint, status, &body)
    }

    pub fn bad_reply(&self, detail: &str) -> ProviderError {
        ProviderError::BadReply {
            endpoint: self.endpoint.clone(),
            detail: self.scrub(detail),
        }
    }

    fn key_header(&self) -> Result<(HeaderName, HeaderValue), ProviderError> {
        let key = self.key.expose_secret();
        let (name, value) = match self.key_header {
            KeyHeader::Bearer => (reqwest::header::AUTHORIZATION, format!("Bearer {key}")),
            KeyHeader::XApiKey => (HeaderName::from_static("x-api-key"), key.to_string()),
            KeyHeader::ApiKey => (HeaderName::from_static("api-key"), key.to_string()),
        };
        let mut value = HeaderValue::from_str(&value).map_err(|_| ProviderError::Auth {
            provider: self.provider.to_string(),
            status: 0,
            key_var: self.key_var,
            detail: "the key holds characters an HTTP header cannot carry".into(),
        })?;
        // Keeps it out of reqwest's Debug output.
        value.set_sensitive(true);
        Ok((name, value))
    }

    async fn error_body(&self, response: reqwest::Response) -> String {
        let read = bounds::read_body(response, bounds::MAX_ERROR_BODY_BYTES);
        match tokio::time::timeout(self.idle_timeout.min(ERROR_BODY_TIMEOUT), read).await {
            Ok(Ok(body)) => body.text,
            _ => String::new(),
        }
    }

    /// The key, should a server ever echo it, never reaches an error.
    fn scrub(&self, text: &str) -> String {
        let key = self.key.expose_secret();
        if key.len() >= 8 && text.contains(key) {
            return text.replace(key, "[redacted]");
        }
        text.to_string()
    }

    fn unreachable(&self, e: &reqwest::Error) -> ProviderError {
        ProviderError::Unreachable {
            endpoint: self.endpoint.clone(),
            detail: root_cause(e),
        }
    }

    pub fn timeout_error(&self) -> ProviderError {
        ProviderError::Timeout {
            endpoint: self.endpoint.clone(),
            // Rounded up: a sub-second test timeout should not read "0s".
            secs: self.idle_timeout.as_secs_f64().ceil() as u64,
        }
    }
}

/// The last error, saying that retries were spent on it.
fn gave_up(error: ProviderError, retries: u32) -> ProviderError {
    if retries == 0 {
        return error;
    }
    let note = format!(" (gave up after {retries} retries)");
    match error {
        ProviderError::Http {
            endpoint,
            status,
            body,
        } => ProviderError::Http {
            endpoint,
            status,
            body: body + &note,
        },
        ProviderError::Unreachable { endpoint, detail } => ProviderError::Unreachable {
            endpoint,
            detail: detail + &note,
        },
        other => other,
    }
}

/// OpenAI's 401 quotes the key masked ("sk-proj-****abcd"): even the
/// fragment stays out.
fn scrub_key_fragments(text: &str) -> String {
    text.split(' ')
        .map(|word| {
            if word.contains("sk-") || word.contains("***") {
                "[redacted]"
            } else {
                word
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_key_fragments_are_dropped() {
        assert_eq!(
            scrub_key_fragments("Incorrect API key provided: sk-proj-****abcd. You can find..."),
            "Incorrect API key provided: [redacted] You can find..."
        );
    }

    #[test]
    fn gave_up_names_the_retries() {
        let error = gave_up(
            ProviderError::Http {
                endpoint: "http://x".into(),
                status: 503,
                body: "overloaded".into(),
            },
            3,
        );
        assert_eq!(
            error.to_string(),
            "http://x answered HTTP 503: overloaded (gave up after 3 retries)"
        );
    }
}
