//! `egirl mcp list [--json]` and `egirl doctor` with MCP servers.

use super::{everything, no_processes_left};
use crate::support::cli::{Cli, stderr};
use crate::support::fake_llama::FakeLlama;

#[tokio::test]
async fn mcp_list_prints_servers_and_tools_and_doctor_names_a_failed_one() {
    let fake = FakeLlama::start().await;
    let root = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "{}[mcp.servers.broken]\ncommand = \"/nonexistent/mcp-server\"\ncwd = {:?}\n",
        everything(root.path()),
        root.path().display().to_string()
    );
    let cli = Cli::new(&fake, &config);

    let out = cli.run(&["mcp", "list", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let servers = listed["servers"].as_array().expect("servers");
    assert_eq!(servers.len(), 2, "{listed}");
    let broken = &servers[0];
    assert_eq!(broken["name"], "broken");
    assert_eq!(broken["state"], "failed");
    assert!(
        broken["last_error"]
            .as_str()
            .unwrap()
            .contains("could not start `/nonexistent/mcp-server`"),
        "{broken}"
    );
    let ok = &servers[1];
    assert_eq!(ok["name"], "everything");
    assert_eq!(ok["state"], "ready");
    assert_eq!(ok["transport"], "stdio");
    let echo = ok["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo")
        .expect("echo listed");
    assert_eq!(echo["full_name"], "mcp__everything__echo");
    assert_eq!(echo["read_only"], true);

    let out = cli.run(&["mcp", "list"]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("everything (stdio): ready, "), "{text}");
    assert!(
        text.contains("  mcp__everything__echo [read-only]  "),
        "{text}"
    );
    assert!(
        text.contains("broken (stdio): failed, 0 tool(s)\n  last error: "),
        "{text}"
    );

    let out = cli.run(&["doctor"]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ok   mcp everything: stdio, "), "{text}");
    assert!(
        text.contains("FAIL mcp broken: stdio, failed: could not start"),
        "{text}"
    );
    assert!(!out.status.success());
    assert_eq!(no_processes_left(root.path()).await, Vec::<String>::new());
}
