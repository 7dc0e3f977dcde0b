//! The router through its public API: each config rule, the 0.8 n_ctx rule,
//! forced targets, the skill override, no remote keys, the four traps the
//! issue names, the classification hooks, and the `[routing]` config keys.
//!
//! The labeled routing table (agreement on `tests/data/routing.tsv` and the
//! held-out set, next to the seed's keyword router) runs in the library's
//! tests: `cargo test --lib routing::table_tests -- --nocapture`.

use std::path::Path;
use std::time::Duration;

use egirl::config::{self, RoutingConfig};
use egirl::protocol::Target;
use egirl::routing::{
    Category, DecidedBy, Decision, NO_REMOTE_REASON, RouteInput, Router, SkillComplexity,
    SkillHint, SkillIndex, classify,
};

fn router_with(tweak: impl FnOnce(&mut RoutingConfig)) -> Router {
    let mut config = RoutingConfig::default();
    tweak(&mut config);
    Router::new(&config).expect("valid routing config")
}

fn decide(router: &Router, message: &str) -> Decision {
    router.decide(&RouteInput::new(message))
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

const PASTED_EMAIL: &str = "summarize this email for me\n\n\
From: Daniel Okafor <d.okafor@example.org>\nSubject: Re: Server migration\n\n\
Hi everyone,\n\nWe need to review the deployment scripts, debug the flaky backup job, \
refactor the billing module and write the analysis of the churn data before the 14th. \
Please plan your vacations around the cutover.\n\nBest,\nDaniel";

#[test]
fn trap_implement_the_reminder_is_a_reminder() {
    let d = decide(&router_with(|_| {}), "implement the reminder for tomorrow");
    assert_eq!(d.target, Target::Local);
    assert_eq!(d.category, Category::Reminder);
    assert_eq!(d.reason, "reminder: reminder for");
    assert_eq!(d.decided_by, DecidedBy::Heuristics);
}

#[test]
fn trap_remember_then_write_in_rust_is_code() {
    let d = decide(
        &router_with(|_| {}),
        "remember the rate limiter we sketched? write it properly in Rust",
    );
    assert_eq!(d.target, Target::Remote);
    assert_eq!(d.category, Category::Code);
    assert_eq!(d.reason, "code: write … rust");
}

#[test]
fn trap_code_fence_in_save_this_snippet_is_a_file_task() {
    let d = decide(
        &router_with(|_| {}),
        "save this snippet to a file called retry.rs:\n```rust\npub fn retry() -> Result<(), String> {\n    Ok(())\n}\n```",
    );
    assert_eq!(d.target, Target::Local);
    assert_eq!(d.category, Category::FileTask);
    assert_eq!(d.reason, "file task: save this");
}

#[test]
fn trap_long_pasted_email_to_summarize_stays_local() {
    let d = decide(&router_with(|_| {}), PASTED_EMAIL);
    assert_eq!(d.target, Target::Local);
    assert_eq!(d.category, Category::Summarize);
    assert_eq!(d.reason, "summarize: summarize");
    assert!(!d.unsure);
}

#[test]
fn always_local_kind_rule_keeps_code_local() {
    let router = router_with(|c| c.always_local = strings(&["code"]));
    let d = decide(
        &router,
        "write a Rust function that parses ISO 8601 durations",
    );
    assert_eq!(d.target, Target::Local);
    assert_eq!(d.reason, "always_local rule \"code\"");
    assert_eq!(d.category, Category::Code);
    assert_eq!(d.decided_by, DecidedBy::Rule);
    // Other kinds are untouched.
    assert_eq!(
        decide(&router, "plan a 10-day trip through Japan").target,
        Target::Remote
    );
}

#[test]
fn always_remote_kind_rule_and_seed_aliases() {
    let router = router_with(|c| c.always_remote = strings(&["memory_search", "greeting"]));
    let d = decide(&router, "what did I say about the dentist appointment?");
    assert_eq!(d.target, Target::Remote);
    assert_eq!(d.reason, "always_remote rule \"memory_search\"");
    let d = decide(&router, "hey");
    assert_eq!(d.target, Target::Remote);
    assert_eq!(d.reason, "always_remote rule \"greeting\"");
}

#[test]
fn text_rules_match_phrases_ignoring_case_and_come_before_kind_rules() {
    let router = router_with(|c| {
        c.always_local = strings(&["code"]);
        c.always_remote = strings(&["text:Use Claude"]);
    });
    let d = decide(&router, "use claude: write a Rust function that sorts");
    assert_eq!(d.target, Target::Remote);
    assert_eq!(d.reason, "always_remote rule \"text:Use Claude\"");
}

#[test]
fn invalid_rules_are_rejected_with_the_list_and_the_rule() {
    let mut config = RoutingConfig {
        always_remote: strings(&["code_generation", "complicated_stuff"]),
        ..RoutingConfig::default()
    };
    let err = Router::new(&config).expect_err("unknown kind");
    let text = err.to_string();
    assert!(text.contains("always_remote"), "{text}");
    assert!(text.contains("\"complicated_stuff\""), "{text}");
    assert!(text.contains("text:<phrase>"), "{text}");

    config.always_remote = strings(&["text:"]);
    assert!(Router::new(&config).is_err());

    config.always_remote = strings(&["code"]);
    config.always_local = strings(&["code_generation"]);
    let err = Router::new(&config).expect_err("conflict");
    assert!(
        err.to_string()
            .contains("both always_local and always_remote"),
        "{err}"
    );
}

#[test]
fn context_over_eight_tenths_of_n_ctx_goes_remote() {
    let router = router_with(|_| {});
    let mut input = RouteInput::new("hey, how's it going?");
    input.n_ctx = 32_768;
    input.prompt_tokens = 27_853; // 85%
    let d = router.decide(&input);
    assert_eq!(d.target, Target::Remote);
    assert_eq!(d.reason, "context 85% of n_ctx");
    assert_eq!(d.decided_by, DecidedBy::Context);
    assert_eq!(d.category, Category::Greeting);

    // Exactly 0.8 is not over it.
    input.prompt_tokens = 32_768 * 8 / 10;
    assert_eq!(router.decide(&input).target, Target::Local);
    // Unknown figures never trigger it.
    input.n_ctx = 0;
    input.prompt_tokens = 1_000_000;
    assert_eq!(router.decide(&input).target, Target::Local);
}

#[test]
fn rules_come_before_the_context_rule() {
    let router = router_with(|c| c.always_local = strings(&["chat"]));
    let mut input = RouteInput::new("thanks, that's perfect");
    input.n_ctx = 4096;
    input.prompt_tokens = 4000;
    let d = router.decide(&input);
    assert_eq!(d.target, Target::Local);
    assert_eq!(d.reason, "always_local rule \"chat\"");
}

#[test]
fn forced_targets_win_over_everything_but_missing_keys() {
    let router = router_with(|c| c.always_remote = strings(&["code"]));
    let mut input = RouteInput::new("write a Rust function that parses durations");
    input.forced = Some(Target::Local);
    let d = router.decide(&input);
    assert_eq!(d.target, Target::Local);
    assert_eq!(d.reason, "forced by /local");
    assert_eq!(d.decided_by, DecidedBy::Forced);

    let mut input = RouteInput::new("hi");
    input.forced = Some(Target::Remote);
    let d = router.decide(&input);
    assert_eq!(d.target, Target::Remote);
    assert_eq!(d.reason, "forced by /remote");
    assert_eq!(d.confidence, 1.0);
}

#[test]
fn skill_complexity_overrides_the_heuristics() {
    let skills = SkillIndex::new(&[
        SkillHint {
            name: "weather".into(),
            description: "Current weather and forecasts".into(),
            triggers: vec![],
            complexity: SkillComplexity::Auto,
        },
        SkillHint {
            name: "deep-research".into(),
            description: "Multi-source research reports".into(),
            triggers: vec!["look into".into()],
            complexity: SkillComplexity::Remote,
        },
        SkillHint {
            name: "pdf-tools".into(),
            description: "Merge, split and extract PDFs".into(),
            triggers: vec!["merge pdfs".into()],
            complexity: SkillComplexity::Local,
        },
    ]);
    let router = router_with(|_| {});
    let route = |message: &str| {
        let mut input = RouteInput::new(message);
        input.skills = &skills;
        router.decide(&input)
    };

    let d = route("hi! could you look into heat pumps for me");
    assert_eq!(d.target, Target::Remote);
    assert_eq!(d.reason, "skill deep-research: remote");
    assert_eq!(d.decided_by, DecidedBy::Skill);

    let d = route("write a Python script to merge PDFs, or just use PDF-Tools");
    assert_eq!(d.target, Target::Local);
    assert_eq!(d.reason, "skill pdf-tools: local");

    // An `auto` skill leaves the decision to the heuristics.
    let d = route("what's the weather in Lisbon?");
    assert_eq!(d.target, Target::Local);
    assert_eq!(d.decided_by, DecidedBy::Heuristics);
}

#[test]
fn without_remote_keys_everything_stays_local_and_says_why() {
    let router = router_with(|c| c.always_remote = strings(&["code"]));
    let mut input = RouteInput::new("write a Rust function that parses durations");
    input.remote_available = false;
    input.n_ctx = 1000;
    input.prompt_tokens = 990;
    let d = router.decide(&input);
    assert_eq!(d.target, Target::Local);
    assert_eq!(d.reason, NO_REMOTE_REASON);
    assert_eq!(
        d.reason,
        "no remote provider configured (a [remote.anthropic], [remote.openai] or [remote.azure] section with ANTHROPIC_API_KEY, OPENAI_API_KEY or AZURE_OPENAI_API_KEY set)"
    );
    assert_eq!(d.category, Category::Code, "the category is still reported");
    assert!(!d.unsure && !router.wants_classification(&d));

    input.forced = Some(Target::Remote);
    let d = router.decide(&input);
    assert_eq!(d.target, Target::Local);
    assert_eq!(d.reason, format!("/remote ignored: {NO_REMOTE_REASON}"));

    input.forced = Some(Target::Local);
    assert_eq!(router.decide(&input).reason, "forced by /local");
}

#[test]
fn unsure_decisions_ask_the_local_model_when_configured() {
    let router = router_with(|_| {});
    let d = decide(&router, "Why does 0.1 + 0.2 != 0.3 in JavaScript?");
    assert!(d.unsure, "{d:?}");
    assert_eq!(d.target, Target::Local);
    assert!(router.wants_classification(&d));
    assert_eq!(router.classify_timeout(), Duration::from_secs(3));

    let settled = router.apply_classification(d.clone(), Some(Target::Remote));
    assert_eq!(settled.target, Target::Remote);
    assert_eq!(settled.decided_by, DecidedBy::Classifier);
    assert!(
        settled
            .reason
            .starts_with("local model says remote (heuristics unsure: ")
    );
    assert!(!settled.unsure);

    let timed_out = router.apply_classification(d.clone(), None);
    assert_eq!(timed_out.target, Target::Local);
    assert!(timed_out.reason.ends_with("(local model gave no answer)"));

    let off = router_with(|c| c.classify = false);
    assert!(!off.wants_classification(&decide(&off, "Why does 0.1 + 0.2 != 0.3 in JavaScript?")));

    // A sure decision is never reclassified.
    let sure = decide(
        &router,
        "write a Rust function that parses ISO 8601 durations",
    );
    assert!(!sure.unsure);
    assert_eq!(
        router.apply_classification(sure.clone(), Some(Target::Local)),
        sure
    );
}

#[test]
fn classification_prompt_and_parser_round_trip() {
    let messages = classify::classification_messages("rename draft.txt to final.txt");
    assert!(
        messages
            .last()
            .is_some_and(|m| m.content.contains("rename draft.txt"))
    );
    assert_eq!(
        classify::parse_classification("Remote."),
        Some(Target::Remote)
    );
    assert_eq!(
        classify::parse_classification("local\n"),
        Some(Target::Local)
    );
    assert_eq!(classify::parse_classification("hmm"), None);
}

#[test]
fn multilingual_requests_route_like_english_ones() {
    let router = router_with(|_| {});
    for (message, target, category) in [
        (
            "напомни завтра купить хлеб",
            Target::Local,
            Category::Reminder,
        ),
        (
            "escribe una función en Go que invierta una lista",
            Target::Remote,
            Category::Code,
        ),
        (
            "rédige un article de blog sur le télétravail",
            Target::Remote,
            Category::LongForm,
        ),
        (
            "was hab ich dir über den Urlaub erzählt?",
            Target::Local,
            Category::MemoryRecall,
        ),
        ("用Rust写一个命令行工具", Target::Remote, Category::Code),
        (
            "明日の9時にリマインドして",
            Target::Local,
            Category::Reminder,
        ),
    ] {
        let d = decide(&router, message);
        assert_eq!(
            (d.target, d.category),
            (target, category),
            "{message}: {}",
            d.reason
        );
        assert!(d.reason.starts_with(category.label()), "{}", d.reason);
    }
}

#[test]
fn routing_config_keys_parse_with_defaults() {
    let config = config::parse("", Path::new("egirl.toml")).expect("empty config");
    assert!(config.routing.classify);
    assert_eq!(config.routing.classify_timeout.0, Duration::from_secs(3));

    let config = config::parse(
        "[routing]\nclassify = false\nclassify_timeout = \"500ms\"\nalways_local = [\"greeting\", \"text:grocery\"]\n",
        Path::new("egirl.toml"),
    )
    .expect("routing section");
    assert!(!config.routing.classify);
    assert_eq!(
        config.routing.classify_timeout.0,
        Duration::from_millis(500)
    );
    let router = Router::new(&config.routing).expect("valid rules");
    assert_eq!(
        decide(
            &router,
            "add oat milk to the grocery list, and write a haiku"
        )
        .target,
        Target::Local
    );

    // The repo's egirl.toml documents and sets the keys.
    let repo = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/egirl.toml"))
        .expect("repo egirl.toml");
    let config = config::parse(&repo, Path::new("egirl.toml")).expect("repo config parses");
    Router::new(&config.routing).expect("repo rules are valid");
    assert!(repo.contains("classify = true") && repo.contains("classify_timeout = \"3s\""));
}
