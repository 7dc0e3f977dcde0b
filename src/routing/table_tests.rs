//! The routing table: agreement with a careful user's labels on
//! `tests/data/routing.tsv` (the set the heuristics were built on) and
//! `tests/data/routing_heldout.tsv` (written before them, never tuned on),
//! next to egirl's original keyword router (the seed's heuristics.ts and
//! rules.ts, ported below) on the same sets.
//!
//! These live in the library's tests, not in `tests/`, so they run with
//! `cargo test --lib routing` whatever state the integration binary is in.
//! `cargo test --lib routing::table_tests -- --nocapture` prints every miss.

use std::collections::BTreeMap;

use super::{Category, RouteInput, Router};
use crate::config::RoutingConfig;
use crate::protocol::Target;

const TABLE: &str = include_str!("../../tests/data/routing.tsv");
const HELDOUT: &str = include_str!("../../tests/data/routing_heldout.tsv");

struct Row {
    label: Target,
    category: String,
    lang: String,
    message: String,
}

fn parse(tsv: &str) -> Vec<Row> {
    tsv.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.splitn(4, '\t').collect();
            assert_eq!(fields.len(), 4, "bad row: {line}");
            let label = match fields[0] {
                "local" => Target::Local,
                "remote" => Target::Remote,
                other => panic!("bad label {other:?} in: {line}"),
            };
            assert!(
                Category::from_name(fields[1]).is_some(),
                "unknown category {:?}",
                fields[1]
            );
            Row {
                label,
                category: fields[1].to_string(),
                lang: fields[2].to_string(),
                message: unescape(fields[3]),
            }
        })
        .collect()
}

/// `\n`, `\t`, `\"` and `\\` as the TSV writes them.
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[derive(Default)]
struct Tally {
    total: usize,
    agree: usize,
    local: usize,
    local_kept: usize,
    remote: usize,
    remote_escalated: usize,
    category_agree: usize,
    unsure: usize,
    misses: Vec<String>,
    /// Right side, other category (or unsure): shown, not counted as misses.
    notes: Vec<String>,
    by_category: BTreeMap<String, (usize, usize)>,
    by_lang: BTreeMap<String, (usize, usize)>,
}

impl Tally {
    fn add(&mut self, row: &Row, got: Target, detail: &str) {
        let ok = got == row.label;
        self.total += 1;
        self.agree += usize::from(ok);
        match row.label {
            Target::Local => {
                self.local += 1;
                self.local_kept += usize::from(ok);
            }
            Target::Remote => {
                self.remote += 1;
                self.remote_escalated += usize::from(ok);
            }
        }
        let entry = self.by_category.entry(row.category.clone()).or_default();
        entry.0 += usize::from(ok);
        entry.1 += 1;
        let entry = self.by_lang.entry(row.lang.clone()).or_default();
        entry.0 += usize::from(ok);
        entry.1 += 1;
        if !ok {
            let message: String = row.message.chars().take(90).collect();
            self.misses.push(format!(
                "  want {} ({}), got {got}: {detail} | {:?}",
                row.label, row.category, message
            ));
        }
    }

    fn overall(&self) -> f64 {
        ratio(self.agree, self.total)
    }
    fn local_rate(&self) -> f64 {
        ratio(self.local_kept, self.local)
    }
    fn remote_rate(&self) -> f64 {
        ratio(self.remote_escalated, self.remote)
    }

    fn report(&self, name: &str) -> String {
        let mut out = format!(
            "{name}: {}/{} agree ({:.1}%); local kept {}/{} ({:.1}%); remote escalated {}/{} ({:.1}%)",
            self.agree,
            self.total,
            100.0 * self.overall(),
            self.local_kept,
            self.local,
            100.0 * self.local_rate(),
            self.remote_escalated,
            self.remote,
            100.0 * self.remote_rate(),
        );
        if self.category_agree > 0 || self.unsure > 0 {
            out.push_str(&format!(
                "; category {}/{}; unsure {}",
                self.category_agree, self.total, self.unsure
            ));
        }
        out.push_str("\n  per category:");
        for (category, (ok, n)) in &self.by_category {
            out.push_str(&format!(" {category} {ok}/{n},"));
        }
        out.push_str("\n  per language:");
        for (lang, (ok, n)) in &self.by_lang {
            out.push_str(&format!(" {lang} {ok}/{n},"));
        }
        if !self.misses.is_empty() {
            out.push_str("\n  misses:\n");
            out.push_str(&self.misses.join("\n"));
        }
        if !self.notes.is_empty() {
            out.push_str("\n  right side, other category or unsure:\n");
            out.push_str(&self.notes.join("\n"));
        }
        out
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

fn run_router(rows: &[Row]) -> Tally {
    let router = Router::new(&RoutingConfig::default()).expect("default config");
    let mut tally = Tally::default();
    for row in rows {
        let decision = router.decide(&RouteInput::new(&row.message));
        assert!(
            decision.reason.starts_with(decision.category.label()),
            "reason {:?} does not name category {:?}",
            decision.reason,
            decision.category
        );
        tally.category_agree += usize::from(decision.category.as_str() == row.category);
        tally.unsure += usize::from(decision.unsure);
        let detail = format!(
            "{} [{}, {:.2}{}]",
            decision.reason,
            decision.category.as_str(),
            decision.confidence,
            if decision.unsure { ", unsure" } else { "" }
        );
        if decision.target == row.label
            && (decision.unsure || decision.category.as_str() != row.category)
        {
            let message: String = row.message.chars().take(70).collect();
            tally
                .notes
                .push(format!("  ({}) {detail} | {message:?}", row.category));
        }
        tally.add(row, decision.target, &detail);
    }
    tally
}

fn run_baseline(rows: &[Row]) -> Tally {
    let mut tally = Tally::default();
    for row in rows {
        let (target, reason) = baseline::route(&row.message);
        tally.add(row, target, reason);
    }
    tally
}

#[test]
fn routing_table_agrees_with_a_careful_user() {
    let rows = parse(TABLE);
    assert!(rows.len() >= 100, "the table has {} rows", rows.len());
    let tally = run_router(&rows);
    let report = tally.report("router, routing.tsv");
    println!("{report}");
    println!(
        "{}",
        run_baseline(&rows).report("seed keyword router, routing.tsv")
    );
    assert!(tally.overall() >= 0.90, "{report}");
    assert!(tally.local_rate() >= 0.95, "{report}");
    assert!(tally.remote_rate() >= 0.85, "{report}");
}

#[test]
fn heldout_agreement_is_reported() {
    let rows = parse(HELDOUT);
    let tally = run_router(&rows);
    let report = tally.report("router, routing_heldout.tsv");
    println!("{report}");
    println!(
        "{}",
        run_baseline(&rows).report("seed keyword router, routing_heldout.tsv")
    );
}

#[test]
fn table_rows_parse_with_escapes() {
    assert_eq!(unescape(r#"a\nb\tc \"q\" \\n"#), "a\nb\tc \"q\" \\n");
    let rows = parse(TABLE);
    assert!(rows.iter().any(|r| r.message.contains("```rust\n")));
}

/// egirl's original router (TypeScript: src/routing/heuristics.ts,
/// rules.ts, model-router.ts), ported for comparison with the default
/// config: no always_* rules, no skills, a remote provider configured.
mod baseline {
    use crate::protocol::Target;

    const STRONG_CODE: &[&str] = &[
        "write code",
        "create a function",
        "fix this code",
        "write a script",
        "create a class",
        "write tests",
        "unit test",
        "code review",
    ];
    const WEAK_CODE: &[&str] = &[
        "implement",
        "build a",
        "develop",
        "refactor",
        "debug",
        "optimize",
    ];
    const REASONING: &[&str] = &[
        "explain in detail",
        "analyze",
        "compare and contrast",
        "evaluate",
        "what are the implications",
        "why does",
        "how does this work",
        "step by step",
        "reasoning",
        "logic behind",
    ];
    const SIMPLE: &[&str] = &[
        "hi",
        "hello",
        "hey",
        "thanks",
        "thank you",
        "bye",
        "goodbye",
        "what time",
        "what's the weather",
        "how are you",
    ];
    /// The tool regexes (`/read\s+(?:the\s+)?file/i`, ...) spelled out; the
    /// content's whitespace is collapsed first, as `\s+` would match it.
    const TOOL_PHRASES: &[&str] = &[
        "read file",
        "read the file",
        "write file",
        "write to file",
        "write the file",
        "write to the file",
        "execute command",
        "execute the command",
        "run command",
        "run the command",
        "run script",
        "run the script",
        "search for",
        "search in",
        "find file",
        "find in",
        "list file",
        "list director",
        "remember that",
        "remember this",
        "recall what",
        "recall when",
    ];

    fn any(content: &str, list: &[&str]) -> bool {
        list.iter().any(|k| content.contains(k))
    }

    /// (target, reason) as the seed's `Router.route` returns them.
    pub fn route(message: &str) -> (Target, &'static str) {
        let content = message.to_lowercase();
        let words = content.split_whitespace().count();
        let collapsed = content.split_whitespace().collect::<Vec<_>>().join(" ");
        let has_fence = content.contains("```");

        // analyzeMessageHeuristics: (shouldEscalate, reason, confidence)
        let heuristic: (bool, &str, f64) = if words <= 3 && any(&content, SIMPLE) {
            (false, "simple_greeting", 0.95)
        } else if any(&content, STRONG_CODE) {
            (true, "code_generation", 0.8)
        } else if any(&content, WEAK_CODE) && words > 5 {
            (true, "code_generation", 0.75)
        } else if any(&content, REASONING) && words > 10 {
            (true, "complex_reasoning", 0.7)
        } else if any(&collapsed, TOOL_PHRASES) {
            (false, "tool_use", 0.6)
        } else if has_fence {
            (true, "code_discussion", 0.75)
        } else if words > 100 {
            (true, "long_context", 0.6)
        } else {
            (false, "default", 0.5)
        };

        // estimateComplexity, then the rules sorted by priority.
        let keywords = any(&content, STRONG_CODE) || any(&content, WEAK_CODE);
        // "complex" is over 100 words without a fence (the trivial and
        // simple tiers need 20 words or fewer).
        let complex = words > 100 && !has_fence;
        let (mut target, mut reason) = if words <= 5 && !has_fence && !keywords {
            (Target::Local, "trivial_local")
        } else if complex {
            (Target::Remote, "complex_remote")
        } else {
            (Target::Local, "default")
        };
        if heuristic.0 && heuristic.2 > 0.7 {
            target = Target::Remote;
            reason = heuristic.1;
        }
        (target, reason)
    }
}
