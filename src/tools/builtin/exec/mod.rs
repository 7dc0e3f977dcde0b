//! `exec {command, timeout_secs?}`: runs a shell command in the workspace,
//! after the approver said yes.
//!
//! The command runs as `bash -c` (or `sh -c`) in a session of its own, so its
//! process group holds everything it starts. When the command ends, times
//! out, is interrupted, or this future is dropped, the whole group is killed.
//! Sandboxed, it also runs as PID 1 of a PID namespace (`sandbox::init`):
//! when it ends, the kernel kills what it started, `setsid` included, and
//! killing the group kills PID 1. Unsandboxed, a process that left the
//! group with its own `setsid` is not followed. stdout and stderr are read
//! concurrently into bounded buffers that keep the head and the tail.
//!
//! Every command runs in the OS sandbox (`tools::sandbox`) unless
//! `sandbox = "off"`; its output's first line says which. When a sandboxed
//! command fails in a way that looks like the sandbox refused it, the TUI
//! user may re-run it once outside (`offer_outside`).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};

use crate::chat::ToolSpec;
use crate::protocol::Origin;
use crate::tools::approval::{Granted, Refusal};
use crate::tools::sandbox::env::command_env;
use crate::tools::{ToolContext, ToolOutput, arg_str, arg_u64, sandbox};

/// How long output may keep arriving after the group was killed: only a
/// process that escaped the group (its own `setsid`) can hold a pipe open.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "exec",
        description: "Run a bash command in the workspace (the user may have to approve it).",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "timeout_secs": {"type": "integer"}
            },
            "required": ["command"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let command = match arg_str(args, "command") {
        Ok(c) if !c.trim().is_empty() => c,
        Ok(_) => return ToolOutput::fail("the command is empty"),
        Err(e) => return e,
    };
    let requested = match arg_u64(args, "timeout_secs") {
        Ok(t) => t,
        Err(e) => return e,
    };
    if let Err(why) = ctx.approver.check_exec(command, ctx).await {
        return ToolOutput::refused(why);
    }
    if ctx.cancel.is_cancelled() {
        return ToolOutput::fail("interrupted");
    }
    // The model may shorten the timeout, never extend it past the config.
    let ceiling = ctx.exec.timeout_secs.max(1);
    let secs = requested
        .filter(|&t| t > 0)
        .map_or(ceiling, |t| t.min(ceiling));
    let timeout = Duration::from_secs(secs);
    let sandbox = match sandbox::prepare(ctx) {
        Ok(sandbox) => sandbox,
        Err(why) => return ToolOutput::fail(why),
    };
    let Some(sandbox) = sandbox else {
        return execute(command, ctx, timeout, None).await;
    };
    let out = execute(command, ctx, timeout, Some(&sandbox)).await;
    drop(sandbox);
    if out.success || ctx.cancel.is_cancelled() {
        return out;
    }
    match offer_outside(command, &out.output, ctx).await {
        Some(Ok(approved)) => {
            let rerun = execute(command, ctx, timeout, None).await;
            ToolOutput {
                output: format!(
                    "[re-run outside the sandbox: {approved}]\n{}\n[the sandboxed run before it]\n{}",
                    rerun.output, out.output
                ),
                ..rerun
            }
        }
        Some(Err(why)) => ToolOutput {
            output: format!("{}\n(not re-run outside the sandbox: {why})", out.output),
            ..out
        },
        None => out,
    }
}

enum Ending {
    Exited(ExitStatus),
    TimedOut,
    Interrupted,
}

async fn execute(
    command: &str,
    ctx: &ToolContext,
    timeout: Duration,
    sandbox: Option<&sandbox::Prepared>,
) -> ToolOutput {
    let started = Instant::now();
    let env = command_env(&ctx.exec.env_passthrough, ctx.protected.env_files());
    let cwd = ctx.work_dir();
    let mut child = match spawn("bash", command, &cwd, &env, sandbox) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && cwd.is_dir() => {
            match spawn("sh", command, &cwd, &env, sandbox) {
                Ok(child) => child,
                Err(e) => return ToolOutput::fail(format!("cannot start a shell: {e}")),
            }
        }
        Err(e) if sandbox.is_some() => {
            return ToolOutput::fail(format!(
                "cannot start bash in {} inside the sandbox: {e}",
                cwd.display()
            ));
        }
        Err(e) => {
            return ToolOutput::fail(format!("cannot start bash in {}: {e}", cwd.display()));
        }
        Ok(child) => child,
    };
    let Some(pid) = child.id() else {
        return ToolOutput::fail("the shell exited before it could be watched");
    };
    // After setsid the shell leads its own group: group id == pid.
    let mut group = GroupGuard(Some(pid as libc::pid_t));
    let cap = ctx.exec.max_output_bytes;
    let mut stdout = capture(child.stdout.take(), cap);
    let mut stderr = capture(child.stderr.take(), cap);

    let ending = tokio::select! {
        status = child.wait() => match status {
            Ok(status) => Ending::Exited(status),
            Err(e) => return ToolOutput::fail(format!("waiting for the command failed: {e}")),
        },
        _ = tokio::time::sleep(timeout) => Ending::TimedOut,
        _ = ctx.cancel.cancelled() => Ending::Interrupted,
    };
    group.kill();
    if !matches!(ending, Ending::Exited(_)) {
        let _ = child.wait().await;
    }
    let drained = async {
        for stream in [&mut stdout, &mut stderr] {
            if let Some(task) = stream.task.as_mut() {
                let _ = task.await;
            }
        }
    };
    if tokio::time::timeout(DRAIN_GRACE, drained).await.is_err() {
        for stream in [&stdout, &stderr] {
            if let Some(task) = &stream.task {
                task.abort();
            }
        }
    }
    group.disarm();
    let mut out = report(
        &ending,
        started.elapsed(),
        timeout,
        &stdout.buffer,
        &stderr.buffer,
    );
    if let Some(sandbox) = sandbox {
        // On the first line, which the tools pane and the model see first.
        let (first, rest) = out.output.split_once('\n').unwrap_or((&out.output, ""));
        out.output = format!("{first} [sandbox: {}]\n{rest}", sandbox.label);
    }
    out
}

/// git takes a working directory holding `HEAD`, `objects/` and `refs/`
/// for a bare repository and runs what its `config` names (a textconv for
/// `git diff --no-index`, `core.fsmonitor`). A workspace without `.git` is
/// plain files the model may write, so a rule for `git diff` would run the
/// model's program. `safe.bareRepository=explicit`, given as command-line
/// config (which a repository cannot override), makes git use a bare
/// repository only when told (`--git-dir`). Appended after any
/// `GIT_CONFIG_COUNT` entries already in `env`.
fn git_refuses_implicit_bare(env: &[(OsString, OsString)]) -> [(OsString, OsString); 3] {
    let count = env
        .iter()
        .find(|(k, _)| k == "GIT_CONFIG_COUNT")
        .and_then(|(_, v)| v.to_str()?.parse::<usize>().ok())
        .unwrap_or(0);
    [
        (
            format!("GIT_CONFIG_KEY_{count}").into(),
            "safe.bareRepository".into(),
        ),
        (
            format!("GIT_CONFIG_VALUE_{count}").into(),
            "explicit".into(),
        ),
        ("GIT_CONFIG_COUNT".into(), (count + 1).to_string().into()),
    ]
}

/// `env` replaces egirl's environment (see `sandbox::env`); `sandbox`
/// None: the command runs as the user, unconfined.
fn spawn(
    shell: &str,
    command: &str,
    cwd: &Path,
    env: &[(OsString, OsString)],
    sandbox: Option<&sandbox::Prepared>,
) -> std::io::Result<Child> {
    let mut cmd = Command::new(shell);
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        // egirl's environment without its secrets (see `sandbox::env`).
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Nobody can page through output: keep git and friends from trying.
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .envs(git_refuses_implicit_bare(env))
        .kill_on_drop(true);
    // SAFETY: the closure runs in the forked child before exec and only calls
    // setsid(2) and close_range(2), async-signal-safe, touching no parent
    // memory.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // Only stdin, stdout and stderr reach the command: a descriptor
            // egirl inherited without close-on-exec (a socket from whatever
            // started it) would be network the sandbox never sees. Marked,
            // not closed: std's own pipe must live until the exec. Best
            // effort: kernels before 5.11 lack the flag.
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
            Ok(())
        });
    }
    // After setsid, so the sandbox's namespaces hold the whole session.
    if let Some(sandbox) = sandbox {
        sandbox.apply(&mut cmd);
    }
    cmd.spawn()
}

/// Kills the command's whole process group, now or when dropped.
struct GroupGuard(Option<libc::pid_t>);

impl GroupGuard {
    fn kill(&self) {
        if let Some(pgid) = self.0 {
            // SAFETY: plain syscall; ESRCH (group already gone) is fine.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }

    /// Once the output is drained the group is gone; forget its id so a
    /// reused number is never signalled.
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One output pipe, read on its own task into a bounded buffer shared with
/// us, so that what was read survives the task being aborted.
struct Captured {
    buffer: Arc<Mutex<Capped>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

fn capture(pipe: Option<impl AsyncRead + Unpin + Send + 'static>, cap: usize) -> Captured {
    let buffer = Arc::new(Mutex::new(Capped::new(cap)));
    let task = pipe.map(|mut pipe| {
        let buffer = buffer.clone();
        tokio::spawn(async move {
            let mut chunk = vec![0u8; 8192];
            while let Ok(n @ 1..) = pipe.read(&mut chunk).await {
                lock(&buffer).push(&chunk[..n]);
            }
        })
    });
    Captured { buffer, task }
}

/// Keeps the first and last `cap / 2` bytes of a stream and counts the rest.
struct Capped {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    cut: u64,
}

impl Capped {
    fn new(cap: usize) -> Self {
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap: cap / 2,
            tail_cap: cap - cap / 2,
            cut: 0,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = self.head_cap - self.head.len();
        let (head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(head);
        self.tail.extend(rest);
        if self.tail.len() > self.tail_cap {
            let excess = self.tail.len() - self.tail_cap;
            self.tail.drain(..excess);
            self.cut += excess as u64;
        }
    }

    fn render(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        let text = if self.cut == 0 {
            format!("{head}{tail}")
        } else {
            format!("{head}\n[... {} bytes cut ...]\n{tail}", self.cut)
        };
        text.trim_end_matches('\n').to_string()
    }
}

fn report(
    ending: &Ending,
    elapsed: Duration,
    timeout: Duration,
    stdout: &Mutex<Capped>,
    stderr: &Mutex<Capped>,
) -> ToolOutput {
    let took = format!("{:.1}s", elapsed.as_secs_f64());
    let (success, mut text) = match ending {
        Ending::Exited(status) => match status.code() {
            Some(code) => (code == 0, format!("exit code {code} ({took})")),
            None => {
                use std::os::unix::process::ExitStatusExt;
                let signal = status.signal().unwrap_or(0);
                (false, format!("killed by signal {signal} ({took})"))
            }
        },
        Ending::TimedOut => (
            false,
            format!(
                "timed out after {}s; the command and everything it started were killed",
                timeout.as_secs()
            ),
        ),
        Ending::Interrupted => (
            false,
            format!("interrupted after {took}; the command and everything it started were killed"),
        ),
    };
    let stdout = lock(stdout).render();
    let stderr = lock(stderr).render();
    for (label, body) in [("stdout", &stdout), ("stderr", &stderr)] {
        if !body.is_empty() {
            text.push_str(&format!("\n[{label}]\n{body}"));
        }
    }
    if stdout.is_empty() && stderr.is_empty() {
        text.push_str("\n(no output)");
    }
    ToolOutput {
        success,
        output: text,
        suggest_escalation: false,
        diff: None,
        refused: false,
        images: Vec::new(),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A reader task that panicked leaves the buffer usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A sandboxed command failed: when its output looks like the sandbox
/// refused something and someone is at the keyboard (the TUI), asks once
/// whether to run it outside. None when not offered.
async fn offer_outside(
    command: &str,
    output: &str,
    ctx: &ToolContext,
) -> Option<Result<Granted, Refusal>> {
    let reason = sandbox::refusal::sandbox_refusal(output)?;
    if ctx.origin != Origin::Tui {
        return None;
    }
    Some(ctx.approver.check_escalation(command, &reason, ctx).await)
}

#[cfg(test)]
mod tests;
// The sandbox seen through this tool: it sits above `sandbox`, so its
// tests do too.
#[cfg(test)]
mod sandbox_tests;
