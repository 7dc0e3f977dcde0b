//! What remote models cost: a built-in table of list prices (USD per
//! million tokens), overridable per model with `[pricing."<model>"]`.
//!
//! APIs answer with dated ids (`claude-sonnet-4-5-20250929`,
//! `gpt-4.1-2025-04-14`) or aliases (`claude-sonnet-4-5`), so a model is
//! matched to the longest table entry it equals or starts with followed by
//! `-`, `:` or `@`; an `org/` prefix (OpenRouter style) is ignored.
//! Anthropic's long-context surcharge (Sonnet 4.x prompts over 200k tokens)
//! is not modelled: egirl's windows stay far below it.

use std::collections::BTreeMap;

use crate::config::Pricing;

/// `(model, input, output, cache read, cache write)` per million tokens.
/// Anthropic bills cache writes (5-minute TTL) at 1.25× input and reads at
/// 0.1×; OpenAI caches by itself, reads at its listed cached rate, and
/// charges nothing extra for writes.
const BUILTIN: &[(&str, f64, f64, f64, Option<f64>)] = &[
    // Anthropic
    ("claude-opus-4-5", 5.0, 25.0, 0.50, Some(6.25)),
    ("claude-opus-4-1", 15.0, 75.0, 1.50, Some(18.75)),
    ("claude-opus-4", 15.0, 75.0, 1.50, Some(18.75)),
    ("claude-sonnet-4-5", 3.0, 15.0, 0.30, Some(3.75)),
    ("claude-sonnet-4", 3.0, 15.0, 0.30, Some(3.75)),
    ("claude-haiku-4-5", 1.0, 5.0, 0.10, Some(1.25)),
    ("claude-3-7-sonnet", 3.0, 15.0, 0.30, Some(3.75)),
    ("claude-3-5-sonnet", 3.0, 15.0, 0.30, Some(3.75)),
    ("claude-3-5-haiku", 0.80, 4.0, 0.08, Some(1.0)),
    ("claude-3-opus", 15.0, 75.0, 1.50, Some(18.75)),
    ("claude-3-haiku", 0.25, 1.25, 0.03, Some(0.30)),
    // OpenAI
    ("gpt-5.1", 1.25, 10.0, 0.125, None),
    ("gpt-5", 1.25, 10.0, 0.125, None),
    ("gpt-5-mini", 0.25, 2.0, 0.025, None),
    ("gpt-5-nano", 0.05, 0.40, 0.005, None),
    ("gpt-5-pro", 15.0, 120.0, 15.0, None),
    ("gpt-4.1", 2.0, 8.0, 0.50, None),
    ("gpt-4.1-mini", 0.40, 1.60, 0.10, None),
    ("gpt-4.1-nano", 0.10, 0.40, 0.025, None),
    ("gpt-4o", 2.50, 10.0, 1.25, None),
    ("gpt-4o-mini", 0.15, 0.60, 0.075, None),
    ("o1", 15.0, 60.0, 7.50, None),
    ("o1-mini", 1.10, 4.40, 0.55, None),
    ("o1-pro", 150.0, 600.0, 150.0, None),
    ("o3", 2.0, 8.0, 0.50, None),
    ("o3-mini", 1.10, 4.40, 0.55, None),
    ("o3-pro", 20.0, 80.0, 20.0, None),
    ("o4-mini", 1.10, 4.40, 0.275, None),
    ("text-embedding-3-small", 0.02, 0.0, 0.02, None),
    ("text-embedding-3-large", 0.13, 0.0, 0.13, None),
    ("text-embedding-ada-002", 0.10, 0.0, 0.10, None),
];

/// The price of a remote `model`: a `[pricing]` entry first (matched the
/// same way, so `[pricing."claude-sonnet-4-5"]` covers its dated ids), then
/// the built-in table. None for a model neither knows.
pub fn price_for(overrides: &BTreeMap<String, Pricing>, model: &str) -> Option<Pricing> {
    best_match(overrides.keys().map(String::as_str), model)
        .and_then(|key| overrides.get(key).cloned())
        .or_else(|| builtin_price(model))
}

/// The built-in list price of `model`, if the table knows it.
pub fn builtin_price(model: &str) -> Option<Pricing> {
    let key = best_match(BUILTIN.iter().map(|row| row.0), model)?;
    let &(_, input, output, read, write) = BUILTIN.iter().find(|row| row.0 == key)?;
    Some(Pricing {
        input_per_mtok: input,
        output_per_mtok: output,
        cached_input_per_mtok: Some(read),
        cache_write_per_mtok: write,
    })
}

/// The longest key `model` equals or extends (a dated id, a variant tag).
fn best_match<'a>(keys: impl Iterator<Item = &'a str>, model: &str) -> Option<&'a str> {
    let model = model.trim().to_ascii_lowercase();
    let model = model.rsplit('/').next().unwrap_or(&model);
    keys.filter(|key| {
        let key = key.to_ascii_lowercase();
        match model.strip_prefix(key.as_str()) {
            Some(rest) => rest.is_empty() || rest.starts_with(['-', ':', '@']),
            None => false,
        }
    })
    .max_by_key(|key| key.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input_rate(model: &str) -> Option<f64> {
        builtin_price(model).map(|p| p.input_per_mtok)
    }

    #[test]
    fn dated_ids_and_aliases_find_their_family() {
        assert_eq!(input_rate("claude-sonnet-4-5-20250929"), Some(3.0));
        assert_eq!(input_rate("claude-sonnet-4-5"), Some(3.0));
        assert_eq!(input_rate("claude-sonnet-4-20250514"), Some(3.0));
        assert_eq!(input_rate("claude-opus-4-5-20251101"), Some(5.0));
        assert_eq!(input_rate("claude-opus-4-1-20250805"), Some(15.0));
        assert_eq!(input_rate("claude-haiku-4-5-20251001"), Some(1.0));
        assert_eq!(input_rate("claude-3-5-haiku-20241022"), Some(0.80));
        assert_eq!(input_rate("gpt-4.1-mini-2025-04-14"), Some(0.40));
        assert_eq!(input_rate("gpt-4o-2024-08-06"), Some(2.50));
        assert_eq!(input_rate("gpt-4o-mini"), Some(0.15));
        assert_eq!(input_rate("gpt-5-mini-2025-08-07"), Some(0.25));
        assert_eq!(input_rate("o3-2025-04-16"), Some(2.0));
        assert_eq!(input_rate("o3-mini-2025-01-31"), Some(1.10));
        assert_eq!(input_rate("openai/gpt-5"), Some(1.25));
        assert_eq!(input_rate("Claude-Sonnet-4-5"), Some(3.0));
    }

    #[test]
    fn a_longer_name_is_not_a_shorter_model() {
        assert_eq!(input_rate("o3-pro"), Some(20.0));
        assert_eq!(input_rate("gpt-5-pro-2025-10-06"), Some(15.0));
        // "gpt-4" alone, "o30" and unknown models are not guessed.
        assert_eq!(input_rate("gpt-4"), None);
        assert_eq!(input_rate("o30"), None);
        assert_eq!(input_rate("qwen3-8b"), None);
        assert_eq!(input_rate("local"), None);
    }

    #[test]
    fn config_entries_win_and_match_dated_ids() {
        let mut overrides = BTreeMap::new();
        overrides.insert(
            "claude-sonnet-4-5".to_string(),
            Pricing {
                input_per_mtok: 1.0,
                output_per_mtok: 2.0,
                cached_input_per_mtok: None,
                cache_write_per_mtok: None,
            },
        );
        let p = price_for(&overrides, "claude-sonnet-4-5-20250929").expect("priced");
        assert_eq!((p.input_per_mtok, p.output_per_mtok), (1.0, 2.0));
        // Anything else still comes from the table.
        let p = price_for(&overrides, "claude-haiku-4-5").expect("priced");
        assert_eq!(p.input_per_mtok, 1.0);
        assert_eq!(p.output_per_mtok, 5.0);
        assert!(price_for(&overrides, "my-finetune").is_none());
    }
}
