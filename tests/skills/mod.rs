//! Skills end to end: the fixtures in `tests/fixtures/skills/` (real-world
//! OpenClaw-style skills and the edge cases), precedence, gating, the
//! prompt block, the tools, hot reload, the CLI and the agent's prompt.

mod agent;
mod cli;
mod loading;
mod reload;
mod tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use egirl::config::{ExecConfig, SkillsConfig};
use egirl::protocol::Origin;
use egirl::skills::Registry;
use egirl::skills::gating::Host;
use egirl::tools::ToolContext;

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skills")
}

/// `[skills]` with these extra directories and the default budget.
pub fn config(dirs: &[&Path]) -> SkillsConfig {
    SkillsConfig {
        dirs: dirs.iter().map(|d| d.display().to_string()).collect(),
        ..SkillsConfig::default()
    }
}

/// A machine with exactly these binaries and environment variables, on Linux.
pub struct FakeHost {
    pub host: Host,
    _bins: tempfile::TempDir,
}

pub fn host(bins: &[&str], env: &'static [&'static str]) -> FakeHost {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("bin dir");
    for name in bins {
        let path = dir.path().join(name);
        std::fs::write(&path, "#!/bin/sh\n").expect("fake bin");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    FakeHost {
        host: Host {
            os: "linux".into(),
            path: vec![dir.path().to_path_buf()],
            env_is_set: Box::new(move |name| env.contains(&name)),
        },
        _bins: dir,
    }
}

/// A workspace (with its `skills/` folder) in a temp dir.
pub fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (ws, _) = egirl::workspace::ensure(&dir.path().join("ws")).expect("workspace");
    (dir, ws)
}

pub fn tool_context(workspace: &Path, skills: Arc<Registry>) -> ToolContext {
    let mut ctx =
        ToolContext::standalone(workspace, ExecConfig::default(), "skills-test", Origin::Cli);
    ctx.skills = skills;
    ctx
}

/// Polls `done` until it holds or `limit` passes (a bound, never a timing
/// claim: a slow machine only waits longer).
pub async fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done()
}
