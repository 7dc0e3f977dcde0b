//! When to try a remote request again, and how long to wait first.
//!
//! 429 and 5xx (Anthropic's 529 "overloaded" included) and connection
//! failures are retried, at most `max_retries` times, never once a reply
//! has started streaming. The wait is what the server asked for
//! (`retry-after-ms`, `retry-after` in seconds or as an HTTP date, or the
//! reset time of an exhausted rate limit), else exponential backoff with
//! jitter; either is capped at `max_delay`.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::header::HeaderMap;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    /// The first backoff (doubled each retry) when the server names no wait.
    pub base_delay: Duration,
    /// No wait is longer, whatever the server asks: a user is watching.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// One attempt only.
    pub fn never() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The wait before retry number `retry` (0 for the first): the server's
    /// hint when it gave one, else `base_delay · 2^retry` scaled by
    /// `0.5 + jitter / 2` (`jitter` in 0..1), so clients that failed
    /// together do not come back together.
    pub fn delay(&self, retry: u32, server_hint: Option<Duration>, jitter: f64) -> Duration {
        if let Some(hint) = server_hint {
            return hint.min(self.max_delay);
        }
        let backoff = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry.min(16)));
        backoff
            .mul_f64(0.5 + jitter.clamp(0.0, 1.0) / 2.0)
            .min(self.max_delay)
    }
}

/// Whether an HTTP status is worth another try.
pub(crate) fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429) || ((500..=599).contains(&status) && !matches!(status, 501 | 505))
}

/// A number in 0..1 that differs from call to call (std's randomly seeded
/// hasher: jitter needs no more than that, and no extra crate).
pub(crate) fn jitter() -> f64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// How long the server asked us to wait, from the headers of a 429 or 5xx.
pub(crate) fn server_hint(headers: &HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    for name in ["retry-after-ms", "x-ms-retry-after-ms"] {
        if let Some(ms) = header(name).and_then(|v| v.trim().parse::<f64>().ok()) {
            return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
        }
    }
    if let Some(value) = header("retry-after") {
        return retry_after(value, now);
    }
    exhausted_limit_reset(headers, now)
}

/// `Retry-After`: delta-seconds or an HTTP date.
fn retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return secs
            .is_finite()
            .then(|| Duration::from_secs_f64(secs.max(0.0)));
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?;
    Some(until(at.with_timezone(&Utc), now))
}

/// The latest reset among the rate limits that are used up: Anthropic's
/// `anthropic-ratelimit-<kind>-remaining: 0` with an RFC 3339
/// `...-reset`, OpenAI's `x-ratelimit-remaining-<kind>: 0` with a
/// duration `x-ratelimit-reset-<kind>` ("6m0s", "1.5s", "20ms").
fn exhausted_limit_reset(headers: &HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let header = |name: String| {
        headers
            .get(name.as_str())
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .map(String::from)
    };
    let used_up = |name: String| header(name).is_some_and(|v| v == "0");
    let mut latest: Option<Duration> = None;
    for kind in ["requests", "tokens", "input-tokens", "output-tokens"] {
        let anthropic = used_up(format!("anthropic-ratelimit-{kind}-remaining"))
            .then(|| header(format!("anthropic-ratelimit-{kind}-reset")))
            .flatten()
            .and_then(|v| DateTime::parse_from_rfc3339(&v).ok())
            .map(|at| until(at.with_timezone(&Utc), now));
        let openai = used_up(format!("x-ratelimit-remaining-{kind}"))
            .then(|| header(format!("x-ratelimit-reset-{kind}")))
            .flatten()
            .and_then(|v| go_duration(&v));
        for wait in [anthropic, openai].into_iter().flatten() {
            latest = Some(latest.map_or(wait, |l| l.max(wait)));
        }
    }
    latest
}

fn until(at: DateTime<Utc>, now: DateTime<Utc>) -> Duration {
    (at - now).to_std().unwrap_or(Duration::ZERO)
}

/// Go's duration format as OpenAI writes it: "6m0s", "1.5s", "20ms", "1h2m".
fn go_duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total = 0.0;
    while !rest.is_empty() {
        let number_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let number: f64 = rest[..number_len].parse().ok()?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "ms" => number / 1000.0,
            "s" => number,
            "m" => number * 60.0,
            "h" => number * 3600.0,
            _ => return None,
        };
        total += seconds;
        rest = &rest[unit_len..];
    }
    Some(Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).expect("header value"));
        }
        map
    }

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2025-06-01T12:00:00Z")
            .expect("date")
            .with_timezone(&Utc)
    }

    #[test]
    fn retry_after_in_seconds_and_as_a_date() {
        let hint = |pairs: &[(&'static str, &str)]| server_hint(&headers(pairs), now());
        assert_eq!(hint(&[("retry-after", "7")]), Some(Duration::from_secs(7)));
        assert_eq!(
            hint(&[("retry-after", "Sun, 01 Jun 2025 12:00:12 GMT")]),
            Some(Duration::from_secs(12))
        );
        // A date already past: no wait.
        assert_eq!(
            hint(&[("retry-after", "Sun, 01 Jun 2025 11:00:00 GMT")]),
            Some(Duration::ZERO)
        );
        assert_eq!(
            hint(&[("retry-after-ms", "1500"), ("retry-after", "9")]),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(hint(&[("retry-after", "soon")]), None);
        assert_eq!(hint(&[]), None);
    }

    #[test]
    fn reset_of_an_exhausted_limit() {
        let anthropic = headers(&[
            ("anthropic-ratelimit-requests-remaining", "12"),
            ("anthropic-ratelimit-requests-reset", "2025-06-01T12:00:40Z"),
            ("anthropic-ratelimit-tokens-remaining", "0"),
            ("anthropic-ratelimit-tokens-reset", "2025-06-01T12:00:05Z"),
        ]);
        assert_eq!(server_hint(&anthropic, now()), Some(Duration::from_secs(5)));
        let openai = headers(&[
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "1.5s"),
            ("x-ratelimit-remaining-tokens", "0"),
            ("x-ratelimit-reset-tokens", "1m2s"),
        ]);
        assert_eq!(server_hint(&openai, now()), Some(Duration::from_secs(62)));
        assert_eq!(go_duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(go_duration("6x"), None);
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay(0, None, 0.0), Duration::from_millis(500));
        assert_eq!(policy.delay(0, None, 1.0), Duration::from_secs(1));
        assert_eq!(policy.delay(2, None, 1.0), Duration::from_secs(4));
        assert_eq!(policy.delay(10, None, 1.0), Duration::from_secs(30));
        // The server's wait wins over backoff, within the cap.
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(7)), 0.9),
            Duration::from_secs(7)
        );
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(600)), 0.0),
            Duration::from_secs(30)
        );
        for _ in 0..100 {
            let j = jitter();
            assert!((0.0..1.0).contains(&j), "{j}");
        }
    }

    #[test]
    fn which_statuses_are_retried() {
        for status in [408, 429, 500, 502, 503, 504, 529] {
            assert!(retryable_status(status), "{status}");
        }
        for status in [400, 401, 403, 404, 413, 422, 501] {
            assert!(!retryable_status(status), "{status}");
        }
    }
}
