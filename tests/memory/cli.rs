//! `egirl memory reindex` and `egirl memory search Q [--json]`, run as the
//! real binary.

use std::process::Output;

use serde_json::Value;

use crate::support::fake_llama::FakeLlama;

struct Cli {
    dir: tempfile::TempDir,
}

impl Cli {
    fn new(embeddings: Option<&str>) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = format!(
            "[workspace]\npath = \"{}\"\n[log]\ndir = \"{}\"\n",
            dir.path().join("ws").display(),
            dir.path().join("logs").display(),
        );
        if let Some(url) = embeddings {
            config.push_str(&format!(
                "[local.embeddings]\nendpoint = \"{url}\"\nmodel = \"fake-embed\"\n"
            ));
        }
        std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
        std::fs::create_dir_all(dir.path().join("ws/memory")).expect("ws");
        std::fs::write(
            dir.path().join("ws/MEMORY.md"),
            "# Memory\n\n- Allergic to peanuts.\n- Drives a green van.\n",
        )
        .expect("MEMORY.md");
        std::fs::write(
            dir.path().join("ws/memory/2025-05-05.md"),
            "### 08:00 · user · tui\n\nBooked the ferry to Vis island for July.\n",
        )
        .expect("log");
        Self { dir }
    }

    async fn run(&self, args: &[&str]) -> Output {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
            .arg("--config")
            .arg(self.dir.path().join("egirl.toml"))
            .args(args)
            .env("HOME", self.dir.path())
            .env_remove("EGIRL_CONFIG")
            .output()
            .await
            .expect("run egirl")
    }
}

fn ok(out: &Output) -> (String, String) {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn reindex_then_search_json_with_embeddings() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(Some(&fake.url()));
    let (stdout, stderr) = ok(&cli.run(&["memory", "reindex"]).await);
    // Not a terminal: plain progress lines, no bar.
    assert!(
        stderr.contains("memory: 2 files, 2 changed, 2 chunk texts to embed"),
        "{stderr}"
    );
    assert!(
        stdout.contains("memory index: 2 files, 2 chunks, 2 vectors"),
        "{stdout}"
    );
    let embedded = fake.embedded_texts().len();

    let (stdout, _) = ok(&cli
        .run(&["memory", "search", "ferry", "island", "--json"])
        .await);
    let json: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["query", "fallback", "hits"]);
    assert_eq!(json["query"], "ferry island");
    assert_eq!(json["fallback"], Value::Null);
    let hit = &json["hits"][0];
    let hit_keys: Vec<&String> = hit.as_object().unwrap().keys().collect();
    assert_eq!(
        hit_keys,
        [
            "path",
            "start_line",
            "end_line",
            "score",
            "snippet",
            "snippet_start_line",
            "snippet_end_line",
            "best_line"
        ]
    );
    assert_eq!(hit["path"], "memory/2025-05-05.md");
    assert_eq!(
        (hit["start_line"].as_u64(), hit["end_line"].as_u64()),
        (Some(1), Some(3))
    );
    // Only the query was embedded: the index was up to date.
    assert_eq!(fake.embedded_texts().len(), embedded + 1);

    // A second reindex finds nothing to do.
    let (stdout, _) = ok(&cli.run(&["memory", "reindex"]).await);
    assert!(
        stdout.contains("(0 re-indexed, 0 removed, 0 embedded)"),
        "{stdout}"
    );
}

#[tokio::test]
async fn search_without_embeddings_falls_back_and_says_so() {
    let cli = Cli::new(None);
    let (stdout, _) = ok(&cli.run(&["memory", "search", "peanuts", "--json"]).await);
    let json: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(json["fallback"], "fts");
    assert_eq!(json["hits"][0]["path"], "MEMORY.md");

    let (stdout, _) = ok(&cli.run(&["memory", "search", "green van"]).await);
    assert!(
        stdout.starts_with("(full-text only: no embeddings configured)\n"),
        "{stdout}"
    );
    assert!(stdout.contains("MEMORY.md:1-4"), "{stdout}");

    let (stdout, _) = ok(&cli.run(&["memory", "search", "zebra"]).await);
    assert!(stdout.contains("no memory matched"), "{stdout}");

    let out = cli
        .run(&["memory", "search", "x", "--min-score", "3"])
        .await;
    assert_eq!(out.status.code(), Some(2));
}
