//! `egirl agents list [--json]`: the agents the config declares (`default`
//! first), each with its workspace, model, whether it may go remote, the
//! tools it is denied, its MCP servers and the bindings that reach it.

use serde::Serialize;

use crate::config::{Config, DEFAULT_AGENT};
use crate::print;

#[derive(Debug, clap::Args)]
pub struct AgentsArgs {
    #[command(subcommand)]
    pub command: AgentsCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum AgentsCommand {
    /// The agents with their workspace, model, tools and bindings.
    List {
        /// Print one JSON array instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// One agent, as `--json` prints it (docs/cli.md).
#[derive(Debug, Serialize)]
pub struct Row {
    pub name: String,
    pub workspace: String,
    /// "local", "fast" or "own" (its `[agents.NAME.local]`).
    pub model: String,
    pub endpoints: Vec<String>,
    /// Whether a remote provider may take its turns.
    pub remote: bool,
    pub tools_denied: Vec<String>,
    pub mcp_servers: Vec<String>,
    /// The bindings naming it, as `doctor` shows them; `default` also
    /// takes whatever no binding matches.
    pub bindings: Vec<String>,
}

/// The agents in `agent_names` order.
pub fn rows(config: &Config) -> Vec<Row> {
    config
        .agent_names()
        .into_iter()
        .filter_map(|name| {
            let merged = config.for_agent(&name)?;
            let entry = config.agents.get(&name);
            let model = match entry {
                Some(e) if e.local.is_some() => "own",
                Some(e) if e.model.as_deref() == Some("fast") => "fast",
                _ => "local",
            };
            let remote = &merged.remote;
            let mut bindings: Vec<String> = config
                .bindings
                .iter()
                .filter(|b| b.agent == name)
                .map(|b| b.describe())
                .collect();
            if name == DEFAULT_AGENT {
                bindings.push("(anything no binding matches)".into());
            }
            Some(Row {
                workspace: config.agent_workspace(&name).display().to_string(),
                model: model.into(),
                endpoints: merged.local.endpoint_list(),
                remote: remote.anthropic.is_some()
                    || remote.openai.is_some()
                    || remote.azure.is_some(),
                tools_denied: merged.tools.deny.clone(),
                mcp_servers: merged.mcp.servers.keys().cloned().collect(),
                bindings,
                name,
            })
        })
        .collect()
}

pub fn run(config: &Config, args: &AgentsArgs) -> anyhow::Result<()> {
    let AgentsCommand::List { json } = args.command;
    let rows = rows(config);
    if json {
        print::out_json(&serde_json::to_string(&rows)?)?;
    } else {
        print::out(&render(&rows))?;
    }
    Ok(())
}

fn render(rows: &[Row]) -> String {
    let list = |items: &[String]| {
        if items.is_empty() {
            "none".to_string()
        } else {
            items.join(", ")
        }
    };
    let mut out = String::new();
    for row in rows {
        out.push_str(&format!("{}\n", row.name));
        out.push_str(&format!("  workspace  {}\n", row.workspace));
        out.push_str(&format!(
            "  model      {} ({})\n",
            row.model,
            list(&row.endpoints)
        ));
        let remote = if row.remote { "yes" } else { "no" };
        out.push_str(&format!("  remote     {remote}\n"));
        out.push_str(&format!("  denied     {}\n", list(&row.tools_denied)));
        out.push_str(&format!("  mcp        {}\n", list(&row.mcp_servers)));
        out.push_str(&format!("  bindings   {}\n", list(&row.bindings)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_show_each_agents_model_policy_and_bindings() {
        let config = crate::config::parse(
            "[local]\nendpoint = \"http://127.0.0.1:8080\"\n\
             [local.fast]\nendpoint = \"http://127.0.0.1:8081\"\n\
             [agents.home]\nmodel = \"fast\"\nremote = false\ntools.deny = [\"exec\"]\n\
             [[bindings]]\nagent = \"home\"\nchannel = \"telegram\"\nchat_id = 5\n",
            std::path::Path::new("egirl.toml"),
        )
        .unwrap();
        let rows = rows(&config);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].name, "default");
        assert_eq!(rows[0].bindings, ["(anything no binding matches)"]);
        let home = &rows[1];
        assert_eq!(home.name, "home");
        assert_eq!(home.model, "fast");
        assert_eq!(home.endpoints, ["http://127.0.0.1:8081"]);
        assert!(!home.remote);
        assert_eq!(home.tools_denied, ["exec"]);
        assert_eq!(home.bindings, ["telegram chat_id=5"]);
        assert!(home.workspace.ends_with("agents/home/workspace"));
        assert!(render(&rows).contains("  denied     exec\n"));
    }
}
