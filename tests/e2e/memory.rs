//! Memory against a real embeddings server: a second llama-server with
//! `--embeddings --pooling mean` on the same small GGUF (llama-server in
//! embeddings mode refuses chat, so it is its own process), a fixture
//! workspace indexed through `egirl memory reindex`, and a planted fact
//! found by a hybrid `egirl memory search`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use super::server::{RealServer, free_port};

/// A physical batch big enough for a whole chunk (about 400 tokens).
const EMBEDDING_ARGS: [&str; 7] = [
    "--embeddings",
    "--pooling",
    "mean",
    "-ub",
    "2048",
    "-b",
    "2048",
];

const PLANTED: &str =
    "The spare house key is hidden under the blue ceramic frog by the garden shed.";

fn workspace(root: &Path) {
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("memory")).expect("workspace");
    std::fs::write(
        ws.join("MEMORY.md"),
        "# Memory\n\n- Prefers green tea in the morning.\n- Works on a Rust side project called egirl.\n- Sister: Ana, lives in Porto.\n",
    )
    .expect("MEMORY.md");
    let filler = [
        "Talked about the weather: rain all week, the umbrella broke again.",
        "Planned groceries: oats, lentils, tomatoes, coffee beans and bread.",
        "Reviewed the budget spreadsheet; the electricity bill went up in winter.",
        "Watched a documentary about octopuses and their problem solving.",
        "Booked the dentist for the second Tuesday of next month.",
        "Fixed a flaky test in the parser; it depended on the time zone.",
    ];
    for day in 1..=6 {
        let mut log = String::new();
        for (i, line) in filler.iter().enumerate() {
            log.push_str(&format!(
                "\n### 0{i}:15 · user · tui\n\n{line} (day {day})\n"
            ));
            if day == 4 && i == 3 {
                log.push_str(&format!("\n### 09:40 · user · tui\n\n{PLANTED}\n"));
            }
        }
        std::fs::write(ws.join(format!("memory/2025-03-0{day}.md")), log).expect("log");
    }
}

fn egirl(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_egirl"))
        .arg("--config")
        .arg(root.join("egirl.toml"))
        .args(args)
        .env_remove("EGIRL_CONFIG")
        .env("HOME", root)
        .output()
        .expect("run egirl")
}

fn stdout_of(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn memory_search_finds_a_planted_fact_with_real_embeddings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let embeddings = RealServer::start_with(free_port(), root, &EMBEDDING_ARGS);
    workspace(root);
    std::fs::write(
        root.join("egirl.toml"),
        format!(
            "[workspace]\npath = \"{}\"\n[log]\ndir = \"{}\"\n[local.embeddings]\nendpoint = \"{}\"\nmodel = \"SmolLM2-135M-Instruct\"\n",
            root.join("ws").display(),
            root.join("logs").display(),
            embeddings.url()
        ),
    )
    .expect("config");

    let out = stdout_of(&egirl(root, &["memory", "reindex"]));
    let line = out.lines().last().unwrap_or("");
    assert!(line.starts_with("memory index: 7 files,"), "{out}");
    assert!(
        !line.contains(" 0 vectors"),
        "every chunk got a vector: {out}"
    );

    let out = stdout_of(&egirl(
        root,
        &[
            "memory",
            "search",
            "where is the spare key hidden?",
            "--json",
        ],
    ));
    let result: Value = serde_json::from_str(out.trim()).expect("one JSON object");
    assert_eq!(
        result["fallback"],
        Value::Null,
        "hybrid, not the fallback: {result}"
    );
    let hits = result["hits"].as_array().expect("hits");
    let planted = hits.iter().position(|h| {
        h["snippet"]
            .as_str()
            .unwrap_or("")
            .contains("blue ceramic frog")
    });
    assert_eq!(planted, Some(0), "the planted fact ranks first: {result:#}");
    assert_eq!(hits[0]["path"], "memory/2025-03-04.md");

    // An appended fact: only that file is re-indexed, and it is found.
    let log = root.join("ws/memory/2025-03-06.md");
    let mut text = std::fs::read_to_string(&log).expect("log");
    text.push_str("\n### 22:10 · user · tui\n\nThe wifi password is on a sticky note inside the piano bench.\n");
    std::fs::write(&log, text).expect("append");
    let out = stdout_of(&egirl(root, &["memory", "reindex"]));
    assert!(out.contains("(1 re-indexed, 0 removed,"), "{out}");
    let out = stdout_of(&egirl(
        root,
        &[
            "memory",
            "search",
            "wifi password",
            "--json",
            "--max-results",
            "3",
        ],
    ));
    let result: Value = serde_json::from_str(out.trim()).expect("JSON");
    assert_eq!(result["fallback"], Value::Null);
    assert_eq!(
        result["hits"][0]["path"], "memory/2025-03-06.md",
        "{result:#}"
    );
}
