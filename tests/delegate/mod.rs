//! delegate_claude_code with the real Claude Code CLI (installed by
//! scripts/install-claude-code.sh) against an in-process fake of the
//! Anthropic API scripted to write a file.

mod cli;
mod confined;
pub mod fake_claude_api;
mod modal;

use std::path::PathBuf;

/// The installed `claude`; a test that needs it fails with one line naming
/// the script when it is missing.
pub fn claude_bin() -> PathBuf {
    let cache = std::env::var_os("EGIRL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/egirl")
        });
    let bin = cache.join("claude-code/node_modules/.bin/claude");
    assert!(
        bin.exists(),
        "Claude Code is not installed: run scripts/install-claude-code.sh"
    );
    bin
}

/// Config for the real CLI: `permissions` as given.
pub fn config(permissions: &str) -> String {
    format!(
        "[delegate.claude_code]\nbinary = \"{}\"\npermissions = \"{permissions}\"\n",
        claude_bin().display()
    )
}

pub const API_KEY: &str = "sk-ant-test-delegate-0123456789";

pub fn delegate_call(task: &str) -> crate::support::fake_llama::Reply {
    let args = serde_json::json!({ "task": task, "dir": "." }).to_string();
    crate::support::fake_llama::Reply::tool_calls(&[("delegate_claude_code", &args)])
}
