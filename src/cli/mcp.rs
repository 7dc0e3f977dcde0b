//! `egirl mcp list [--json]`: each configured MCP server, connected for the
//! occasion (as egirl would at start), with its state, tools and last error;
//! the servers are stopped before it exits. `egirl doctor` uses the same.

use std::sync::Arc;

use serde::Serialize;

use super::Environment;
use crate::mcp::McpManager;
use crate::print;

#[derive(Debug, clap::Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: McpCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// Configured MCP servers with their state and tools.
    List {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Serialize)]
struct ServerRow {
    name: String,
    transport: String,
    state: String,
    tools: Vec<ToolRow>,
    last_error: Option<String>,
}

#[derive(Debug, Serialize)]
struct ToolRow {
    name: String,
    full_name: String,
    read_only: bool,
    description: String,
}

/// Starts the configured servers and waits until each is up or has failed.
pub async fn connect(env: &Environment) -> Arc<McpManager> {
    let manager = McpManager::start(
        &env.config.mcp,
        &env.workspace,
        crate::tools::sandbox::env::command_env(
            &env.config.tools.exec.env_passthrough,
            &env.env_files,
        ),
        crate::bus::EventBus::new(),
    );
    manager.settled().await;
    manager
}

pub async fn run(env: &Environment, args: &McpArgs) -> anyhow::Result<()> {
    let McpCommand::List { json } = args.command;
    let manager = connect(env).await;
    let tools = manager.tools();
    let rows: Vec<ServerRow> = manager
        .infos()
        .into_iter()
        .map(|info| ServerRow {
            tools: tools
                .iter()
                .filter(|t| t.server == info.name)
                .map(|t| ToolRow {
                    name: t.name.clone(),
                    full_name: t.full_name.clone(),
                    read_only: t.read_only,
                    description: t.description.clone(),
                })
                .collect(),
            name: info.name,
            transport: info.transport,
            state: info.state,
            last_error: info.last_error,
        })
        .collect();
    manager.shutdown().await;
    if json {
        let out = serde_json::json!({ "servers": rows });
        print::out_json(&serde_json::to_string(&out)?)?;
    } else {
        print::out(&render(&rows))?;
    }
    Ok(())
}

fn render(rows: &[ServerRow]) -> String {
    if rows.is_empty() {
        return "no MCP servers configured ([mcp.servers.NAME] in egirl.toml)\n".into();
    }
    let mut out = String::new();
    for row in rows {
        out.push_str(&format!(
            "{} ({}): {}, {} tool(s)\n",
            row.name,
            row.transport,
            row.state,
            row.tools.len()
        ));
        if let Some(error) = &row.last_error {
            out.push_str(&format!("  last error: {error}\n"));
        }
        for tool in &row.tools {
            let ro = if tool.read_only { " [read-only]" } else { "" };
            let purpose = tool.description.lines().next().unwrap_or("");
            out.push_str(&format!("  {}{ro}  {purpose}\n", tool.full_name));
        }
    }
    out
}
