//! A secret written literally in an MCP server's `env` is redacted like
//! egirl's own keys when the server echoes it (server-everything's
//! `get-env` prints its whole environment): not in the events, the
//! transcript or the log; `[redacted:mcp.SERVER.NAME]` stands there.
//! `egirl doctor` names such an entry, never its value.

use std::path::Path;

use super::everything;
use crate::support::cli::{Cli, events, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

use super::stdio::result_of;

const LITERAL: &str = "literal-mcp-planted-0123456789";

/// Files under `dir` (but `except`) that hold `value`.
fn files_with(dir: &Path, except: &Path, value: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path != except {
                let bytes = std::fs::read(&path).unwrap_or_default();
                if bytes.windows(value.len()).any(|w| w == value.as_bytes()) {
                    found.push(path.display().to_string());
                }
            }
        }
    }
    found
}

#[tokio::test]
async fn a_literal_env_secret_echoed_by_a_server_is_redacted_everywhere() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("mcp__everything__get-env", "{}")]),
        Reply::text("done"),
    ]);
    let root = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "{}env = {{ SERVICE_API_KEY = \"{LITERAL}\" }}\n",
        everything(root.path())
    );
    let cli = Cli::new(&fake, &config);
    let out = cli
        .run_with_env(
            &["-m", "show the env", "--json"],
            &[("ANTHROPIC_API_KEY", "sk-ant-test-mcp-0123456789")],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains(LITERAL), "the --json events show it");
    assert!(!stderr(&out).contains(LITERAL));
    let ev = events(&out);
    let env = result_of(&ev, "mcp__everything__get-env");
    assert!(
        env["output"]
            .as_str()
            .unwrap()
            .contains("[redacted:mcp.everything.SERVICE_API_KEY]"),
        "{env}"
    );
    // The server never had egirl's own keys (the exec environment).
    assert!(
        !env["output"]
            .as_str()
            .unwrap()
            .contains("ANTHROPIC_API_KEY")
    );
    // What egirl wrote (transcript, log, usage) holds it nowhere.
    assert_eq!(
        files_with(cli.dir.path(), &cli.config(), LITERAL),
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn doctor_suggests_a_variable_for_a_literal_secret_without_showing_it() {
    let fake = FakeLlama::start().await;
    let config = format!(
        "[mcp.servers.web]\nurl = \"http://127.0.0.1:9/mcp\"\nstartup_timeout = \"2s\"\nheaders = {{ Authorization = \"Bearer {LITERAL}\", Accept = \"application/json\" }}\nenv = {{ PLAIN_TOKEN = \"${{HOME}}\" }}\n"
    );
    let cli = Cli::new(&fake, &config);
    let out = cli.run(&["doctor"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains(LITERAL), "doctor shows the value");
    let notes: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("written literally"))
        .collect();
    assert_eq!(
        notes,
        [
            "note mcp web: header `Authorization` is written literally in the config; write \"${WEB_AUTHORIZATION_TOKEN}\" there and set WEB_AUTHORIZATION_TOKEN in the environment or a .env (it is redacted either way)"
        ],
        "{stdout}"
    );
}
