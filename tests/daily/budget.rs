//! Spend caps on remote calls: `[remote] budget_day_usd` counted from the
//! usage log, through the real binary (`-m --json`) against the fake
//! local model and a fake Anthropic API. The day is moved with
//! `EGIRL_TEST_NOW` (read by debug builds only) in `TZ=UTC`.

use serde_json::Value;

use crate::support::cli::{Cli, events, of_type, stderr};
use crate::support::fake_anthropic::{self, FakeAnthropic};
use crate::support::fake_llama::{FakeLlama, Reply};

const KEY: (&str, &str) = ("ANTHROPIC_API_KEY", "sk-ant-budget-test-0123456789");
const ASK_REMOTE: &str = "use claude: explain how a B-tree splits a full node";

/// A workspace capped at `day_usd` a day, escalating to the fake API.
fn capped(fake: &FakeLlama, remote: &FakeAnthropic, day_usd: &str, extra: &str) -> Cli {
    Cli::new(
        fake,
        &format!(
            "[remote]\nbudget_day_usd = {day_usd}\n[remote.anthropic]\nmodel = \"{}\"\nbase_url = \"{}\"\nmax_tokens = 1000\n{extra}",
            fake_anthropic::MODEL,
            remote.url()
        ),
    )
}

/// `.egirl/usage.jsonl` as if remote requests had cost `usd` at `ts`.
fn spent_before(cli: &Cli, ts: &str, usd: f64) {
    let dir = cli.workspace().join(".egirl");
    std::fs::create_dir_all(&dir).unwrap();
    let line = serde_json::json!({
        "ts": ts, "session": "cli-earlier", "origin": "cli", "provider": "anthropic",
        "model": "claude-sonnet-4-5", "local": false, "input_tokens": 1000,
        "output_tokens": 500, "cached_tokens": 0, "cost_usd": usd,
    });
    std::fs::write(dir.join("usage.jsonl"), format!("{line}\n")).unwrap();
}

async fn run_at(cli: &Cli, now: &str, text: &str) -> Vec<Value> {
    let out = cli
        .run_with_env(
            &["-m", text, "--json"],
            &[KEY, ("EGIRL_TEST_NOW", now), ("TZ", "UTC")],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    events(&out)
}

fn notices(events: &[Value]) -> Vec<String> {
    of_type(events, "notice")
        .iter()
        .filter_map(|e| e["message"].as_str().map(String::from))
        .collect()
}

fn final_text(events: &[Value]) -> String {
    of_type(events, "final")
        .last()
        .and_then(|e| e["text"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn an_escalation_the_budget_cannot_pay_for_answers_locally_until_a_new_day() {
    let fake = FakeLlama::start().await;
    let remote = FakeAnthropic::start().await;
    let cli = capped(&fake, &remote, "2.0", "");
    spent_before(&cli, "2026-03-10T09:00:00Z", 1.99);
    fake.push_replies([Reply::text("local answer"), Reply::text("local answer")]);

    let ev = run_at(&cli, "2026-03-10T15:00:00Z", ASK_REMOTE).await;
    assert_eq!(remote.hits(), 0, "no remote request under the cap");
    assert_eq!(final_text(&ev), "local answer");
    let routing = of_type(&ev, "routing");
    let reason = routing[0]["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("budget: day 1.99/2.00 USD"), "{reason}");
    assert!(of_type(&ev, "escalation").is_empty(), "{ev:?}");
    let said = notices(&ev);
    assert!(
        said.iter()
            .any(|n| n.contains("remote budget is spent") && n.contains("day 1.99/2.00 USD")),
        "{said:?}"
    );

    // The next day the cap starts again from nothing.
    remote.push(fake_anthropic::Reply::text(&["remote ", "answer"]));
    let ev = run_at(&cli, "2026-03-11T08:00:00Z", ASK_REMOTE).await;
    assert_eq!(remote.hits(), 1, "{ev:?}");
    assert_eq!(final_text(&ev), "remote answer");
    assert!(notices(&ev).iter().all(|n| !n.contains("budget")), "{ev:?}");
}

#[tokio::test]
async fn two_processes_share_the_count() {
    let fake = FakeLlama::start().await;
    let remote = FakeAnthropic::start().await;
    // 0.10 USD an output token: a request may cost 1.00 (10 tokens at most),
    // and the first reply's 8 tokens cost 0.80.
    let pricing = "max_tokens = 10\n[pricing.\"claude-sonnet-4-5\"]\ninput_per_mtok = 0.0\noutput_per_mtok = 100000.0\n";
    let cli = Cli::new(
        &fake,
        &format!(
            "[remote]\nbudget_day_usd = 1.5\n[remote.anthropic]\nmodel = \"{}\"\nbase_url = \"{}\"\n{pricing}",
            fake_anthropic::MODEL,
            remote.url()
        ),
    );
    remote.push(fake_anthropic::Reply::text(&["first"]).usage(10, 8, 0, 0));
    remote.push(fake_anthropic::Reply::text(&["second"]).usage(10, 8, 0, 0));
    fake.push_replies([Reply::text("local second"), Reply::text("local second")]);

    let now = "2026-03-10T15:00:00Z";
    let first = run_at(&cli, now, ASK_REMOTE).await;
    assert_eq!(final_text(&first), "first");
    assert_eq!(remote.hits(), 1);

    // Another process: it knows of the first one's spend only from the log.
    let second = run_at(&cli, now, ASK_REMOTE).await;
    assert_eq!(remote.hits(), 1, "the second run must not call the API");
    assert_eq!(final_text(&second), "local second");
    let reason = of_type(&second, "routing")[0]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(reason.starts_with("budget: day 0.80/1.50 USD"), "{reason}");
}

#[tokio::test]
async fn the_80_percent_notice_comes_once_and_stats_show_the_cap() {
    let fake = FakeLlama::start().await;
    let remote = FakeAnthropic::start().await;
    let cli = capped(&fake, &remote, "2.0", "");
    spent_before(&cli, "2026-03-10T09:00:00Z", 1.7);
    fake.push_replies([Reply::text("hello there"), Reply::text("hello again")]);
    let now = "2026-03-10T15:00:00Z";

    let ev = run_at(&cli, now, "hello").await;
    let warned: Vec<String> = notices(&ev)
        .into_iter()
        .filter(|n| n.contains("85% of the day's budget"))
        .collect();
    assert_eq!(warned.len(), 1, "{ev:?}");
    assert!(warned[0].contains("day 1.70/2.00 USD"), "{warned:?}");

    let ev = run_at(&cli, now, "hello").await;
    assert!(
        notices(&ev).iter().all(|n| !n.contains("budget")),
        "a second notice: {ev:?}"
    );

    let env = [("EGIRL_TEST_NOW", now), ("TZ", "UTC")];
    let out = cli.run_with_env(&["stats", "--json"], &env).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let day = &report["budget"][0];
    assert_eq!(day["name"], "day");
    assert_eq!(day["cap_usd"], 2.0);
    assert!(
        (day["spent_usd"].as_f64().unwrap_or(0.0) - 1.7).abs() < 1e-9,
        "{report}"
    );
    let out = cli.run_with_env(&["stats"], &env).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("budget (remote): day 1.70/2.00 USD"),
        "{text}"
    );
}

#[tokio::test]
async fn a_spent_cap_stops_remote_routing_with_one_notice_a_day() {
    let fake = FakeLlama::start().await;
    let remote = FakeAnthropic::start().await;
    let cli = capped(&fake, &remote, "2.0", "");
    spent_before(&cli, "2026-03-10T09:00:00Z", 2.0);
    fake.push_replies([
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
        Reply::text("three"),
    ]);
    let now = "2026-03-10T15:00:00Z";
    let off = |ev: &[Value]| {
        notices(ev)
            .iter()
            .filter(|n| n.contains("remote models are off (budget: day 2.00/2.00 USD)"))
            .count()
    };
    let ev = run_at(&cli, now, "hello").await;
    assert_eq!(off(&ev), 1, "{ev:?}");
    let ev = run_at(&cli, now, "hello").await;
    assert_eq!(off(&ev), 0, "{ev:?}");
    // Asked for by name, the remote model is refused aloud every time.
    let ev = run_at(&cli, now, ASK_REMOTE).await;
    assert!(
        notices(&ev)
            .iter()
            .any(|n| n.contains("remote budget is spent (budget: day 2.00/2.00 USD)")),
        "{ev:?}"
    );
    let reason = of_type(&ev, "routing")[0]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(reason, "budget: day 2.00/2.00 USD");
    assert_eq!(remote.hits(), 0);
}

/// A session pinned to the remote model (`--model anthropic`) is held to
/// the cap like `/remote`: the turn runs locally, the reason and a notice
/// say why, and the API gets nothing.
#[tokio::test]
async fn a_remote_pin_does_not_pass_a_spent_cap() {
    let fake = FakeLlama::start().await;
    let remote = FakeAnthropic::start().await;
    let cli = capped(&fake, &remote, "2.0", "");
    spent_before(&cli, "2026-03-10T09:00:00Z", 2.0);
    fake.push_replies([Reply::text("local answer"), Reply::text("local answer")]);

    let out = cli
        .run_with_env(
            &[
                "--model",
                "anthropic",
                "-m",
                "how does a B-tree split",
                "--json",
            ],
            &[
                KEY,
                ("EGIRL_TEST_NOW", "2026-03-10T15:00:00Z"),
                ("TZ", "UTC"),
            ],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    assert_eq!(remote.hits(), 0, "a spent cap let a pinned turn through");
    assert_eq!(final_text(&ev), "local answer");
    let routing = of_type(&ev, "routing");
    let reason = routing[0]["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("budget: day 2.00/2.00 USD"), "{reason}");
    assert!(
        notices(&ev)
            .iter()
            .any(|n| n.contains("remote budget is spent")),
        "{ev:?}"
    );
}
