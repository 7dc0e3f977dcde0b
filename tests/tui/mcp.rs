//! MCP in the TUI: `mcp 2/3` on the status line, `/mcp` in the
//! conversation, the approval modal for an MCP tool (server, tool, pretty
//! JSON arguments, the per-tool rule behind `a`/`p`), and MCP calls in the
//! tools pane as `mcp server/tool`.

use crossterm::event::KeyCode;
use egirl::protocol::{ApprovalRequest, EventKind, McpServerInfo, ToolCallEvent, ToolResultEvent};
use insta::assert_snapshot;
use serde_json::json;

use super::*;

fn servers() -> Vec<McpServerInfo> {
    let server = |name: &str, transport: &str, state: &str, tools: &[&str], error: Option<&str>| {
        McpServerInfo {
            name: name.into(),
            transport: transport.into(),
            state: state.into(),
            tools: tools.iter().map(|t| t.to_string()).collect(),
            last_error: error.map(str::to_string),
        }
    };
    vec![
        server(
            "everything",
            "stdio",
            "ready",
            &["echo", "get-sum", "get-tiny-image"],
            None,
        ),
        server(
            "fs",
            "stdio",
            "ready",
            &["read_text_file", "write_file"],
            None,
        ),
        server(
            "web",
            "http",
            "failed",
            &[],
            Some("failed to connect: connection refused"),
        ),
    ]
}

#[test]
fn the_status_line_counts_ready_servers_and_mcp_lists_them() {
    let mut app = app();
    assert!(
        !screen(&app, 160, 30).contains("mcp "),
        "no servers: no segment"
    );
    app.status.mcp = servers();
    type_text(&mut app, "/mcp");
    press(&mut app, key(KeyCode::Enter));
    assert_snapshot!(screen(&app, 160, 30));
}

#[test]
fn approval_modal_for_an_mcp_tool() {
    let mut app = app();
    let arguments = json!({"path": "/home/me/notes/todo.md", "content": "- buy milk\n- call mom"});
    app.apply(ev(EventKind::ApprovalRequest(ApprovalRequest {
        id: "ap-1".into(),
        tool: "mcp__fs__write_file".into(),
        command: serde_json::to_string_pretty(&arguments).unwrap(),
        cwd: "server `fs`, tool `write_file`".into(),
        rule: Some("mcp__fs__write_file".into()),
        rule_covers: None,
        sandbox: None,
        escalation: None,
    })));
    arm(&mut app);
    assert_snapshot!(screen(&app, 100, 30));
}

#[test]
fn mcp_calls_in_the_tools_pane_name_server_and_tool() {
    let mut app = app();
    apply_all(
        &mut app,
        [
            ev(EventKind::ToolCall(ToolCallEvent {
                id: "c1".into(),
                name: "mcp__everything__echo".into(),
                arguments: json!({"message": "hi"}),
                sandbox: None,
            })),
            ev(EventKind::ToolResult(ToolResultEvent {
                id: "c1".into(),
                name: "mcp__everything__echo".into(),
                success: true,
                output: "Echo: hi".into(),
                duration_ms: 12,
                diff: None,
            })),
            ev(EventKind::ToolCall(ToolCallEvent {
                id: "c2".into(),
                name: "mcp".into(),
                arguments: json!({"name": "fs__read_text_file", "arguments": {"path": "a.md"}}),
                sandbox: None,
            })),
            ev(EventKind::ToolResult(ToolResultEvent {
                id: "c2".into(),
                name: "mcp".into(),
                success: false,
                output: "MCP server `fs` failed the call: Transport closed".into(),
                duration_ms: 3,
                diff: None,
            })),
        ],
    );
    press(&mut app, key(KeyCode::F(3)));
    assert_snapshot!(screen(&app, 100, 24));
}
