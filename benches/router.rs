//! Router decision time: `Router::decide` on a 2,000-character
//! message with 50 skills loaded; target p50 under 50 µs.
//!
//! `cargo bench --bench router` (figures in docs/benchmarks.md). Three messages
//! of exactly 2,000 characters: the user's own words in one paragraph (the
//! worst case: every word goes through the lexicon and the skill index), a
//! short request with a pasted email, and a short request with pasted code.
//! After criterion, each is timed over single calls and the percentiles are
//! printed (`EGIRL_BENCH_CALLS=N`, default 20000), with the time of the
//! first `Router::new` of the process (it builds the lexicon).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use egirl::config::RoutingConfig;
use egirl::protocol::Target;
use egirl::routing::{Category, RouteInput, Router, SkillComplexity, SkillHint, SkillIndex};

const MESSAGE_CHARS: usize = 2000;
const SKILLS: usize = 50;

/// The user's own words, one paragraph, ending with the ask.
fn prose_request() -> String {
    let sentences = [
        "So I've been keeping my reading notes in a folder of markdown files for about three years now, one file per book, with the date I finished it, a rating and a few quotes.",
        "Lately I started exporting highlights from my e-reader as well, which come out as a CSV with the book title, the location, the highlighted text and a timestamp.",
        "What I would like is a small tool that reads that export every evening, matches each highlight to the right notes file by title (the titles are not always spelled the same way), and appends the new quotes under a Highlights heading without duplicating the ones that are already there.",
        "It should also keep a little index file that lists every book with its rating so I can sort them later, and it would be nice if it could tell me which books have no notes at all yet.",
        "I'm fine with running it from cron, and I would rather not pull in a database for this, plain files are what I trust.",
    ];
    let ask = " Can you write the importer in Rust, with tests for the fuzzy title matching?";
    let mut text = String::new();
    'fill: loop {
        for sentence in sentences {
            if text.len() + sentence.len() + 1 + ask.len() > MESSAGE_CHARS {
                break 'fill;
            }
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(sentence);
        }
    }
    text.push_str(ask);
    pad(text, ' ')
}

/// A short request and a pasted email.
fn pasted_email() -> String {
    let mut text = String::from(
        "summarize this email for me\n\nFrom: Daniel Okafor <d.okafor@example.org>\nTo: team@example.org\nSubject: Re: Server migration and the plan for next sprint\n\nHi everyone,\n\n",
    );
    let body = "Following up on Tuesday's call. We agreed to move the staging server to the new rack on the 14th; ops will handle the hardware, and we need to review the deployment scripts and write down anything that hardcodes the old addresses. Priya will debug the flaky backup job before then. ";
    while text.len() + body.len() < MESSAGE_CHARS - 20 {
        text.push_str(body);
    }
    text.push_str("\n\nBest,\nDaniel");
    pad(text, '\n')
}

/// A short request and a pasted function.
fn pasted_code() -> String {
    let mut text = String::from("why is this so slow?\n```rust\n");
    let line = "    for (i, item) in items.iter().enumerate() { if seen.contains(&item.id) { continue; } out.push(i); }\n";
    while text.len() + line.len() < MESSAGE_CHARS - 4 {
        text.push_str(line);
    }
    text.push_str("```");
    pad(text, '\n')
}

/// Exactly `MESSAGE_CHARS` characters: the texts are built just under it
/// (ASCII) and padded with trailing whitespace.
fn pad(mut text: String, with: char) -> String {
    assert!(text.len() <= MESSAGE_CHARS, "{} characters", text.len());
    while text.len() < MESSAGE_CHARS {
        text.push(with);
    }
    text
}

/// 50 skills as a workspace might have them: names, a trigger or two, a
/// third of each complexity; none of them named by the messages, so every
/// word is looked up and none matches.
fn skills() -> SkillIndex {
    const WORDS: &[&str] = &[
        "weather",
        "github",
        "pdf",
        "calendar",
        "spotify",
        "notion",
        "obsidian",
        "todoist",
        "slack",
        "gmail",
        "jira",
        "linear",
        "figma",
        "docker",
        "kubectl",
        "aws",
        "gcloud",
        "stripe",
        "shopify",
        "twitter",
        "youtube",
        "podcast",
        "recipe",
        "fitness",
        "sleep",
        "finance",
        "budget",
        "invoice",
        "crypto",
        "stocks",
        "news",
        "arxiv",
        "wiki",
        "maps",
        "transit",
        "flights",
        "hotels",
        "translate",
        "ocr",
        "whisper",
        "tts",
        "image",
        "video",
        "zip",
        "backup",
        "ssh",
        "vpn",
        "dns",
        "homeassistant",
        "printer",
    ];
    let hints: Vec<SkillHint> = WORDS
        .iter()
        .take(SKILLS)
        .enumerate()
        .map(|(i, word)| SkillHint {
            name: format!("{word}-helper"),
            description: format!("Does {word} things from the terminal"),
            triggers: vec![
                format!("{word} helper please"),
                format!("use the {word} skill"),
            ],
            complexity: match i % 3 {
                0 => SkillComplexity::Local,
                1 => SkillComplexity::Remote,
                _ => SkillComplexity::Auto,
            },
        })
        .collect();
    assert_eq!(hints.len(), SKILLS);
    SkillIndex::new(&hints)
}

fn input<'a>(message: &'a str, skills: &'a SkillIndex) -> RouteInput<'a> {
    let mut input = RouteInput::new(message);
    input.skills = skills;
    input.prompt_tokens = 3_000;
    input.n_ctx = 32_768;
    input
}

fn cases() -> Vec<(&'static str, String, Target, Category)> {
    vec![
        ("own words", prose_request(), Target::Remote, Category::Code),
        (
            "pasted email",
            pasted_email(),
            Target::Local,
            Category::Summarize,
        ),
        (
            "pasted code",
            pasted_code(),
            Target::Remote,
            Category::Debugging,
        ),
    ]
}

fn router() -> Router {
    Router::new(&RoutingConfig::default()).expect("default routing config")
}

fn decide_benches(c: &mut Criterion) {
    let router = router();
    let skills = skills();
    let mut group = c.benchmark_group("router_decide_2000_chars_50_skills");
    for (name, message, target, category) in cases() {
        let decision = router.decide(&input(&message, &skills));
        assert_eq!(
            (decision.target, decision.category),
            (target, category),
            "{name}"
        );
        group.bench_function(name, |b| {
            b.iter(|| router.decide(black_box(&input(&message, &skills))))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = decide_benches
}

fn percentiles(label: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |p: f64| {
        let i = ((samples.len() as f64 * p).ceil() as usize).clamp(1, samples.len()) - 1;
        samples[i].as_secs_f64() * 1e6
    };
    println!(
        "{label:<14} n={:<6} p50 {:>7.2} µs  p90 {:>7.2} µs  p99 {:>7.2} µs  max {:>8.2} µs",
        samples.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
}

/// Each call timed on its own.
fn single_calls(calls: usize) {
    let router = router();
    let skills = skills();
    for (name, message, _, _) in cases() {
        let samples = (0..calls)
            .map(|_| {
                let start = Instant::now();
                black_box(router.decide(black_box(&input(&message, &skills))));
                start.elapsed()
            })
            .collect();
        percentiles(name, samples);
    }
}

/// The first `Router::new` (it builds the lexicon), criterion, then
/// single-call percentiles. Only criterion's smoke run happens in test mode
/// (`cargo test --benches` runs without `--bench`).
fn main() {
    let first = {
        let start = Instant::now();
        black_box(router());
        start.elapsed()
    };
    benches();
    Criterion::default().configure_from_args().final_summary();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--list") {
        return;
    }
    println!("first Router::new of the process (builds the lexicon): {first:?}");
    let calls = std::env::var("EGIRL_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    single_calls(calls);
}
