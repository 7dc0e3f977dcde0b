//! `[checkpoints] max_age, max_total_mb`: old and excess checkpoints go
//! (after each turn and at start), oldest turns first.

use std::time::{Duration, SystemTime};

use serde_json::json;

use super::calls;
use crate::support::cli::{Cli, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

#[tokio::test]
async fn checkpoints_past_the_size_budget_or_their_age_are_pruned() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[checkpoints]\nmax_total_mb = 1\nmax_age = \"7d\"\n");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    // Two files of 700 KiB: one checkpoint of each does not fit in 1 MiB.
    std::fs::write(ws.join("a.bin"), vec![b'a'; 700 * 1024]).unwrap();
    std::fs::write(ws.join("b.bin"), vec![b'b'; 700 * 1024]).unwrap();
    fake.push_replies([
        calls(&[("write_file", json!({"path": "a.bin", "content": "small a"}))]),
        Reply::text("a done"),
        calls(&[("write_file", json!({"path": "b.bin", "content": "small b"}))]),
        Reply::text("b done"),
        Reply::text("nothing written"),
    ]);
    let checkpoints = ws.join(".egirl/checkpoints/s");
    let out = cli.run(&["-m", "shrink a", "--session", "s"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(checkpoints.join("000001").is_dir());
    // Turn 1's folder is made older than turn 2's will be.
    std::fs::File::open(checkpoints.join("000001"))
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(60))
        .unwrap();
    let out = cli.run(&["-m", "shrink b", "--session", "s"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!checkpoints.join("000001").exists(), "the oldest turn goes");
    assert!(checkpoints.join("000002").is_dir());

    // Rewinding to turn 1 restores what is left: b, not a.
    let out = cli.run(&["--session", "s", "--rewind", "1"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        said.contains("restored b.bin") && !said.contains("a.bin"),
        "{said}"
    );
    assert_eq!(std::fs::read(ws.join("a.bin")).unwrap(), b"small a");
    assert_eq!(std::fs::read(ws.join("b.bin")).unwrap().len(), 700 * 1024);

    // A checkpoint older than max_age goes at the next run.
    let stale = ws.join(".egirl/checkpoints/other/000001");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("manifest.jsonl"), "").unwrap();
    std::fs::File::open(&stale)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(8 * 24 * 3600))
        .unwrap();
    let out = cli.run(&["-m", "talk", "--session", "s"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stale.exists(), "a checkpoint older than max_age is pruned");
}

/// After a turn that kept no copy, the walk over every session's folders
/// is skipped until a minute has gone by; a turn that kept one is always
/// followed by a prune (the size cap may be passed).
#[test]
fn a_prune_is_due_after_a_turn_that_kept_a_copy_or_once_a_minute() {
    let dir = tempfile::tempdir().unwrap();
    let config = egirl::config::CheckpointsConfig::default();
    let checkpoints = egirl::tools::checkpoints::Checkpoints::new(dir.path(), &config);
    assert!(checkpoints.prune_due("s", 1), "the first turn of a process");
    assert!(
        !checkpoints.prune_due("s", 2),
        "nothing kept, pruned just now"
    );
    let kept = dir.path().join(".egirl/checkpoints/s/000003");
    std::fs::create_dir_all(&kept).unwrap();
    assert!(checkpoints.prune_due("s", 3), "turn 3 kept a copy");
    assert!(
        checkpoints.clone().prune_due("s", 3),
        "clones share the clock"
    );
    assert!(!checkpoints.prune_due("s", 4));
}
