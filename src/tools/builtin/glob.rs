//! `glob {pattern}`: files (and directories, shown with a trailing `/`)
//! matching a glob, relative to the workspace.
//!
//! `*` stays within one directory and `**` crosses directories, like a
//! shell with globstar. The walk respects .gitignore (even outside a git
//! repository), skips `.git`, and never follows symlinks, so a link that
//! leads out of the workspace is listed but never walked into. An absolute
//! pattern may name an `[tools] allowed_paths` root.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use tokio_util::sync::CancellationToken;

use crate::chat::ToolSpec;
use crate::tools::{ToolContext, ToolOutput, arg_str};

/// Paths listed per call; the rest are counted.
const MAX_RESULTS: usize = 200;
/// Entries visited before giving up on a pattern that walks too much.
const MAX_VISITED: usize = 200_000;

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "glob",
        description: "List workspace files matching a glob, e.g. src/**/*.rs.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {"pattern": {"type": "string"}},
            "required": ["pattern"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let pattern = match arg_str(args, "pattern") {
        Ok(p) => p.trim(),
        Err(e) => return e,
    };
    let plan = match plan(pattern, ctx) {
        Ok(plan) => plan,
        Err(e) => return ToolOutput::fail(e),
    };
    let cancel = ctx.cancel.clone();
    let pattern = pattern.to_string();
    match tokio::task::spawn_blocking(move || walk(&plan, &pattern, &cancel)).await {
        Ok(output) => output,
        Err(e) => ToolOutput::fail(format!("glob failed: {e}")),
    }
}

/// Where to walk and how to match and show what is found.
struct Plan {
    /// The root the pattern is relative to (canonical).
    root: PathBuf,
    /// Where the walk starts: the pattern's literal leading directories.
    base: PathBuf,
    matcher: GlobMatcher,
    /// Show paths absolute (an allowed root) rather than workspace-relative.
    absolute: bool,
}

/// The characters that make a part of a pattern a glob rather than a
/// literal name.
const GLOB_SYNTAX: [char; 5] = ['*', '?', '[', '{', '\\'];

fn plan(pattern: &str, ctx: &ToolContext) -> Result<Plan, String> {
    if pattern.is_empty() {
        return Err("the pattern is empty; try `*` or `**/*.md`".into());
    }
    if pattern.split('/').any(|part| part == "..") {
        return Err(format!(
            "pattern `{pattern}` contains `..`; patterns are relative to the workspace and cannot leave it"
        ));
    }
    let (root, relative, absolute) = split_root(pattern, ctx)?;
    let relative = if relative.is_empty() {
        "*".to_string()
    } else {
        relative
    };
    let matcher = GlobBuilder::new(&relative)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("invalid glob pattern `{pattern}`: {e}"))?
        .compile_matcher();
    let base = walk_base(&root, &relative);
    Ok(Plan {
        root,
        base,
        matcher,
        absolute,
    })
}

/// The root a pattern is relative to, the pattern relative to it, and
/// whether that root is an allowed path (not the workspace): an absolute
/// pattern names the longest root it lies in, any other the workspace.
fn split_root(pattern: &str, ctx: &ToolContext) -> Result<(PathBuf, String, bool), String> {
    let expanded = crate::config::expand_home(pattern);
    let work_dir = ctx.work_dir();
    if !expanded.is_absolute() && work_dir == ctx.workspace {
        let rest = pattern.trim_start_matches("./").to_string();
        return Ok((ctx.workspace.clone(), rest, false));
    }
    // A client's project: the pattern starts there, under its root.
    let expanded = match expanded.is_absolute() {
        true => expanded,
        false => work_dir.join(pattern.trim_start_matches("./")),
    };
    let roots = std::iter::once(&ctx.workspace).chain(&ctx.allowed_paths);
    let found = roots
        .filter_map(|root| Some((root, expanded.strip_prefix(root).ok()?)))
        .max_by_key(|(root, _)| root.as_os_str().len());
    let Some((root, rest)) = found else {
        let roots = std::iter::once(&ctx.workspace)
            .chain(&ctx.allowed_paths)
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        return Err(format!(
            "pattern `{pattern}` is outside the allowed roots; glob may only search {roots}"
        ));
    };
    let rest = rest.to_string_lossy().into_owned();
    Ok((root.clone(), rest, root != &ctx.workspace))
}

/// Start below the pattern's literal directories (`src/**/*.rs` walks
/// only src/), but only where that is a real directory: through a
/// symlink the walk could leave the roots, so walk from the root instead,
/// which does not follow links.
fn walk_base(root: &Path, relative: &str) -> PathBuf {
    let literal: Vec<&str> = relative
        .split('/')
        .take_while(|part| !part.contains(GLOB_SYNTAX))
        .collect();
    let dirs = &literal[..literal.len().min(relative.split('/').count() - 1)];
    let candidate = dirs
        .iter()
        .fold(root.to_path_buf(), |path, part| path.join(part));
    match std::fs::canonicalize(&candidate) {
        Ok(real) if real == candidate && real.is_dir() => real,
        _ => root.to_path_buf(),
    }
}

fn walk(plan: &Plan, pattern: &str, cancel: &CancellationToken) -> ToolOutput {
    let walker = ignore::WalkBuilder::new(&plan.base)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    let mut found = Vec::new();
    let mut visited = 0;
    for entry in walker {
        if cancel.is_cancelled() {
            return ToolOutput::fail("interrupted");
        }
        visited += 1;
        if visited > MAX_VISITED {
            found.sort();
            return ToolOutput::ok(format!(
                "{}\n[stopped after {MAX_VISITED} entries; narrow the pattern]",
                found.join("\n")
            ));
        }
        // Unreadable directories are skipped, as `find` would.
        let Ok(entry) = entry else { continue };
        let Ok(relative) = entry.path().strip_prefix(&plan.root) else {
            continue;
        };
        if relative.as_os_str().is_empty() || !plan.matcher.is_match(relative) {
            continue;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        found.push(show(plan, relative, is_dir));
    }
    found.sort();
    if found.is_empty() {
        let hint = if pattern.contains("**") {
            ""
        } else {
            " (* does not cross directories; try **/ in front)"
        };
        return ToolOutput::ok(format!("no files match `{pattern}`{hint}"));
    }
    let rest = found.len().saturating_sub(MAX_RESULTS);
    found.truncate(MAX_RESULTS);
    let mut out = found.join("\n");
    if rest > 0 {
        out.push_str(&format!("\n[... and {rest} more; narrow the pattern]"));
    }
    ToolOutput::ok(out)
}

fn show(plan: &Plan, relative: &Path, is_dir: bool) -> String {
    let path = if plan.absolute {
        plan.root.join(relative).display().to_string()
    } else {
        relative.display().to_string()
    };
    if is_dir { path + "/" } else { path }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExecApproval;
    use crate::tools::approval::test_context;
    use serde_json::json;

    fn setup() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "README.md",
            "notes/a.md",
            "notes/deep/b.md",
            "src/main.rs",
            "target/debug/junk.md",
            ".git/config.md",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        dir
    }

    async fn glob(dir: &Path, pattern: &str) -> ToolOutput {
        run(
            &json!({"pattern": pattern}),
            &test_context(dir, ExecApproval::Deny),
        )
        .await
    }

    #[tokio::test]
    async fn matches_recursively_and_respects_gitignore() {
        let dir = setup();
        let out = glob(dir.path(), "**/*.md").await;
        assert!(out.success);
        assert_eq!(out.output, "README.md\nnotes/a.md\nnotes/deep/b.md");
        let out = glob(dir.path(), "notes/**/*.md").await;
        assert_eq!(out.output, "notes/a.md\nnotes/deep/b.md");
        let out = glob(dir.path(), "./notes/*.md").await;
        assert_eq!(out.output, "notes/a.md");
    }

    #[tokio::test]
    async fn star_stays_in_one_directory_and_shows_dirs() {
        let dir = setup();
        let out = glob(dir.path(), "*").await;
        assert_eq!(out.output, ".gitignore\nREADME.md\nnotes/\nsrc/");
        let out = glob(dir.path(), "*.rs").await;
        assert!(out.output.starts_with("no files match") && out.output.contains("**/"));
    }

    #[tokio::test]
    async fn caps_the_list() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..250 {
            std::fs::write(dir.path().join(format!("f{i:03}.txt")), "").unwrap();
        }
        let out = glob(dir.path(), "*.txt").await;
        assert_eq!(out.output.lines().count(), MAX_RESULTS + 1);
        assert!(
            out.output
                .ends_with("[... and 50 more; narrow the pattern]")
        );
    }

    #[tokio::test]
    async fn refuses_escapes() {
        let dir = setup();
        let out = glob(dir.path(), "../*").await;
        assert!(!out.success && out.output.contains(".."), "{}", out.output);
        let out = glob(dir.path(), "/etc/*").await;
        assert!(
            !out.success && out.output.contains("outside"),
            "{}",
            out.output
        );
        // A symlink out of the workspace is listed but never walked into.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let out = glob(dir.path(), "link/*.md").await;
        assert!(out.output.starts_with("no files match"), "{}", out.output);
        let out = glob(dir.path(), "**/secret.md").await;
        assert!(out.output.starts_with("no files match"), "{}", out.output);
    }

    #[tokio::test]
    async fn absolute_patterns_inside_roots_work() {
        let dir = setup();
        let ctx = test_context(dir.path(), ExecApproval::Deny);
        let pattern = format!("{}/src/*.rs", ctx.workspace.display());
        let out = run(&json!({"pattern": pattern}), &ctx).await;
        assert_eq!(out.output, "src/main.rs");

        let extra = tempfile::tempdir().unwrap();
        std::fs::write(extra.path().join("todo.md"), "t").unwrap();
        let extra_root = std::fs::canonicalize(extra.path()).unwrap();
        let mut ctx = ctx;
        ctx.allowed_paths = vec![extra_root.clone()];
        let pattern = format!("{}/*.md", extra_root.display());
        let out = run(&json!({"pattern": pattern}), &ctx).await;
        assert_eq!(out.output, extra_root.join("todo.md").display().to_string());
    }
}
