//! MCP (docs/mcp.md) through the real binary, against the real servers
//! `scripts/install-mcp-servers.sh` installs from npm
//! (@modelcontextprotocol/server-everything and server-filesystem), called
//! by the scripted fake model.

mod addressing;
mod cli;
mod failures;
pub mod http;
mod redaction;
mod stdio;

use std::path::{Path, PathBuf};

/// The installed server's entry point; a missing one fails the test with
/// the script to run (never a silent pass).
pub fn server(package: &str) -> PathBuf {
    let cache = std::env::var_os("EGIRL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/egirl")
        });
    let path = cache.join(format!(
        "mcp/node_modules/@modelcontextprotocol/server-{package}/dist/index.js"
    ));
    assert!(
        path.is_file(),
        "no MCP server-{package} at {}: run scripts/install-mcp-servers.sh",
        path.display()
    );
    path
}

/// `[mcp.servers.NAME]` for a stdio server run by node in `cwd`.
pub fn stdio_server(name: &str, args: &[String], cwd: &Path, extra: &str) -> String {
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "[mcp.servers.{name}]\ncommand = \"node\"\nargs = [{}]\ncwd = {:?}\n{extra}\n",
        args.join(", "),
        cwd.display().to_string()
    )
}

/// server-everything over stdio, in `cwd`.
pub fn everything(cwd: &Path) -> String {
    stdio_server(
        "everything",
        &[server("everything").display().to_string(), "stdio".into()],
        cwd,
        "",
    )
}

/// server-filesystem allowed to reach `root` only, started in `root`.
pub fn filesystem(root: &Path) -> String {
    stdio_server(
        "fs",
        &[
            server("filesystem").display().to_string(),
            root.display().to_string(),
        ],
        root,
        "",
    )
}

/// Processes whose working directory is `dir` or below it (the servers a
/// test started there): after egirl exits there must be none.
pub fn processes_in(dir: &Path) -> Vec<String> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let pid = entry.file_name().to_string_lossy().to_string();
        if !pid.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        // A zombie is gone already (only its exit status is left).
        let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
        if status.contains("State:\tZ") {
            continue;
        }
        if cwd.starts_with(&dir) {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push(format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    found
}

/// Waits (bounded) for the processes a run left in `dir` to be gone: the
/// kill is sent as egirl exits, the kernel may take a moment.
pub async fn no_processes_left(dir: &Path) -> Vec<String> {
    for _ in 0..50 {
        if processes_in(dir).is_empty() {
            return Vec::new();
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    processes_in(dir)
}
