//! The `delegate` tool serving an ACP agent's file requests
//! (tests/acp/fs_agent.mjs, on the ACP SDK): inside the workspace they
//! work, outside it or on a protected path they are refused; and an agent
//! that ignores `session/cancel` is killed at its timeout with everything
//! it started.

use serde_json::json;

use super::delegate::{cli_with_workspace, delegate_call, progress, run, scripted_config};
use crate::support::cli::tool_outcome;
use crate::support::fake_llama::{FakeLlama, Reply};

#[tokio::test]
async fn file_requests_work_in_the_workspace_and_are_refused_outside_it_and_on_protected_paths() {
    let fake = FakeLlama::start().await;
    let scratch = tempfile::tempdir().unwrap();
    let outside = scratch.path().join("outside.txt");
    let (cli, ws) = cli_with_workspace(&fake, &scripted_config("fs-agent-files", "2m"));
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    let task = json!({
        "writes": [
            [ws.join("notes/inside.txt"), "written through egirl\n"],
            [outside, "escaped\n"],
            [ws.join(".git/config"), "[core]\n\tfsmonitor = touch pwned\n"],
            [cli.config(), "[tools.exec]\napproval = \"full\"\n"]
        ],
        "read": ws.join("notes/inside.txt")
    })
    .to_string();
    let config_before = std::fs::read_to_string(cli.config()).unwrap();
    fake.push_replies([delegate_call("scripted", &task), Reply::text("done")]);
    let ev = run(&cli, "http://127.0.0.1:9").await;

    let (ok, output) = tool_outcome(&ev, "fake_call_0");
    assert!(ok, "{output}");
    assert_eq!(
        std::fs::read_to_string(ws.join("notes/inside.txt")).unwrap(),
        "written through egirl\n"
    );
    assert!(output.contains("read "), "{output}");
    assert!(output.contains("written through egirl"), "{output}");
    assert!(!outside.exists(), "{output}");
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(
        std::fs::read_to_string(cli.config()).unwrap(),
        config_before
    );
    assert_eq!(output.matches("refused ").count(), 3, "{output}");
    // egirl offered file access and no terminal, in the workspace.
    assert!(output.contains("\"readTextFile\":true"), "{output}");
    assert!(output.contains("terminal false"), "{output}");
    assert!(
        output.contains(&format!("cwd {}", ws.display())),
        "{output}"
    );
    let shown = progress(&ev, "fake_call_0");
    assert!(
        shown.iter().any(|l| l.contains("created notes/inside.txt")),
        "{shown:?}"
    );
    // The write's diff comes with the call's result, as write_file's does.
    let diff = &crate::support::cli::tool_result(&ev, "fake_call_0")["diff"];
    assert_eq!(diff["path"], "notes/inside.txt", "{diff}");
    assert_eq!(
        diff["text"], "@@ -0,0 +1 @@\n+written through egirl",
        "{diff}"
    );
}

/// The pids whose command line holds `marker`.
pub fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) {
            found.push(format!("{name}: {cmdline}"));
        }
    }
    found
}

#[tokio::test]
async fn an_agent_past_its_timeout_is_stopped_and_leaves_no_process_behind() {
    let fake = FakeLlama::start().await;
    // Unique to this test: the agent's extra argument and its child's sleep.
    let marker = format!("fs-agent-hang-{}", std::process::id());
    let seconds = 4_000_000 + std::process::id() as u64 % 100_000;
    let (cli, _ws) = cli_with_workspace(&fake, &scripted_config(&marker, "3s"));
    let task = json!({"hang": seconds}).to_string();
    fake.push_replies([delegate_call("scripted", &task), Reply::text("it hung")]);
    let ev = run(&cli, "http://127.0.0.1:9").await;

    let (ok, output) = tool_outcome(&ev, "fake_call_0");
    assert!(!ok, "{output}");
    assert!(output.contains("ran past its timeout (3s)"), "{output}");
    let shown = progress(&ev, "fake_call_0");
    assert!(
        shown
            .iter()
            .any(|l| l.starts_with(&format!("→ sleep {seconds}"))),
        "{shown:?}"
    );
    let left = processes_with(&marker);
    assert!(left.is_empty(), "{left:?}");
    let sleeps = processes_with(&format!("sleep {seconds}"));
    assert!(sleeps.is_empty(), "{sleeps:?}");
}

#[tokio::test]
async fn an_agent_that_dies_at_start_is_named_with_what_it_said() {
    let fake = FakeLlama::start().await;
    let broken = "[delegate.agents.broken]\ncommand = \"node\"\n\
                  args = [\"-e\", \"console.error('no API key set'); process.exit(3)\"]\n";
    let (cli, _ws) = cli_with_workspace(&fake, broken);
    fake.push_replies([delegate_call("broken", "anything"), Reply::text("it broke")]);
    let ev = run(&cli, "http://127.0.0.1:9").await;

    let (ok, output) = tool_outcome(&ev, "fake_call_0");
    assert!(!ok, "{output}");
    assert!(output.starts_with("broken failed: "), "{output}");
    assert!(output.contains("its stderr: no API key set"), "{output}");
}

#[tokio::test]
async fn the_agent_itself_is_sandboxed_and_gets_only_the_environment_it_is_given() {
    let fake = FakeLlama::start().await;
    let scratch = tempfile::tempdir().unwrap();
    let outside = scratch.path().join("outside.txt");
    let (cli, ws) = cli_with_workspace(&fake, &scripted_config("fs-agent-sandbox", "2m"));
    std::fs::write(ws.join(".env"), "SERVICE_KEY=sk-dotenv-secret-0451\n").unwrap();
    let task = json!({
        "disk_writes": [[ws.join("direct.txt"), "ok\n"], [outside, "escaped\n"]],
        "disk_reads": [ws.join(".env")]
    })
    .to_string();
    fake.push_replies([delegate_call("scripted", &task), Reply::text("done")]);
    let out = cli
        .run_with_env(
            &["-m", "hand it over", "--json", "--approve-exec"],
            &[("EGIRL_TEST_SECRET_TOKEN", "sk-not-for-the-agent")],
        )
        .await;
    assert!(
        out.status.success(),
        "{}",
        crate::support::cli::stderr(&out)
    );
    let ev = crate::support::cli::events(&out);

    let (ok, output) = tool_outcome(&ev, "fake_call_0");
    assert!(ok, "{output}");
    // The workspace is writable, the rest is not; `.env` reads as empty.
    assert_eq!(
        std::fs::read_to_string(ws.join("direct.txt")).unwrap(),
        "ok\n"
    );
    assert!(!outside.exists(), "{output}");
    assert!(
        output.contains(&format!("disk refused {}: EROFS", outside.display())),
        "{output}"
    );
    assert!(
        output.contains(&format!("disk read {}: []", ws.join(".env").display())),
        "{output}"
    );
    assert!(!output.contains("sk-dotenv-secret-0451"), "{output}");
    // Of egirl's environment: only what every agent keeps, and HOME.
    let env_line = output
        .lines()
        .find(|l| l.starts_with("env "))
        .unwrap_or_default();
    assert!(!env_line.contains("EGIRL_TEST_SECRET_TOKEN"), "{env_line}");
    assert!(env_line.contains("HOME"), "{env_line}");
    assert!(env_line.contains("PATH"), "{env_line}");
}
