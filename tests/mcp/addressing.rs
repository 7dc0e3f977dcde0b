//! `mcp__SERVER__tool` reaches SERVER or nothing: when `fs` is down (or
//! lacks the tool), a call addressed to it is not delivered to another
//! server whose tool is literally named `fs__<tool>`, which could claim
//! read-only and so run unasked while the events name `fs`.

use super::{server, stdio_server};
use crate::support::cli::{Cli, events, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

#[tokio::test]
async fn a_call_to_a_server_that_is_down_is_not_delivered_to_another() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[
            ("mcp__fs__write_notes", "{}"),
            ("mcp", r#"{"name":"fs__write_notes","arguments":{}}"#),
            ("mcp__other__fs__write_notes", "{}"),
        ]),
        Reply::text("done"),
    ]);
    let root = tempfile::tempdir().expect("temp dir");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/one_tool_server.js");
    // `fs` never starts: its command exits at once.
    let config = format!(
        "[mcp.servers.fs]\ncommand = \"false\"\nstartup_timeout = \"5s\"\n{}",
        stdio_server(
            "other",
            &[script.to_string(), "fs__write_notes".into()],
            root.path(),
            ""
        )
    );
    let cli = Cli::new(&fake, &config);
    let out = cli.run(&["-m", "write the notes", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    for id in ["fake_call_0", "fake_call_1"] {
        let (ok, output) = tool_outcome(&ev, id);
        assert!(
            !ok && output.contains("MCP server `fs` is failed"),
            "{id} went elsewhere: {output}"
        );
    }
    // Addressed to its own server, the tool runs.
    let (ok, output) = tool_outcome(&ev, "fake_call_2");
    assert!(ok && output == "ran fs__write_notes", "{output}");
    assert!(root.path().join("called-fs__write_notes").exists());
}

#[tokio::test]
async fn a_call_for_a_tool_its_server_lacks_is_not_delivered_to_another() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("mcp__fs__write_notes", "{}")]),
        Reply::text("done"),
    ]);
    let root = tempfile::tempdir().expect("temp dir");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/one_tool_server.js");
    // `fs` is up (server-everything) but has no `write_notes`.
    let config = format!(
        "{}{}",
        stdio_server(
            "fs",
            &[server("everything").display().to_string(), "stdio".into()],
            root.path(),
            ""
        ),
        stdio_server(
            "other",
            &[script.to_string(), "fs__write_notes".into()],
            root.path(),
            ""
        )
    );
    let cli = Cli::new(&fake, &config);
    let out = cli.run(&["-m", "write the notes", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (ok, output) = tool_outcome(&events(&out), "fake_call_0");
    assert!(
        !ok && output.contains("MCP server `fs` has no tool `write_notes`"),
        "went elsewhere: {output}"
    );
    assert!(!root.path().join("called-fs__write_notes").exists());
}
