//! `memory_search {query, max_results?, min_score?}`: hybrid search over
//! MEMORY.md and the daily logs. The output is the JSON of
//! `egirl memory search --json` (`fallback: "fts"` when no vectors were
//! used); the hits also go to the TUI's memory pane (`memory_hits`).

use crate::chat::ToolSpec;
use crate::tools::{ToolContext, ToolOutput, arg_f64, arg_str, arg_u64};

/// Hits one call may ask for.
const MAX_RESULTS_CAP: u64 = 20;

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "memory_search",
        description: "Search memory (MEMORY.md, daily logs) for facts and past talks; hits give path and lines for memory_get.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "max_results": {"type": "integer"},
                "min_score": {"type": "number"}
            },
            "required": ["query"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let Some(memory) = &ctx.memory else {
        return ToolOutput::fail("memory search is not available in this session");
    };
    let query = match arg_str(args, "query") {
        Ok(q) if !q.trim().is_empty() => q.trim(),
        Ok(_) => return ToolOutput::fail("`query` is empty; say what to look for"),
        Err(e) => return e,
    };
    let (max_results, min_score) = match (arg_u64(args, "max_results"), arg_f64(args, "min_score"))
    {
        (Ok(m), Ok(s)) => (m, s),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    // 0 is what small models send for "default".
    let max_results = max_results
        .filter(|&m| m > 0)
        .map(|m| m.min(MAX_RESULTS_CAP) as usize);
    let min_score = min_score.map(|s| s.clamp(0.0, 1.0));
    match memory.search(query, max_results, min_score).await {
        Ok(result) => {
            memory.announce(&ctx.session, &ctx.origin, &result);
            let mut out = serde_json::to_string(&result)
                .unwrap_or_else(|e| format!("memory search result could not be encoded: {e}"));
            for notice in &result.notices {
                out.push_str("\nnote: ");
                out.push_str(notice);
            }
            ToolOutput::ok(out)
        }
        Err(e) => ToolOutput::fail(format!("memory search failed: {e:#}")),
    }
}
