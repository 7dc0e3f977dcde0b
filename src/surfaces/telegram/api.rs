//! Bot API calls with the bridge's resilience: a network error or a 429
//! (`retry_after`) is retried with backoff; everything else is final.
//! Errors are described in one line without the token (reqwest's errors
//! name the URL, and the token is part of every Bot API URL).

use std::future::Future;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use teloxide::{ApiError, RequestError};

/// How often a call is tried when the network fails or Telegram says
/// "too many requests".
const ATTEMPTS: u32 = 5;
/// A `retry_after` longer than this is not waited for (the message is
/// given up; the answer stays in the transcript).
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Why a call failed, as the bridge acts on it.
#[derive(Debug)]
pub enum Failure {
    /// 401: the token was revoked or is wrong. Nothing will work.
    Unauthorized,
    /// Telegram could not parse the message's HTML.
    BadHtml(String),
    /// Anything else, described (token-free).
    Other(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Unauthorized => f.write_str(UNAUTHORIZED),
            Failure::BadHtml(why) | Failure::Other(why) => f.write_str(why),
        }
    }
}

pub const UNAUTHORIZED: &str = "Telegram rejected the token (TELEGRAM_BOT_TOKEN)";

/// After the n-th failure in a row: 1 s, 2 s, 4 s… up to `cap`.
pub fn backoff(failures: u32, cap: Duration) -> Duration {
    let secs = 1u64 << failures.saturating_sub(1).min(10);
    Duration::from_secs(secs).min(cap)
}

/// What to do about an error of one attempt.
pub enum Next {
    Retry(Duration),
    Fail(Failure),
}

/// Classifies `error` after `failures` attempts failed in a row.
pub fn next(error: &RequestError, failures: u32, token: &SecretString) -> Next {
    match error {
        RequestError::Api(ApiError::InvalidToken) => Next::Fail(Failure::Unauthorized),
        RequestError::Api(ApiError::CantParseEntities(why)) => {
            Next::Fail(Failure::BadHtml(why.clone()))
        }
        RequestError::RetryAfter(after) => {
            let after = after.duration().max(Duration::from_millis(100));
            if after > MAX_RETRY_AFTER {
                Next::Fail(Failure::Other(format!(
                    "Telegram asks to wait {}s before sending again",
                    after.as_secs()
                )))
            } else {
                Next::Retry(after)
            }
        }
        RequestError::Network(_) | RequestError::Io(_) => {
            Next::Retry(backoff(failures, Duration::from_secs(30)))
        }
        other => Next::Fail(Failure::Other(describe(other, token))),
    }
}

/// One line for the log and the status, without the token.
pub fn describe(error: &RequestError, token: &SecretString) -> String {
    let text = match error {
        RequestError::Api(e) => format!("Telegram refused: {e}"),
        RequestError::Network(e) => format!("cannot reach Telegram: {e}"),
        RequestError::InvalidJson { .. } => "Telegram sent an answer egirl cannot read".into(),
        other => other.to_string(),
    };
    let secret = token.expose_secret();
    if secret.is_empty() {
        text
    } else {
        text.replace(secret, "[redacted:TELEGRAM_BOT_TOKEN]")
    }
}

/// Runs `call` until it succeeds, fails for good, or has been tried
/// `ATTEMPTS` times (network errors and 429s are retried).
pub async fn retrying<T, F, Fut>(what: &str, token: &SecretString, call: F) -> Result<T, Failure>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, RequestError>>,
{
    let mut failures = 0;
    loop {
        match call().await {
            Ok(value) => return Ok(value),
            Err(e) => {
                failures += 1;
                match next(&e, failures, token) {
                    Next::Retry(wait) if failures < ATTEMPTS => {
                        tracing::debug!(
                            "telegram: {what} failed ({}); retrying in {} ms",
                            describe(&e, token),
                            wait.as_millis()
                        );
                        tokio::time::sleep(wait).await;
                    }
                    Next::Retry(_) => return Err(Failure::Other(describe(&e, token))),
                    Next::Fail(failure) => return Err(failure),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_caps() {
        let cap = Duration::from_secs(30);
        assert_eq!(backoff(1, cap), Duration::from_secs(1));
        assert_eq!(backoff(3, cap), Duration::from_secs(4));
        assert_eq!(backoff(40, cap), cap);
    }

    #[test]
    fn the_token_never_shows_in_a_description() {
        let token = SecretString::from("123:secret-token-value".to_string());
        let error = RequestError::Api(ApiError::Unknown(
            "Bad Request: bot123:secret-token-value".into(),
        ));
        let shown = describe(&error, &token);
        assert!(!shown.contains("secret-token-value"), "{shown}");
    }

    #[test]
    fn revoked_token_fails_at_once_and_429_waits_as_told() {
        let token = SecretString::from(String::new());
        assert!(matches!(
            next(&RequestError::Api(ApiError::InvalidToken), 1, &token),
            Next::Fail(Failure::Unauthorized)
        ));
        let after = teloxide::types::Seconds::from_seconds(3);
        assert!(matches!(
            next(&RequestError::RetryAfter(after), 1, &token),
            Next::Retry(d) if d == Duration::from_secs(3)
        ));
    }
}
