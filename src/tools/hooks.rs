//! Running one `[[hooks]]` command: its argv without a shell, in the
//! workspace, one JSON object on stdin, egirl's environment minus its
//! secrets (as `exec` gets it), killed with its whole process group at its
//! timeout. It runs as the user, outside the sandbox: the user wrote it
//! (only the config names hooks, and the model cannot write the config).

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::config::HookConfig;

/// What of a hook's stderr is kept (the reason a `pre_tool` hook gives).
const STDERR_CAP: usize = 16 * 1024;

/// How a hook run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookEnd {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it (not ours).
    Signalled,
    /// It ran past its timeout and was killed.
    TimedOut(Duration),
    /// It could not be started (why).
    NotStarted(String),
}

/// One hook run: how it ended, what it wrote on stderr, how long it took.
#[derive(Clone, Debug)]
pub struct HookRan {
    pub end: HookEnd,
    pub stderr: String,
    pub duration_ms: u64,
}

/// Runs `hook` with `input` on its stdin, in `cwd`, with `env` only.
pub async fn run(
    hook: &HookConfig,
    input: &str,
    env: &[(OsString, OsString)],
    cwd: &Path,
) -> HookRan {
    let started = Instant::now();
    let ran = |end, stderr| HookRan {
        end,
        stderr,
        duration_ms: started.elapsed().as_millis() as u64,
    };
    let Some((program, args)) = hook.command.split_first() else {
        return ran(HookEnd::NotStarted("no command".into()), String::new());
    };
    let mut cmd = tokio::process::Command::new(crate::config::expand_home(program));
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // Its own group: a timeout kills what it started too.
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return ran(HookEnd::NotStarted(e.to_string()), String::new()),
    };
    let group = child.id().map(|id| id as libc::pid_t);
    // On its own task: a hook that never reads its stdin must not hold us
    // past its timeout on a full pipe. A hook that exits first is no error.
    if let Some(mut stdin) = child.stdin.take() {
        let input = input.to_string();
        tokio::spawn(async move {
            let _ = stdin.write_all(input.as_bytes()).await;
        });
    }
    let stderr_task = child.stderr.take().map(|mut pipe| {
        tokio::spawn(async move {
            let mut kept = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let room = STDERR_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
            String::from_utf8_lossy(&kept).trim().to_string()
        })
    });
    let limit = hook.timeout.0;
    let end = match tokio::time::timeout(limit, child.wait()).await {
        Ok(Ok(status)) => status.code().map_or(HookEnd::Signalled, HookEnd::Exited),
        Ok(Err(e)) => HookEnd::NotStarted(e.to_string()),
        Err(_) => {
            kill_group(group);
            let _ = child.wait().await;
            HookEnd::TimedOut(limit)
        }
    };
    // Whatever it left running in its group goes too (a backgrounded
    // child would hold stderr open).
    kill_group(group);
    let stderr = match stderr_task {
        Some(task) => tokio::time::timeout(Duration::from_secs(1), task)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default(),
        None => String::new(),
    };
    ran(end, stderr)
}

fn kill_group(group: Option<libc::pid_t>) {
    if let Some(pgid) = group {
        // SAFETY: plain syscall; ESRCH (the group is gone) is fine.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ConfigDuration, HookEvent};

    fn hook(script: &str, timeout_ms: u64) -> HookConfig {
        HookConfig {
            event: HookEvent::PreTool,
            matcher: None,
            command: vec!["/bin/sh".into(), "-c".into(), script.into()],
            timeout: ConfigDuration(Duration::from_millis(timeout_ms)),
        }
    }

    #[tokio::test]
    async fn exit_code_and_stderr_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(
            &hook("cat >/dev/null; echo no way >&2; exit 2", 5_000),
            "{}",
            &[],
            dir.path(),
        )
        .await;
        assert_eq!(ran.end, HookEnd::Exited(2));
        assert_eq!(ran.stderr, "no way");
    }

    #[tokio::test]
    async fn a_hung_hook_is_killed_at_its_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(&hook("sleep 30 & sleep 30", 200), "{}", &[], dir.path()).await;
        assert!(matches!(ran.end, HookEnd::TimedOut(_)), "{ran:?}");
    }

    #[tokio::test]
    async fn a_missing_program_is_not_started() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = hook("", 1_000);
        h.command = vec!["/nonexistent/hook".into()];
        let ran = run(&h, "{}", &[], dir.path()).await;
        assert!(matches!(ran.end, HookEnd::NotStarted(_)), "{ran:?}");
    }
}
