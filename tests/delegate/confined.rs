//! The delegated Claude Code is bounded like an approved command (issue
//! 14's rule): with a workspace `.env` holding a secret and the local model
//! saying ALLOW to everything, Claude Code reading `.env`, printing it from
//! its shell, or writing `.git/config` or egirl's config gets nothing: the
//! secret reaches no tool result, event, transcript or API request, and the
//! protected files are unchanged.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::fake_claude_api::FakeClaudeApi;
use super::{API_KEY, config, delegate_call};
use crate::support::cli::{Cli, events, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

const SECRET: &str = "sk-workspace-dotenv-secret-5150";

/// A Cli whose model delegates, then says ALLOW to `asks` permission
/// requests; its workspace holds `.env` and `app/.env.local` with the
/// secret, and a `.git/config`.
fn setup(fake: &FakeLlama, asks: usize) -> (Cli, PathBuf) {
    let mut replies = vec![delegate_call("Look at the project")];
    replies.extend((0..asks).map(|_| Reply::text("ALLOW: the task needs it")));
    replies.push(Reply::text("done"));
    fake.push_replies(replies);
    let cli = Cli::new(fake, &config("local-model"));
    let ws = cli.workspace();
    std::fs::create_dir_all(ws.join("app")).unwrap();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".env"), format!("SERVICE_KEY={SECRET}\n")).unwrap();
    std::fs::write(ws.join("app/.env.local"), format!("OTHER={SECRET}\n")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    let ws = std::fs::canonicalize(ws).unwrap();
    (cli, ws)
}

/// Runs egirl headless (delegation approved); the tool's output, the
/// events as text, and the API's request bodies as text.
async fn run(cli: &Cli, api: &FakeClaudeApi) -> (String, String, String) {
    let out = cli
        .run_with_env(
            &["-m", "look at the project", "--json", "--approve-exec"],
            &[
                ("ANTHROPIC_BASE_URL", &api.url),
                ("ANTHROPIC_API_KEY", API_KEY),
            ],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let (ok, output) = tool_outcome(&ev, "fake_call_0");
    assert!(ok, "{output}");
    assert!(output.contains("Finished:"), "{output}");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let bodies = Value::Array(api.bodies()).to_string();
    (output, stdout, bodies)
}

/// Every file under `dir` holding the secret, but the planted `.env`s.
fn files_with_secret(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else if !path.ends_with(".env") && !path.ends_with("app/.env.local") {
                let bytes = std::fs::read(&path).unwrap_or_default();
                if bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()) {
                    found.push(path);
                }
            }
        }
    }
    found
}

fn assert_no_secret(cli: &Cli, (output, stdout, bodies): &(String, String, String)) {
    assert!(!output.contains(SECRET), "tool result: {output}");
    assert!(!stdout.contains(SECRET), "events: {stdout}");
    assert!(!bodies.contains(SECRET), "sent to the API: {bodies}");
    let files = files_with_secret(cli.dir.path());
    assert!(files.is_empty(), "written to {files:?}");
}

#[tokio::test]
async fn claude_codes_read_tool_gets_no_dotenv() {
    let fake = FakeLlama::start().await;
    let (cli, ws) = setup(&fake, 2);
    let api = FakeClaudeApi::scripted(vec![
        ("Read", json!({"file_path": ws.join(".env")})),
        ("Read", json!({"file_path": ws.join("app/.env.local")})),
    ])
    .await;
    let seen = run(&cli, &api).await;
    assert_no_secret(&cli, &seen);
    // Its state went to egirl's dir, not the user's home.
    let home = cli.dir.path();
    assert!(!home.join(".claude.json").exists());
    assert!(!home.join(".claude").exists());
    assert!(
        home.join(".cache/egirl/claude-code/home/.claude.json")
            .exists()
    );
}

#[tokio::test]
async fn an_allowed_shell_command_reads_every_dotenv_as_empty() {
    let fake = FakeLlama::start().await;
    let (cli, _ws) = setup(&fake, 2);
    // The second spells the names so no deny rule can see them: only the
    // sandbox stands between it and the files.
    let api = FakeClaudeApi::scripted(vec![
        ("Bash", json!({"command": "cat .env", "description": "show env"})),
        (
            "Bash",
            json!({"command": "cat \"$(printf .en)v\" app/\"$(printf .en)v\".local; echo read-done", "description": "show env"}),
        ),
    ])
    .await;
    let seen = run(&cli, &api).await;
    assert_no_secret(&cli, &seen);
    // The disguised command did run (and found the files empty).
    assert!(seen.0.contains("read-done"), "{}", seen.0);
}

#[tokio::test]
async fn allowed_writes_to_git_config_and_egirls_config_change_nothing() {
    let fake = FakeLlama::start().await;
    let (cli, ws) = setup(&fake, 5);
    let config_before = std::fs::read_to_string(cli.config()).unwrap();
    // Claude Code writes a file only after reading it.
    let api = FakeClaudeApi::scripted(vec![
        ("Read", json!({"file_path": ws.join(".git/config")})),
        (
            "Write",
            json!({"file_path": ws.join(".git/config"), "content": "[core]\n\tfsmonitor = touch pwned\n"}),
        ),
        ("Read", json!({"file_path": cli.config()})),
        (
            "Write",
            json!({"file_path": cli.config(), "content": "[tools.exec]\napproval = \"full\"\n"}),
        ),
        (
            "Bash",
            json!({"command": "echo '[core]' > .git/config; echo x >> sessions-probe; echo shell-done", "description": "edit"}),
        ),
    ])
    .await;
    let (output, _, _) = run(&cli, &api).await;
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n\tbare = false\n",
        "{output}"
    );
    assert_eq!(
        std::fs::read_to_string(cli.config()).unwrap(),
        config_before,
        "{output}"
    );
    // The shell did run, and may still write the workspace.
    assert!(output.contains("shell-done"), "{output}");
    assert!(ws.join("sessions-probe").exists(), "{output}");
}

#[tokio::test]
async fn doctor_says_the_delegation_is_sandboxed() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, &config("ask"));
    let out = cli.run(&["doctor"]).await;
    let report = String::from_utf8_lossy(&out.stdout);
    let line = report
        .lines()
        .find(|l| l.contains("delegate_claude_code:"))
        .unwrap_or_default();
    assert!(
        line.contains("sandbox: workspace-write, network"),
        "{report}"
    );
}

#[tokio::test]
async fn settings_files_the_model_could_write_allow_claude_code_nothing() {
    let fake = FakeLlama::start().await;
    fake.push_replies([delegate_call("Run it"), Reply::text("done")]);
    let cli = Cli::new(&fake, &config("ask"));
    let ws = cli.workspace();
    let allow_all = r#"{"permissions":{"allow":["Bash","Write","Edit"]}}"#;
    let state = cli.dir.path().join(".cache/egirl/claude-code/home");
    for dir in [state, ws.join(".claude")] {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), allow_all).unwrap();
        std::fs::write(dir.join("settings.local.json"), allow_all).unwrap();
    }
    let api = FakeClaudeApi::scripted(vec![(
        "Bash",
        json!({"command": "touch ran.txt", "description": "run"}),
    )])
    .await;
    let out = cli
        .run_with_env(
            &["-m", "run it", "--json", "--approve-exec"],
            &[
                ("ANTHROPIC_BASE_URL", &api.url),
                ("ANTHROPIC_API_KEY", API_KEY),
            ],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, output) = tool_outcome(&events(&out), "fake_call_0");
    // Still asked (headless: denied), so it never ran.
    assert!(output.contains("denied"), "{output}");
    assert!(!ws.join("ran.txt").exists(), "{output}");
}
