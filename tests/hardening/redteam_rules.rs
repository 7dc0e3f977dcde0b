//! Saved rules attacked from the workspace the model writes: a rule `p`
//! saved for an innocent read-only command must not run a program the
//! model planted, whatever files it wrote first.

use serde_json::json;

use super::saved_rules::{git, notes_repo, wrong_verdicts};
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

/// Where the table read a word differently from the program: GNU sed ends
/// a comment at the newline between two `-e` (the reader continued it
/// past a backslash, over an `e` command), git reads `--format` only with
/// `=` and `-U` only with its count attached (the table took the next
/// word, `--output=...`, for their value), and tail reads `+1f` as its
/// obsolete option that follows the file forever.
#[tokio::test]
async fn a_saved_rule_does_not_cover_a_word_the_program_reads_differently() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[tools.exec]\ntimeout_secs = 3\n");
    let ws = notes_repo(&cli, &["sed -n 1,5p", "git log", "git diff", "tail"]);
    std::fs::write(ws.join("notes.md"), "hello\nthere\n").unwrap();
    let commands = [
        "sed -n 1,5p notes.md",
        "sed -n 1,5p -e '#x\\' -e '1e touch pwned-sed' notes.md",
        "git log --format --output=pwned-log",
        "git diff -U --output=pwned-diff",
        "tail +1f notes.md",
        "tail -cf notes.md",
    ];
    let planted = ["pwned-sed", "pwned-log", "pwned-diff"];
    let wrong = wrong_verdicts(&cli, &fake, &commands, 1, &planted).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// `%G?` in a format verifies the commit's signature by running gpg (here
/// the repository's `gpg.program`, a script that leaves a mark), as
/// `--show-signature` does, which the table leaves out for that reason.
#[tokio::test]
async fn a_saved_git_log_rule_does_not_cover_a_format_that_runs_gpg() {
    use std::os::unix::fs::PermissionsExt;
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(ws.join(".egirl")).unwrap();
    let spy_dir = tempfile::tempdir().unwrap();
    let spy = spy_dir.path().join("gpg");
    let mark = ws.join("pwned-gpg");
    std::fs::write(
        &spy,
        format!(
            "#!/bin/sh\ncat >/dev/null\ncase \"$*\" in *-bsau*) echo '[GNUPG:] SIG_CREATED ' >&2; \
             printf -- '-----BEGIN PGP SIGNATURE-----\\n\\nAAAA\\n-----END PGP SIGNATURE-----\\n';; \
             *) touch '{}';; esac\n",
            mark.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&spy, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(ws.join("notes.md"), "hello\n").unwrap();
    git(&ws, &["init", "-q"]);
    git(&ws, &["config", "gpg.program", &spy.display().to_string()]);
    git(&ws, &["add", "notes.md"]);
    git(
        &ws,
        &["-c", "user.signingkey=x", "commit", "-qS", "-m", "signed"],
    );
    std::fs::write(ws.join(".egirl/approvals.toml"), "allow = [\"git log\"]\n").unwrap();
    fake.push_replies(vec![
        Reply::tool_calls(&[(
            "exec",
            &json!({ "command": "git log '--format=%h %G?'" }).to_string(),
        )]),
        Reply::text("done"),
    ]);
    let out = cli.run(&["-m", "history", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (success, output) = tool_outcome(&events(&out), "fake_call_0");
    assert!(!mark.exists(), "gpg ran: {output}");
    assert!(!success && output.starts_with("denied"), "{output}");
}
