//! Compaction on the real server: SmolLM2 with a 4,096-token window, 40
//! turns in one session; no turn fails and at least one compaction happens.

use super::day::{Day, prefill_ratio};
use super::server::{RealServer, free_port};

#[test]
fn forty_turns_in_a_4096_token_window_compact_and_never_fail() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Later arguments win: the server's own window is 4,096 tokens too.
    let server = RealServer::start_with(free_port(), dir.path(), &["--ctx-size", "4096"]);
    let day = Day::new(
        dir.path(),
        env!("CARGO_BIN_EXE_egirl").into(),
        &server.url(),
        4096,
        // Short answers keep the wall time down; the prompt still grows
        // past 0.75 of the window within the 40 turns.
        8,
    );
    let mut turns = Vec::new();
    for n in 0..40 {
        let turn = day.turn("e2e-day", n);
        assert!(turn.ok, "turn {} failed:\n{}", n + 1, turn.detail);
        if turn.fell_back {
            eprintln!("turn {}: compaction fell back:\n{}", n + 1, turn.detail);
        }
        turns.push(turn);
    }
    let compactions = turns.iter().filter(|t| t.compacted).count();
    let fallbacks = turns.iter().filter(|t| t.fell_back).count();
    let (evaluated, new) = prefill_ratio(&turns);
    eprintln!(
        "40 turns: {compactions} compaction(s), {fallbacks} fallback(s); evaluated/new on the others: {evaluated}/{new}"
    );
    assert!(
        compactions >= 1,
        "no compaction in 40 turns ({fallbacks} fallbacks)"
    );
    let transcript =
        std::fs::read_to_string(dir.path().join("ws/sessions/e2e-day.jsonl")).unwrap_or_default();
    let asked = transcript
        .lines()
        .filter(|l| l.contains("\"typed\""))
        .count();
    assert_eq!(asked, 40, "every user message stays in the transcript");
}
