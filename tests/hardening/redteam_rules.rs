//! Saved rules attacked from the workspace the model writes: a rule `p`
//! saved for an innocent read-only command must not run a program the
//! model planted, whatever files it wrote first.

use serde_json::json;

use crate::support::cli::{Cli, events, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

/// A workspace that is not a git repository, holding `HEAD`, `objects/`
/// and `refs/` (all plain files the model may write), is a bare repository
/// to git: its `config` and `info/attributes` chose a textconv program
/// that `git diff --no-index` ran, covered by the rule saved for `git diff`.
#[tokio::test]
async fn a_saved_git_rule_does_not_run_a_workspace_planted_as_a_bare_repository() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(ws.join(".egirl")).unwrap();
    std::fs::write(ws.join(".egirl/approvals.toml"), "allow = [\"git diff\"]\n").unwrap();
    // What write_file may write: none of it is under a `.git`.
    for dir in ["objects", "refs", "info"] {
        std::fs::create_dir_all(ws.join(dir)).unwrap();
        std::fs::write(ws.join(dir).join("keep"), "").unwrap();
    }
    std::fs::write(ws.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let planted = ws.join("pwned-textconv");
    std::fs::write(
        ws.join("config"),
        format!(
            "[diff \"x\"]\n\ttextconv = \"touch '{}'; cat\"\n",
            planted.display()
        ),
    )
    .unwrap();
    std::fs::write(ws.join("info/attributes"), "* diff=x\n").unwrap();
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    std::fs::write(ws.join("b.txt"), "two\n").unwrap();
    fake.push_replies(vec![
        Reply::tool_calls(&[(
            "exec",
            &json!({ "command": "git diff --no-index a.txt b.txt" }).to_string(),
        )]),
        Reply::text("done"),
    ]);
    let out = cli.run(&["-m", "compare", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, output) = tool_outcome(&events(&out), "fake_call_0");
    assert!(!planted.exists(), "the planted textconv ran: {output}");
}
