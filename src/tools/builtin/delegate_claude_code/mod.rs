//! `delegate_claude_code {task, dir?}`: hands a coding task to Claude Code
//! (`claude -p --output-format stream-json --verbose`) in `dir` (inside the
//! workspace or `[tools] allowed_paths`). Starting it is approved like
//! exec; Claude Code's own permission requests come back to egirl
//! ([`permission`]); its text and tool uses are shown under the call as
//! they happen; the model gets the final result, cost and session id, and
//! the cost goes to the stats under `claude-code`. An interrupt or the
//! timeout kills its whole process group. It gets only the environment it
//! needs, not egirl's, and runs in the exec sandbox ([`confine`]).

pub(crate) mod confine;
pub(crate) mod local_model;
mod permission;
mod stream;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStderr, ChildStdout};

use crate::chat::ToolSpec;
use crate::protocol::{EventKind, TokenUsage};
use crate::tools::{ToolContext, ToolOutput, arg_str, paths};
use stream::{Line, Outcome};

/// The provider name its usage is counted under.
pub const PROVIDER: &str = "claude-code";

/// How long Claude Code may take to exit after its result line.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Bytes of Claude Code's stderr kept to explain a failure.
const STDERR_KEPT: usize = 4096;

/// Variables Claude Code keeps from egirl's environment (plus its key and
/// base URL); everything else, egirl's other secrets included, is left out.
pub(crate) const ENV_KEPT: [&str; 8] = [
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "XDG_CONFIG_HOME",
];

/// Claude Code's long-lived login token, passed on when set.
const OAUTH_VAR: &str = "CLAUDE_CODE_OAUTH_TOKEN";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "delegate_claude_code",
        description: "Hand a coding task to Claude Code, working in dir.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {"task": {"type": "string"}, "dir": {"type": "string"}},
            "required": ["task"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let task = match arg_str(args, "task") {
        Ok(t) if !t.trim().is_empty() => t.trim(),
        Ok(_) => return ToolOutput::fail("`task` is empty"),
        Err(e) => return e,
    };
    let (binary, dir) = match binary_and_dir(args, ctx) {
        Ok(found) => found,
        Err(why) => return ToolOutput::fail(why),
    };
    // Its reported cost counts against the remote spend caps; what it
    // will cost cannot be known before, so only a spent cap stops it.
    let now = crate::usage::now();
    if let Some(why) = crate::usage::budget::Budget::of(&ctx.config.remote, &ctx.workspace, now)
        .and_then(|budget| budget.refusal(0.0))
    {
        return ToolOutput::refused(format!("Claude Code was not started: {why}"));
    }
    if let Err(why) = ctx.approver.check_delegation(task, &dir, ctx).await {
        return ToolOutput::refused(why);
    }
    let state = match confine::state_dir() {
        Ok(s) => s,
        Err(e) => return ToolOutput::fail(e),
    };
    let sandbox = match confine::prepare(ctx, &dir, &state) {
        Ok(s) => s,
        Err(e) => return ToolOutput::fail(e),
    };
    let shown_dir = paths::display(&ctx.workspace, &dir);
    let server = match permission::start(ctx.clone(), task, &shown_dir).await {
        Ok(s) => s,
        Err(e) => return ToolOutput::fail(e),
    };
    let mut cmd = command(&binary, &dir, &state, &server, ctx);
    if let Some(sandbox) = &sandbox {
        sandbox.apply(&mut cmd);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return ToolOutput::fail(format!("could not start {}: {e}", binary.display()));
        }
    };
    let mut group = GroupGuard(child.id().map(|id| id as libc::pid_t));
    // The task goes in on stdin: never mistaken for an option.
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(task.as_bytes()).await;
    }
    let stderr_task = keep_stderr(child.stderr.take());
    let Some(stdout) = child.stdout.take() else {
        return ToolOutput::fail("Claude Code's output could not be read");
    };
    let started = Instant::now();
    let (streamed, ended) = read_stream(stdout, ctx).await;
    // After its result it still saves its session (for --resume): a moment
    // to exit by itself, then whatever it left running goes with it.
    if ended.is_none() {
        let _ = tokio::time::timeout(EXIT_GRACE, child.wait()).await;
    }
    group.kill();
    let status = child.wait().await.ok();
    // Reaped: its number may be reused, never signal it again.
    group.0 = None;
    drop(server);
    drop(sandbox);
    if let Some(why) = ended {
        return ToolOutput::fail(why);
    }
    let Some(outcome) = streamed.outcome else {
        let stderr = stderr_task.await.unwrap_or_default();
        let code = status
            .and_then(|s| s.code())
            .map_or("a signal".to_string(), |c| format!("exit code {c}"));
        return ToolOutput::fail(format!(
            "Claude Code ended ({code}) without a result: {}",
            stderr.trim()
        ));
    };
    emit_usage(ctx, streamed.model, &outcome, started);
    result_output(&outcome)
}

/// The Claude Code binary and the directory it works in (`dir`, default
/// the workspace), which must be a directory the model may write.
fn binary_and_dir(
    args: &serde_json::Value,
    ctx: &ToolContext,
) -> Result<(PathBuf, PathBuf), String> {
    let requested = args.get("dir").and_then(|d| d.as_str()).unwrap_or(".");
    let binary = ctx
        .config
        .delegate
        .claude_code
        .executable()
        .map_err(|why| format!("Claude Code is unavailable: {why}"))?;
    match ctx.resolve(requested, paths::Access::Write)? {
        dir if dir.is_dir() => Ok((binary, dir)),
        dir => Err(format!("{} is not a directory", dir.display())),
    }
}

/// The first [`STDERR_KEPT`] bytes of Claude Code's stderr, read aside
/// so a full pipe never blocks it.
fn keep_stderr(mut stderr: Option<ChildStderr>) -> tokio::task::JoinHandle<String> {
    tokio::spawn(async move {
        let mut kept = Vec::new();
        if let Some(err) = stderr.as_mut() {
            let _ = err.take(STDERR_KEPT as u64).read_to_end(&mut kept).await;
        }
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// What Claude Code's output said: its model and, once it came, its
/// result line.
#[derive(Default)]
struct Streamed {
    model: String,
    outcome: Option<Outcome>,
}

/// Reads Claude Code's output up to its result line, showing its
/// progress under the call; the second value says why it was stopped
/// first (the timeout or an interrupt).
async fn read_stream(stdout: ChildStdout, ctx: &ToolContext) -> (Streamed, Option<String>) {
    let mut streamed = Streamed::default();
    let mut lines = BufReader::new(stdout).lines();
    // Up to the result line: a process it left behind may hold the pipe
    // open long after.
    let read = async {
        while streamed.outcome.is_none()
            && let Ok(Some(line)) = lines.next_line().await
        {
            for item in stream::parse(&line) {
                match item {
                    Line::Init { model: m, .. } => streamed.model = m,
                    Line::Progress(text) => ctx.progress(text),
                    Line::Done(o) => streamed.outcome = Some(o),
                }
            }
        }
    };
    let timeout = ctx.config.delegate.claude_code.timeout.0;
    let ended = tokio::select! {
        () = read => None,
        _ = tokio::time::sleep(timeout) => Some(format!(
            "Claude Code ran past [delegate.claude_code] timeout ({}s) and was stopped",
            timeout.as_secs()
        )),
        _ = ctx.cancel.cancelled() => Some("interrupted: Claude Code was stopped".to_string()),
    };
    (streamed, ended)
}

/// Claude Code's tokens and cost, counted in the stats under [`PROVIDER`].
fn emit_usage(ctx: &ToolContext, model: String, outcome: &Outcome, started: Instant) {
    ctx.bus.emit(
        &ctx.session,
        &ctx.origin,
        EventKind::Usage(TokenUsage {
            provider: PROVIDER.into(),
            model: if model.is_empty() {
                "claude".into()
            } else {
                model
            },
            input_tokens: outcome.input_tokens,
            output_tokens: outcome.output_tokens,
            cached_tokens: outcome.cached_tokens,
            cost_usd: outcome.cost_usd,
            tokens_per_sec: None,
            latency_ms: Some(started.elapsed().as_millis() as u64),
            endpoint: None,
            context: None,
        }),
    );
}

/// What the model reads: the result with its turns, session and cost.
fn result_output(outcome: &Outcome) -> ToolOutput {
    let text = format!(
        "Claude Code {} in {} turns (session {}, cost ${:.4}):\n{}",
        if outcome.is_error {
            "failed"
        } else {
            "finished"
        },
        outcome.num_turns,
        outcome.session_id,
        outcome.cost_usd,
        outcome.result
    );
    if outcome.is_error {
        ToolOutput::fail(text)
    } else {
        ToolOutput::ok(text)
    }
}

/// `claude -p` in its own process group, with its permission requests
/// sent to `server` and only the environment it needs.
fn command(
    binary: &Path,
    dir: &Path,
    state: &Path,
    server: &permission::PermissionServer,
    ctx: &ToolContext,
) -> tokio::process::Command {
    let cc = &ctx.config.delegate.claude_code;
    let mut cmd = tokio::process::Command::new(binary);
    cmd.args(["-p", "--output-format", "stream-json", "--verbose"])
        .args(["--permission-mode", "default", "--strict-mcp-config"])
        .arg("--mcp-config")
        .arg(server.mcp_config())
        .arg("--permission-prompt-tool")
        .arg(format!("mcp__{}__{}", permission::SERVER, permission::TOOL))
        // Only egirl's flags configure it, never a settings file the model
        // could have written (see `confine`).
        .args(["--setting-sources", ""])
        .args(["--settings", confine::DENY_SETTINGS]);
    // Last: the option takes every argument after it (the task goes in on stdin).
    if !cc.allowed_tools.is_empty() {
        cmd.arg("--allowedTools").args(&cc.allowed_tools);
    }
    cmd.current_dir(dir)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for name in ENV_KEPT {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    if let Ok(key) = std::env::var(crate::providers::anthropic::KEY_VAR) {
        cmd.env(crate::providers::anthropic::KEY_VAR, key);
    }
    // A subscription login (`claude setup-token`): its state dir is not
    // ~/.claude, so the login kept there is not seen.
    if let Ok(token) = std::env::var(OAUTH_VAR) {
        cmd.env(OAUTH_VAR, token);
    }
    let base_url = std::env::var("ANTHROPIC_BASE_URL").ok().or_else(|| {
        ctx.config
            .remote
            .anthropic
            .as_ref()
            .map(|a| a.base_url.clone())
    });
    if let Some(url) = base_url {
        cmd.env("ANTHROPIC_BASE_URL", url);
    }
    // No telemetry, error reports or update checks from a delegated run.
    cmd.env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    // Its state in egirl's dir, not the user's ~/.claude (see `confine`).
    cmd.env("CLAUDE_CONFIG_DIR", state);
    cmd
}

/// Kills Claude Code's whole process group (its shells, its MCP servers),
/// now or when dropped.
pub(crate) struct GroupGuard(pub(crate) Option<libc::pid_t>);

impl GroupGuard {
    pub(crate) fn kill(&self) {
        if let Some(pgid) = self.0 {
            // SAFETY: plain syscall; ESRCH (group already gone) is fine.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What `egirl doctor` says of delegation: (ok, detail).
pub fn doctor_line(config: &crate::config::Config) -> (Option<bool>, String) {
    let cc = &config.delegate.claude_code;
    match cc.executable() {
        Ok(path) => (
            Some(true),
            format!(
                "{} (permissions: {}; sandbox: {})",
                path.display(),
                match cc.permissions {
                    crate::config::ClaudePermissions::Ask => "ask",
                    crate::config::ClaudePermissions::LocalModel => "local-model",
                },
                confine::describe(&config.tools.exec)
            ),
        ),
        Err(why) => (None, format!("not offered: {why}")),
    }
}
