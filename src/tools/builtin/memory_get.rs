//! `memory_get {path, from?, lines?}`: lines of a memory file (MEMORY.md or
//! memory/*.md), typically around a `memory_search` hit.

use crate::memory::files;
use crate::providers::ToolSpec;
use crate::tools::{ToolContext, ToolOutput, arg_str, arg_u64};

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "memory_get",
        description: "Read lines of MEMORY.md or memory/*.md (from: first line, 1-based; lines: count).",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "from": {"type": "integer"},
                "lines": {"type": "integer"}
            },
            "required": ["path"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let path = match arg_str(args, "path") {
        Ok(p) => p.to_string(),
        Err(e) => return e,
    };
    let (from, lines) = match (arg_u64(args, "from"), arg_u64(args, "lines")) {
        (Ok(f), Ok(l)) => (f, l),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    let from = from.filter(|&f| f > 0).unwrap_or(1) as usize;
    let lines = lines
        .filter(|&l| l > 0)
        .map_or(files::DEFAULT_LINES, |l| l as usize);
    let workspace = ctx.workspace.clone();
    let job =
        tokio::task::spawn_blocking(move || files::read_lines(&workspace, &path, from, lines));
    match job.await {
        Ok(Ok(text)) => ToolOutput::ok(text),
        Ok(Err(e)) => ToolOutput::fail(e),
        Err(e) => ToolOutput::fail(format!("memory_get failed: {e}")),
    }
}
