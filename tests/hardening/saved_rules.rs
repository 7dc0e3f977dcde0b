//! A rule `a`/`p` saved for an innocent read-only command once covered a
//! longer command that runs code or writes files: a getopt abbreviation
//! (`--expr=1e...`, `--outp=`), `git grep -O<cmd>`, `git log --output=`.
//! The approvals file below holds what `p` saves for `sed -n 1,5p
//! notes.md`, `sort notes.md`, `git grep -n hello` and `git log
//! --oneline` and `find . -name notes.md`; headless, anything a rule does not cover is denied.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::cli::{Cli, events, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

pub(super) fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// The workspace as a git repository holding a committed `notes.md`, with
/// `allow` saved in `.egirl/approvals.toml` as `p` would have saved them.
pub(super) fn notes_repo(cli: &Cli, allow: &[&str]) -> PathBuf {
    let ws = cli.workspace();
    std::fs::create_dir_all(ws.join(".egirl")).unwrap();
    std::fs::write(ws.join("notes.md"), "hello\nworld\n").unwrap();
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "notes.md"]);
    git(&ws, &["commit", "-qm", "notes"]);
    let rules = toml::to_string(&toml::Table::from_iter([(
        "allow".to_string(),
        toml::Value::from(allow.to_vec()),
    )]))
    .unwrap();
    std::fs::write(ws.join(".egirl/approvals.toml"), rules).unwrap();
    ws
}

/// Runs `commands`, one per model request, headless; returns what went
/// wrong: one of the first `covered` denied, a later one not denied, or a
/// `planted` file written. Every command is checked before the verdict, so
/// a failure names all.
pub(super) async fn wrong_verdicts(
    cli: &Cli,
    fake: &FakeLlama,
    commands: &[&str],
    covered: usize,
    planted: &[&str],
) -> Vec<String> {
    let replies: Vec<Reply> = commands
        .iter()
        .map(|c| Reply::tool_calls(&[("exec", &json!({ "command": c }).to_string())]))
        .chain([Reply::text("done")])
        .collect();
    fake.push_replies(replies);
    let out = cli.run(&["-m", "read notes", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let events = events(&out);
    let mut wrong = Vec::new();
    for (i, command) in commands.iter().enumerate() {
        let (success, output) = tool_outcome(&events, &format!("fake_call_{i}"));
        let denied = !success && output.starts_with("denied");
        if (i < covered) == denied {
            let first = output.lines().next().unwrap_or("");
            wrong.push(format!("{command}: {first}"));
        }
    }
    let ws = cli.workspace();
    wrong.extend(
        planted
            .iter()
            .filter(|p| ws.join(p).exists())
            .map(|p| format!("{p} was written")),
    );
    wrong
}

#[tokio::test]
async fn a_saved_prefix_rule_does_not_widen_to_options_that_run_or_write() {
    let fake = FakeLlama::start().await;
    // One command per model request, more than the default ten.
    let cli = Cli::new(&fake, "[agent]\nmax_turns = 20\n");
    notes_repo(
        &cli,
        &["sed -n 1,5p", "sort", "git grep", "git log", "find ."],
    );
    let commands = [
        // Covered: what the rules were saved for.
        "sed -n 1,5p notes.md",
        "git log --oneline",
        // Not covered: each ran unasked under the old rules.
        "sed -n 1,5p --expr=1e'touch pwned-sed' notes.md",
        "sort --outp=pwned-sort notes.md",
        "sort --compress=sh notes.md",
        "git grep -O'mkdir pwned-grep' hello",
        "git grep --open-files-in='touch pwned-grep2' hello",
        "git log --output=pwned-log",
        "find . -name notes.md -fprint pwned-find",
        "find . -name notes.md -exec touch pwned-exec {} +",
    ];
    let planted = [
        "pwned-sed",
        "pwned-sort",
        "pwned-grep",
        "pwned-grep2",
        "pwned-log",
        "pwned-find",
        "pwned-exec",
    ];
    let wrong = wrong_verdicts(&cli, &fake, &commands, 2, &planted).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}
