//! Usage and cost: every request's tokens and price, appended to
//! `.egirl/usage.jsonl` (`usage_log`), read back by `egirl stats`.

pub mod budget;
mod prices;
pub mod totals;
pub mod usage_log;

pub use prices::{builtin_price, price_for};
pub use usage_log::{spawn_usage_log, spawn_usage_log_counted};

use crate::chat::Usage;
use crate::config::Pricing;

/// The variable a debug build (the tests' binary) reads the time of the
/// usage log and the spend caps from (RFC 3339), so that a test can move
/// to another day. Release builds never read it.
pub const TEST_NOW_VAR: &str = "EGIRL_TEST_NOW";

/// The time usage is stamped and spend counted at.
pub fn now() -> chrono::DateTime<chrono::Utc> {
    #[cfg(debug_assertions)]
    if let Some(now) = std::env::var(TEST_NOW_VAR)
        .ok()
        .and_then(|v| chrono::DateTime::parse_from_rfc3339(&v).ok())
    {
        return now.with_timezone(&chrono::Utc);
    }
    chrono::Utc::now()
}

/// Cost in USD of one request; local models cost nothing unless priced.
/// Prompt tokens are billed in three parts: read from the provider's cache
/// (`cached_input_per_mtok`), written to it (`cache_write_per_mtok`), and
/// the rest at the input rate; a missing cache rate is the input rate.
pub fn cost_usd(pricing: Option<&Pricing>, usage: &Usage) -> f64 {
    let Some(p) = pricing else { return 0.0 };
    let read_rate = p.cached_input_per_mtok.unwrap_or(p.input_per_mtok);
    let write_rate = p.cache_write_per_mtok.unwrap_or(p.input_per_mtok);
    let uncached = usage
        .input_tokens
        .saturating_sub(usage.cached_tokens)
        .saturating_sub(usage.cache_write_tokens);
    (uncached as f64 * p.input_per_mtok
        + usage.cached_tokens as f64 * read_rate
        + usage.cache_write_tokens as f64 * write_rate
        + usage.output_tokens as f64 * p.output_per_mtok)
        / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn prices_cached_tokens_separately() {
        let p = Pricing {
            input_per_mtok: 3.0,
            output_per_mtok: 15.0,
            cached_input_per_mtok: Some(0.3),
            cache_write_per_mtok: None,
        };
        let u = Usage {
            input_tokens: 1_000_000,
            cached_tokens: 500_000,
            output_tokens: 100_000,
            ..Default::default()
        };
        let c = cost_usd(Some(&p), &u);
        assert!(close(c, 1.5 + 0.15 + 1.5), "{c}");
        assert_eq!(cost_usd(None, &u), 0.0);
    }

    #[test]
    fn cache_writes_are_billed_at_their_own_rate() {
        // Sonnet 4.5: 3 in, 15 out, 0.30 cache read, 3.75 cache write.
        let p = builtin_price("claude-sonnet-4-5-20250929").expect("priced");
        let u = Usage {
            input_tokens: 12_000,
            cached_tokens: 8_000,
            cache_write_tokens: 3_000,
            output_tokens: 500,
            ..Default::default()
        };
        // 1,000 uncached × 3 + 8,000 × 0.30 + 3,000 × 3.75 + 500 × 15, per million.
        let expected = (1_000.0 * 3.0 + 8_000.0 * 0.3 + 3_000.0 * 3.75 + 500.0 * 15.0) / 1e6;
        assert!(close(cost_usd(Some(&p), &u), expected));
    }

    #[test]
    fn openai_cached_input_is_discounted() {
        // gpt-4.1: 2 in, 8 out, 0.50 cached.
        let p = builtin_price("gpt-4.1-2025-04-14").expect("priced");
        let u = Usage {
            input_tokens: 10_000,
            cached_tokens: 6_000,
            output_tokens: 1_000,
            ..Default::default()
        };
        let expected = (4_000.0 * 2.0 + 6_000.0 * 0.5 + 1_000.0 * 8.0) / 1e6;
        assert!(close(cost_usd(Some(&p), &u), expected));
    }

    #[test]
    fn counts_that_do_not_add_up_never_go_negative() {
        let p = builtin_price("claude-haiku-4-5").expect("priced");
        let u = Usage {
            input_tokens: 10,
            cached_tokens: 50,
            cache_write_tokens: 50,
            ..Default::default()
        };
        assert!(cost_usd(Some(&p), &u) >= 0.0);
    }
}
