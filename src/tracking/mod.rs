//! Usage and cost.

use crate::config::Pricing;
use crate::providers::Usage;

/// Cost in USD of one request; local models cost nothing unless priced.
pub fn cost_usd(pricing: Option<&Pricing>, usage: &Usage) -> f64 {
    let Some(p) = pricing else { return 0.0 };
    let cached_rate = p.cached_input_per_mtok.unwrap_or(p.input_per_mtok);
    let uncached = usage.input_tokens.saturating_sub(usage.cached_tokens);
    (uncached as f64 * p.input_per_mtok
        + usage.cached_tokens as f64 * cached_rate
        + usage.output_tokens as f64 * p.output_per_mtok)
        / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_cached_tokens_separately() {
        let p = Pricing {
            input_per_mtok: 3.0,
            output_per_mtok: 15.0,
            cached_input_per_mtok: Some(0.3),
        };
        let u = Usage {
            input_tokens: 1_000_000,
            cached_tokens: 500_000,
            output_tokens: 100_000,
            ..Default::default()
        };
        let c = cost_usd(Some(&p), &u);
        assert!((c - (1.5 + 0.15 + 1.5)).abs() < 1e-9, "{c}");
        assert_eq!(cost_usd(None, &u), 0.0);
    }
}
