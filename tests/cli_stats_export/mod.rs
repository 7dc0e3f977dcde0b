//! `egirl stats` and `egirl export` on hand-written files, and the usage
//! log a real headless turn leaves behind.

mod export;

use std::path::PathBuf;
use std::process::Output;

use chrono::Utc;
use serde_json::{Value, json};

use crate::support::fake_llama::{FakeLlama, Reply};

struct Cli {
    dir: tempfile::TempDir,
}

impl Cli {
    fn new(endpoint: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = format!(
            "[workspace]\npath = \"{}\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{endpoint}\"\nmodel = \"fake\"\n",
            dir.path().join("ws").display(),
            dir.path().join("logs").display(),
        );
        std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
        std::fs::create_dir_all(dir.path().join("ws/.egirl")).expect("ws");
        std::fs::create_dir_all(dir.path().join("ws/sessions")).expect("sessions");
        Self { dir }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    async fn run(&self, args: &[&str]) -> Output {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
            .arg("--config")
            .arg(self.dir.path().join("egirl.toml"))
            .args(args)
            .env("HOME", self.dir.path())
            // Days are local days; pin the zone so the fixture's dates hold.
            .env("TZ", "UTC")
            .env_remove("EGIRL_CONFIG")
            .output()
            .await
            .expect("run egirl")
    }
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn usage_line(ts: &str, session: &str, provider: &str, tokens: [u64; 3], cost: f64) -> String {
    json!({
        "ts": ts, "session": session, "origin": "cli", "provider": provider,
        "model": if provider == "llamacpp" { "qwen3" } else { "big" },
        "local": provider == "llamacpp",
        "input_tokens": tokens[0], "output_tokens": tokens[1], "cached_tokens": tokens[2],
        "cost_usd": cost,
    })
    .to_string()
}

fn close(v: &Value, expected: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - expected).abs() < 1e-9)
}

#[tokio::test]
async fn stats_sums_per_day_model_and_todays_sessions() {
    let cli = Cli::new("http://127.0.0.1:9");
    let today = Utc::now().date_naive();
    let now = format!("{today}T00:00:01Z");
    let lines = [
        usage_line(
            "2025-01-10T12:00:00Z",
            "old",
            "llamacpp",
            [100, 20, 50],
            0.0,
        ),
        usage_line(
            "2025-01-10T12:30:00Z",
            "old",
            "anthropic",
            [1000, 200, 0],
            0.006,
        ),
        usage_line(&now, "a", "llamacpp", [10, 5, 0], 0.0),
        usage_line(&now, "a", "anthropic", [2000, 100, 500], 0.002),
        usage_line(&now, "b", "openai", [300, 30, 0], 0.01),
    ];
    // A crash mid-write leaves a torn last line; stats must still work.
    let text = format!("{}\n{{\"ts\":\"2025-", lines.join("\n"));
    std::fs::write(cli.ws().join(".egirl/usage.jsonl"), text).unwrap();

    let report: Value = serde_json::from_str(&ok(&cli.run(&["stats", "--json"]).await)).unwrap();
    let keys: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(keys, ["today", "days", "models", "sessions", "total"]);
    assert_eq!(report["today"], today.to_string());

    let days = report["days"].as_array().unwrap();
    assert_eq!(days.len(), 2);
    assert_eq!(days[0]["date"], "2025-01-10");
    assert_eq!(days[0]["requests"], 2);
    assert_eq!(days[0]["input_tokens"], 1100);
    assert_eq!(days[0]["output_tokens"], 220);
    assert_eq!(days[0]["cached_tokens"], 50);
    assert!(close(&days[0]["cost_usd"], 0.006));
    assert!(close(&days[0]["local_share"], 0.5));
    assert_eq!(days[1]["date"], today.to_string());
    assert_eq!(days[1]["requests"], 3);
    assert_eq!(days[1]["local_requests"], 1);
    assert_eq!(days[1]["remote_requests"], 2);
    assert!(close(&days[1]["cost_usd"], 0.012));

    let models: Vec<(String, u64, f64)> = report["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                format!(
                    "{}/{}",
                    m["provider"].as_str().unwrap(),
                    m["model"].as_str().unwrap()
                ),
                m["requests"].as_u64().unwrap(),
                m["cost_usd"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(models.len(), 3, "{models:?}");
    assert_eq!(models[0].0, "anthropic/big");
    assert_eq!(models[0].1, 2);
    assert!((models[0].2 - 0.008).abs() < 1e-9);
    assert_eq!((models[1].0.as_str(), models[1].1), ("llamacpp/qwen3", 2));
    assert_eq!((models[2].0.as_str(), models[2].1), ("openai/big", 1));

    // Per session: today's only.
    let sessions: Vec<&str> = report["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, ["a", "b"]);
    assert_eq!(report["sessions"][0]["origin"], "cli");
    assert!(close(&report["sessions"][0]["cost_usd"], 0.002));

    let total = &report["total"];
    assert_eq!(total["requests"], 5);
    assert_eq!(total["input_tokens"], 3410);
    assert!(close(&total["cost_usd"], 0.018));
    assert!(close(&total["local_share"], 0.4));

    let recent: Value =
        serde_json::from_str(&ok(&cli.run(&["stats", "--json", "--days", "1"]).await)).unwrap();
    assert_eq!(recent["days"].as_array().unwrap().len(), 1);
    assert_eq!(recent["total"]["requests"], 3);

    let table = ok(&cli.run(&["stats"]).await);
    for expected in [
        "per day",
        "2025-01-10",
        "anthropic/big",
        "sessions today",
        "total",
    ] {
        assert!(table.contains(expected), "{expected} missing from\n{table}");
    }
    let bad = cli.run(&["stats", "--days", "0"]).await;
    assert_eq!(bad.status.code(), Some(2));
}

#[tokio::test]
async fn stats_without_usage_says_so() {
    let cli = Cli::new("http://127.0.0.1:9");
    let out = ok(&cli.run(&["stats"]).await);
    assert!(out.starts_with("no usage recorded yet"), "{out}");
    let report: Value = serde_json::from_str(&ok(&cli.run(&["stats", "--json"]).await)).unwrap();
    assert_eq!(report["total"]["requests"], 0);
}

#[tokio::test]
async fn a_headless_turn_is_logged_to_usage_jsonl() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("hello")]);
    let cli = Cli::new(&fake.url());
    ok(&cli.run(&["-m", "hi", "--session", "u1"]).await);
    let text = std::fs::read_to_string(cli.ws().join(".egirl/usage.jsonl")).expect("usage log");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(lines[0]["session"], "u1");
    assert_eq!(lines[0]["origin"], "cli");
    assert_eq!(lines[0]["provider"], "llamacpp");
    assert_eq!(lines[0]["local"], true);
    assert_eq!(lines[0]["cost_usd"], 0.0);
}

/// llama-server names the path of its GGUF in every reply; usage, the
/// usage log and `egirl stats` name the model as configured, as the status
/// line does, and `[pricing]` still finds it by either name.
#[tokio::test]
async fn usage_names_the_configured_model_not_the_served_path() {
    let fake = FakeLlama::start().await;
    let served = "/models/llamacpp/SmolLM2-135M-Instruct.Q4_1.gguf";
    fake.set_served_model(served);
    fake.push_replies([Reply::text("hello")]);
    let cli = Cli::new(&fake.url());
    let config = cli.dir.path().join("egirl.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[pricing.\"{served}\"]\ninput_per_mtok = 1000000.0\noutput_per_mtok = 0.0\n"
    ));
    std::fs::write(&config, text).unwrap();

    let out = ok(&cli.run(&["-m", "hi", "--json"]).await);
    let events: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |kind: &str| events.iter().find(|e| e["type"] == kind).cloned();
    assert_eq!(of("routing").unwrap()["model"], "fake");
    let usage = of("usage").expect("usage");
    assert_eq!(usage["model"], "fake", "{usage}");
    assert!(
        usage["cost_usd"].as_f64().unwrap_or(0.0) > 0.0,
        "priced by the served id: {usage}"
    );

    let log = std::fs::read_to_string(cli.ws().join(".egirl/usage.jsonl")).expect("usage log");
    let line: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(line["model"], "fake", "{line}");
    assert!(!log.contains("gguf"), "{log}");

    let report: Value = serde_json::from_str(&ok(&cli.run(&["stats", "--json"]).await)).unwrap();
    assert_eq!(report["models"][0]["model"], "fake", "{report}");
}
