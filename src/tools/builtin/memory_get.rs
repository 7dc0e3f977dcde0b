//! `memory_get {path, from?, lines?}`: lines of a memory file (MEMORY.md or
//! memory/*.md), typically around a `memory_search` hit.

use crate::chat::ToolSpec;
use crate::memory::files;
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
    // A link under memory/ may lead to a .env: file tools never read those.
    if let Ok(real) = files::resolve(&ctx.workspace, &path)
        && let Some(why) = ctx.protected.read_refusal(&real, &path)
    {
        return ToolOutput::fail(why);
    }
    let workspace = ctx.workspace.clone();
    let job =
        tokio::task::spawn_blocking(move || files::read_lines(&workspace, &path, from, lines));
    match job.await {
        Ok(Ok(text)) => ToolOutput::ok(text),
        Ok(Err(e)) => ToolOutput::fail(e),
        Err(e) => ToolOutput::fail(format!("memory_get failed: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExecApproval;
    use crate::tools::approval::test_context;

    #[tokio::test]
    async fn a_link_to_a_env_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("memory")).unwrap();
        std::fs::write(dir.path().join(".env"), "FOO_TOKEN=planted-value\n").unwrap();
        std::os::unix::fs::symlink("../.env", dir.path().join("memory/notes.md")).unwrap();
        std::fs::write(dir.path().join("memory/real.md"), "a note\n").unwrap();
        let ctx = test_context(dir.path(), ExecApproval::Ask);
        let out = run(&serde_json::json!({"path": "memory/notes.md"}), &ctx).await;
        assert!(
            !out.success && out.output.contains(".env file"),
            "{}",
            out.output
        );
        assert!(!out.output.contains("planted-value"));
        let out = run(&serde_json::json!({"path": "memory/real.md"}), &ctx).await;
        assert!(
            out.success && out.output.contains("a note"),
            "{}",
            out.output
        );
    }
}
