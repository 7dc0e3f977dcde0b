//! Issue 14, findings 4, 6, 7, 8, 9 and 12 replayed against the real
//! binary: narrow allow rules, escape sequences outside the TUI,
//! overflowing durations, SIGTERM/SIGHUP during an exec, FIFOs given to
//! file tools, and a stdout closed early.

use crate::support::cli::{Cli, events, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

/// Finding 4: `allow = ["find ."]` auto-approved `find . -exec touch X {} +`.
#[tokio::test]
async fn a_prefix_rule_does_not_cover_find_exec() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("exec", r#"{"command": "find . -exec touch X {} +"}"#)]),
        Reply::text("done"),
    ]);
    let cli = Cli::new(&fake, "[tools.exec]\nallow = [\"find .\"]\n");
    let out = cli.run(&["-m", "list files", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let request = ev
        .iter()
        .find(|e| e["type"] == "approval_request")
        .expect("the command is asked about, not auto-approved");
    assert_eq!(request["rule"], "find . -exec touch X {} +");
    let decision = ev
        .iter()
        .find(|e| e["type"] == "approval_decision")
        .expect("a decision");
    assert_eq!(decision["decision"], "denied");
    assert!(!cli.workspace().join("X").exists(), "find -exec ran");
}

/// The rule still covers what it was meant for.
#[tokio::test]
async fn a_prefix_rule_still_covers_plain_find() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("exec", r#"{"command": "find . -name MEMORY.md"}"#)]),
        Reply::text("done"),
    ]);
    let cli = Cli::new(&fake, "[tools.exec]\nallow = [\"find .\"]\n");
    let out = cli.run(&["-m", "list files", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    assert!(!ev.iter().any(|e| e["type"] == "approval_request"));
    let result = ev
        .iter()
        .find(|e| e["type"] == "tool_result")
        .expect("a result");
    assert_eq!(result["success"], true, "{result}");
    assert!(
        result["output"]
            .as_str()
            .unwrap_or("")
            .contains("MEMORY.md")
    );
}
