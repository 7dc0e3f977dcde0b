//! The Telegram bridge's answer formatting: markdown to the Bot
//! API's HTML subset and the split under 4,096 characters, on a
//! 10,000-character answer (prose paragraphs and a 5,500-character code
//! block that has to be cut and reopened), and on a 10,000-character
//! single line full of characters to escape (the worst case: every cut is
//! searched for inside one block).
//!
//! `cargo bench --bench telegram_split` (figures in docs/benchmarks.md).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use egirl::surfaces::telegram::split::{TELEGRAM_LIMIT, split};

fn mixed_answer() -> String {
    let para = "All work and no play makes egirl a dull bot. ".repeat(20);
    let code: Vec<String> = (0..250)
        .map(|i| format!("let v{i:03} = {i} < 1000;"))
        .collect();
    format!(
        "{p}\n\n{p}\n\n{p}\n\n```rust\n{c}\n```\n\n{p}\n\n{p}\n\n{p}\n\nThe end.",
        p = para.trim_end(),
        c = code.join("\n")
    )
}

fn escaped_line() -> String {
    "a < b && c > d ".repeat(667)
}

fn bench(c: &mut Criterion) {
    for (name, answer) in [
        ("mixed 10k", mixed_answer()),
        ("one escaped line 10k", escaped_line()),
    ] {
        let parts = split(&answer, TELEGRAM_LIMIT).len();
        c.bench_function(&format!("split {name} ({parts} messages)"), |b| {
            b.iter(|| split(black_box(&answer), TELEGRAM_LIMIT))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
