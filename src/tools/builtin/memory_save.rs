//! `memory_save {text, long_term?}`: appends a note to today's daily log,
//! or to MEMORY.md (`long_term`, for durable facts). Append and flush
//! only: what is there is never rewritten.

use chrono::Local;

use crate::chat::ToolSpec;
use crate::memory::files;
use crate::tools::{ToolContext, ToolOutput, arg_bool, arg_str};

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "memory_save",
        description: "Save a note to today's log, or with long_term=true to MEMORY.md (lasting facts).",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "long_term": {"type": "boolean"}
            },
            "required": ["text"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let text = match arg_str(args, "text") {
        Ok(t) if !t.trim().is_empty() => t.to_string(),
        Ok(_) => return ToolOutput::fail("`text` is empty; nothing to save"),
        Err(e) => return e,
    };
    let long_term = match arg_bool(args, "long_term") {
        Ok(v) => v.unwrap_or(false),
        Err(e) => return e,
    };
    let workspace = ctx.workspace.clone();
    let origin = ctx.origin.to_string();
    let job = tokio::task::spawn_blocking(move || {
        files::save(&workspace, Local::now(), &origin, &text, long_term)
    });
    match job.await {
        Ok(Ok(path)) => ToolOutput::ok(format!("saved to {path}")),
        Ok(Err(e)) => ToolOutput::fail(format!("could not save to memory: {e}")),
        Err(e) => ToolOutput::fail(format!("memory_save failed: {e}")),
    }
}
