//! `cron_remove {name}`: deletes a scheduled job.

use crate::chat::ToolSpec;
use crate::cron::CronStore;
use crate::tools::{ToolContext, ToolOutput, arg_str};

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "cron_remove",
        description: "Delete a scheduled job by name.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let name = match arg_str(args, "name") {
        Ok(n) => n.trim(),
        Err(e) => return e,
    };
    match CronStore::in_workspace(&ctx.workspace).remove(name) {
        Ok(true) => ToolOutput::ok(format!("removed job `{name}`")),
        Ok(false) => ToolOutput::fail(format!("no job named `{name}` (cron_list shows them)")),
        Err(e) => ToolOutput::fail(format!("{e:#}")),
    }
}
