//! What goes wrong: a tool's own error, a server that crashes mid-call, a
//! server that never starts. Each is one clear tool error for the model,
//! the turn still ends with an answer, and no process is left behind.

use super::stdio::result_of;
use super::{everything, filesystem, no_processes_left, server, stdio_server};
use crate::support::cli::{Cli, events, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

#[tokio::test]
async fn a_tool_error_goes_back_to_the_model() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("mcp__fs__read_text_file", r#"{"path":"/etc/hostname"}"#)]),
        Reply::text("could not"),
    ]);
    let root = tempfile::tempdir().expect("temp dir");
    let cli = Cli::new(&fake, &filesystem(root.path()));
    let out = cli.run(&["-m", "read", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let result = result_of(&ev, "mcp__fs__read_text_file");
    assert_eq!(result["success"], false, "{result}");
    let why = result["output"].as_str().unwrap();
    assert!(
        why.starts_with("`mcp__fs__read_text_file` failed: "),
        "{why}"
    );
    assert!(why.contains("outside allowed directories"), "{why}");
    assert!(
        ev.iter()
            .any(|e| e["type"] == "final" && e["text"] == "could not")
    );
}

/// A wrapper that runs server-everything and kills it (SIGKILL) as soon
/// as a `tools/call` reaches it: a crash in the middle of a call.
const CRASH_ON_CALL: &str = r#"
const { spawn } = require("node:child_process");
const child = spawn("node", [process.argv[2], "stdio"], { stdio: ["pipe", "pipe", "inherit"] });
child.stdout.pipe(process.stdout);
process.stdin.on("data", (chunk) => {
  child.stdin.write(chunk);
  if (chunk.toString().includes('"tools/call"')) {
    setTimeout(() => { child.kill("SIGKILL"); process.exit(1); }, 200);
  }
});
"#;

#[tokio::test]
async fn a_server_that_crashes_mid_call_fails_the_call_at_once() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[(
            "mcp__crashy__trigger-long-running-operation",
            r#"{"duration":60,"steps":2}"#,
        )]),
        Reply::text("it crashed"),
    ]);
    let root = tempfile::tempdir().expect("temp dir");
    let wrapper = root.path().join("crash.cjs");
    std::fs::write(&wrapper, CRASH_ON_CALL).expect("wrapper");
    let config = stdio_server(
        "crashy",
        &[
            wrapper.display().to_string(),
            server("everything").display().to_string(),
        ],
        root.path(),
        "",
    );
    let cli = Cli::new(&fake, &config);
    let out = cli.run(&["-m", "go", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let result = result_of(&ev, "mcp__crashy__trigger-long-running-operation");
    assert_eq!(result["success"], false, "{result}");
    let why = result["output"].as_str().unwrap();
    assert!(why.contains("MCP server `crashy`"), "{why}");
    // Failed at once, not after the 60 s operation or the tool timeout.
    assert!(!why.contains("did not answer within"), "{why}");
    assert!(
        ev.iter()
            .any(|e| e["type"] == "final" && e["text"] == "it crashed")
    );
    assert_eq!(no_processes_left(root.path()).await, Vec::<String>::new());
}

#[tokio::test]
async fn a_server_that_never_starts_fails_fast_and_leaves_nothing_running() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[
            ("mcp__never__anything", "{}"),
            ("mcp__everything__echo", r#"{"message":"still here"}"#),
        ]),
        Reply::text("answered anyway"),
    ]);
    let root = tempfile::tempdir().expect("temp dir");
    // A program that never speaks MCP: the handshake times out.
    let config = format!(
        "[mcp.servers.never]\ncommand = \"sleep\"\nargs = [\"600\"]\ncwd = {:?}\nstartup_timeout = \"1s\"\n{}",
        root.path().display().to_string(),
        everything(root.path())
    );
    let cli = Cli::new(&fake, &config);
    let out = cli.run(&["-m", "go", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let never = result_of(&ev, "mcp__never__anything");
    assert_eq!(never["success"], false);
    let why = never["output"].as_str().unwrap();
    assert!(
        why.contains("MCP server `never` is failed (did not start within 1s)"),
        "{why}"
    );
    // The other server is not held back by it.
    assert_eq!(
        result_of(&ev, "mcp__everything__echo")["output"],
        "Echo: still here"
    );
    assert!(
        ev.iter()
            .any(|e| e["type"] == "final" && e["text"] == "answered anyway")
    );
    assert_eq!(no_processes_left(root.path()).await, Vec::<String>::new());
}
