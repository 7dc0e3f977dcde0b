//! `cron_list {}`: the scheduled jobs, one line each, with their next run
//! and how the last one went.

use chrono::Utc;

use crate::chat::ToolSpec;
use crate::cron::CronStore;
use crate::tools::{ToolContext, ToolOutput};

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "cron_list",
        description: "List scheduled jobs, next runs and last status.",
        parameters: serde_json::json!({"type": "object", "properties": {}}),
    }
}

pub async fn run(_args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    match CronStore::in_workspace(&ctx.workspace).load() {
        Ok(jobs) if jobs.is_empty() => ToolOutput::ok("no jobs scheduled"),
        Ok(jobs) => {
            let now = Utc::now();
            let lines: Vec<String> = jobs.iter().map(|j| j.describe(now)).collect();
            ToolOutput::ok(lines.join("\n"))
        }
        Err(e) => ToolOutput::fail(format!("{e:#}")),
    }
}
