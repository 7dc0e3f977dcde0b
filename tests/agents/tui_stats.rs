//! Stats split by agent (agents-tui): `egirl stats` through the real
//! binary reads every agent's usage log, `/stats` in the TUI shows each
//! agent's totals, and the stats pane this run's cost per agent.

use std::path::Path;

use egirl::protocol::{EventKind, Origin};

use super::tui::{last_notice, of_agent, send, with_agents};
use crate::tui::{SESSION, screen};

/// A usage line of `session` today.
fn usage(session: &str, provider: &str, input: u64, cost: f64) -> String {
    serde_json::json!({
        "ts": chrono::Utc::now().to_rfc3339(), "session": session, "origin": "tui",
        "provider": provider, "model": "m", "local": provider == "llamacpp",
        "input_tokens": input, "output_tokens": 10, "cached_tokens": 0, "cost_usd": cost,
    })
    .to_string()
}

/// `egirl stats` through the real binary, on a config with `home` and
/// `work`, each with its own workspace and usage log.
fn stats(root: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
        .arg("--config")
        .arg(root.join("egirl.toml"))
        .arg("stats")
        .args(args)
        .env("HOME", root)
        .env("TZ", "UTC")
        .env_remove("EGIRL_CONFIG")
        .output()
        .expect("run egirl stats")
}

#[test]
fn egirl_stats_splits_by_agent_and_reads_every_agents_log() {
    let root = tempfile::tempdir().expect("tempdir");
    let r = root.path();
    let config = format!(
        "[workspace]\npath = \"{ws}\"\n[log]\ndir = \"{logs}\"\n[local]\nendpoint = \"http://127.0.0.1:9\"\n\
         [agents.home]\nworkspace = \"{home}\"\n[agents.work]\nworkspace = \"{work}\"\n",
        ws = r.join("default").display(),
        logs = r.join("logs").display(),
        home = r.join("home").display(),
        work = r.join("work").display(),
    );
    std::fs::write(r.join("egirl.toml"), config).expect("config");
    for (agent, lines) in [
        (
            "home",
            vec![
                usage("h1", "llamacpp", 100, 0.0),
                usage("h1", "llamacpp", 50, 0.0),
            ],
        ),
        ("work", vec![usage("w1", "anthropic", 1000, 0.25)]),
    ] {
        let dir = r.join(agent).join(".egirl");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("usage.jsonl"), lines.join("\n") + "\n").expect("log");
    }
    let out = stats(r, &["--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["total"]["requests"], 3);
    let agents = &report["agents"];
    assert_eq!(agents["home"]["requests"], 2);
    assert_eq!(agents["home"]["input_tokens"], 150);
    assert_eq!(agents["work"]["requests"], 1);
    assert_eq!(agents["work"]["cost_usd"], 0.25);
    assert_eq!(agents["default"]["requests"], 0);

    let table = String::from_utf8_lossy(&stats(r, &[]).stdout).into_owned();
    assert!(table.contains("per agent"), "{table}");
    let home = table
        .lines()
        .find(|l| l.trim_start().starts_with("home "))
        .unwrap_or_default();
    assert!(home.split_whitespace().nth(1) == Some("2"), "{table}");

    let one = stats(r, &["--json", "--agent", "work"]);
    let report: serde_json::Value = serde_json::from_slice(&one.stdout).expect("json");
    assert_eq!(report["total"]["requests"], 1);
    assert_eq!(report["agents"].as_object().map(|a| a.len()), Some(1));

    let unknown = stats(r, &["--agent", "nobody"]);
    assert!(!unknown.status.success());
    let said = String::from_utf8_lossy(&unknown.stderr).into_owned();
    assert!(
        said.contains("unknown agent nobody: the agents are default, home, work"),
        "{said}"
    );
    assert_eq!(said.trim().lines().count(), 1, "{said}");
}

#[test]
fn stats_in_the_tui_shows_each_agents_totals() {
    let root = tempfile::tempdir().expect("tempdir");
    let ws = |agent: &str| root.path().join(agent).join("workspace");
    for (agent, line) in [
        ("home", usage("h1", "llamacpp", 1500, 0.0)),
        ("work", usage("w1", "anthropic", 20, 0.5)),
    ] {
        let dir = ws(agent).join(".egirl");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("usage.jsonl"), line + "\n").expect("log");
    }
    let mut app = with_agents(Some(root.path()));
    send(&mut app, "/stats");
    let shown = last_notice(&app);
    assert!(shown.starts_with("usage by agent"), "{shown}");
    let line = |agent: &str| {
        shown
            .lines()
            .find(|l| l.trim_start().starts_with(agent))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("default").contains("today none · all none"), "{shown}");
    assert!(
        line("home").contains("today 1 req, 1.5k in, 10 out, $0.0000 (local 100%)"),
        "{shown}"
    );
    assert!(line("work").contains("$0.5000 (local 0%)"), "{shown}");
}

#[test]
fn the_stats_pane_splits_this_runs_cost_by_agent() {
    use egirl::protocol::TokenUsage;
    let mut app = with_agents(None);
    for (agent, session, cost) in [
        ("work", SESSION, 0.25),
        ("home", "tg-1", 0.5),
        ("home", "tg-2", 0.25),
    ] {
        app.apply(of_agent(
            agent,
            session,
            Origin::Tui,
            EventKind::Usage(TokenUsage {
                provider: "anthropic".into(),
                model: "big".into(),
                input_tokens: 100,
                output_tokens: 10,
                cached_tokens: 0,
                cost_usd: cost,
                tokens_per_sec: None,
                latency_ms: None,
                endpoint: None,
                context: None,
            }),
        ));
    }
    let shown = screen(&app, 120, 40);
    assert!(shown.contains("agent home $0.7500"), "{shown}");
    assert!(shown.contains("agent work $0.2500"), "{shown}");
    assert!(!shown.contains("agent default $"), "{shown}");
}
