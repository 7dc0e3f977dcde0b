//! `delegate {agent, task}`: hands a task to an agent that speaks the Agent
//! Client Protocol (`[delegate.agents.NAME]`: Claude Code through its ACP
//! adapter, codex through codex-acp, gemini, opencode, goose, ...).
//!
//! Starting it is approved like exec. It runs in the exec sandbox with the
//! network on, as `delegate_claude_code` does (`delegate_claude_code::
//! confine`): its own state dir as HOME, and of egirl's environment only
//! the variables its entry names. egirl is its ACP client: `initialize`
//! (file reads and writes offered, no terminal), `session/new` in the
//! workspace, `session/prompt` with the task. Its updates are shown under
//! the call; its permission requests and file requests are answered by
//! [`serve`]; the model gets its text (the end of it, bounded). An
//! interrupt or the timeout sends `session/cancel`, then kills its whole
//! process group: nothing it started outlives the call.

mod messages;
mod serve;
mod updates;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, InitializeResponse, NewSessionRequest, NewSessionResponse,
    PromptRequest, StopReason, TextContent,
};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

use super::delegate_claude_code::{GroupGuard, confine};
use crate::chat::ToolSpec;
use crate::config::DelegateAgent;
use crate::jsonrpc::{Connection, Incoming, Started};
use crate::tools::{ToolContext, ToolOutput, arg_str, paths};
use messages::{PROTOCOL_VERSION, Stop, answer_of, initialize_params, stop_of};
use updates::Transcript;

/// How long a cancelled agent has to end its turn before it is killed.
const CANCEL_GRACE: Duration = Duration::from_secs(3);

/// Bytes of the agent's stderr kept to explain a failure.
const STDERR_KEPT: u64 = 4096;

/// Variables every agent keeps from egirl's environment (HOME is its
/// state dir); others only when its entry names them.
const ENV_KEPT: [&str; 5] = ["PATH", "USER", "LANG", "LC_ALL", "TERM"];

/// How the agent's frames are read: a line past this ends the connection.
const FRAMING: crate::jsonrpc::Options = crate::jsonrpc::Options {
    max_line: 8 * 1024 * 1024,
    gone: "the agent closed its connection",
};

/// Where each agent keeps its state (its HOME), by name.
const STATE_ROOT: &str = "~/.cache/egirl/delegate";

pub fn spec() -> ToolSpec {
    spec_with(&[])
}

/// The spec under `config`: the configured agents as the values `agent`
/// takes, each with its description.
pub fn spec_for(config: &crate::config::Config) -> ToolSpec {
    let agents: Vec<(&str, &str)> = config
        .delegate
        .agents
        .iter()
        .map(|(name, a)| (name.as_str(), a.description.as_str()))
        .collect();
    spec_with(&agents)
}

fn spec_with(agents: &[(&str, &str)]) -> ToolSpec {
    let names: Vec<&str> = agents.iter().map(|(n, _)| *n).collect();
    let described: Vec<String> = agents
        .iter()
        .map(|(n, d)| match d.trim() {
            "" => n.to_string(),
            d => format!("{n}: {d}"),
        })
        .collect();
    ToolSpec {
        name: "delegate",
        description: "Hand a task to another coding agent; it works in the workspace and returns its answer.",
        parameters: json!({
            "type": "object",
            "properties": {
                "agent": {"type": "string", "enum": names, "description": described.join("; ")},
                "task": {"type": "string"}
            },
            "required": ["agent", "task"]
        }),
    }
}

/// Offered when at least one agent is configured.
pub fn offered(config: &crate::config::Config) -> bool {
    !config.delegate.agents.is_empty()
}

pub async fn run(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let (name, agent, task) = match agent_and_task(args, ctx) {
        Ok(found) => found,
        Err(why) => return ToolOutput::fail(why),
    };
    let asked = format!("{name}: {task}");
    if let Err(why) = ctx
        .approver
        .check_delegation_as("delegate", &asked, &ctx.workspace, ctx)
        .await
    {
        return ToolOutput::refused(why);
    }
    let state = match confine::private_dir(
        &crate::config::expand_home(&format!("{STATE_ROOT}/{name}")),
        &format!("{name}'s state dir"),
    ) {
        Ok(s) => s,
        Err(e) => return ToolOutput::fail(e),
    };
    let sandbox = match confine::prepare(ctx, &ctx.workspace, &state) {
        Ok(s) => s,
        Err(e) => return ToolOutput::fail(e),
    };
    let program = match agent.executable() {
        Ok(p) => p,
        Err(why) => return ToolOutput::fail(format!("{name} cannot start: {why}")),
    };
    let mut cmd = command(&program, &agent, &ctx.workspace, &state);
    if let Some(sandbox) = &sandbox {
        sandbox.apply(&mut cmd);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return ToolOutput::fail(format!("could not start {name} ({}): {e}", agent.command));
        }
    };
    let mut group = GroupGuard(child.id().map(|id| id as libc::pid_t));
    let stderr = keep_stderr(child.stderr.take());
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return ToolOutput::fail(format!("{name}'s stdio could not be opened"));
    };
    let Started {
        connection: conn,
        incoming,
        ..
    } = Connection::start(stdout, stdin, FRAMING);
    let server = serve::Server {
        ctx: ctx.clone(),
        agent: name.to_string(),
        permissions: agent.permissions,
        task: task.to_string(),
        dir: paths::display(&ctx.workspace, &ctx.workspace),
        diffs: Default::default(),
        conn: conn.clone(),
        submission: crate::bus::current_submission(),
        answering: Default::default(),
    };
    let ended = drive(&server, incoming, &agent, task).await;
    // Whatever it started goes with it, the turn over or not.
    server.abort();
    group.kill();
    let _ = child.wait().await;
    // Reaped: its number may be reused, never signal it again.
    group.0 = None;
    drop(sandbox);
    let diffs = server.diffs.lock().map(|d| d.clone()).unwrap_or_default();
    // A process that left the group may hold the pipe: not waited for.
    let stderr = tokio::time::timeout(Duration::from_secs(1), stderr).await;
    let out = outcome(
        name,
        ended,
        stderr.ok().and_then(Result::ok).unwrap_or_default(),
    );
    match diffs.into_iter().reduce(join_diffs) {
        Some(diff) => out.with_diff(diff),
        None => out,
    }
}

/// The agent's entry and the task, or why the call cannot run.
fn agent_and_task<'a>(
    args: &'a Value,
    ctx: &'a ToolContext,
) -> Result<(&'a str, DelegateAgent, &'a str), String> {
    let name = arg_str(args, "agent").map_err(|e| e.output)?.trim();
    let task = arg_str(args, "task").map_err(|e| e.output)?.trim();
    if task.is_empty() {
        return Err("`task` is empty".into());
    }
    let agents = &ctx.config.delegate.agents;
    let Some(agent) = agents.get(name) else {
        let known: Vec<&str> = agents.keys().map(String::as_str).collect();
        return Err(format!(
            "no agent `{name}` in [delegate.agents]; configured: {}",
            known.join(", ")
        ));
    };
    Ok((name, agent.clone(), task))
}

/// How the session ended: its stop reason and text, or why it failed.
struct Ended {
    transcript: Transcript,
    result: Result<Stop, String>,
}

/// The session from `initialize` to the prompt's answer, the agent's
/// requests served meanwhile; an interrupt or the timeout cancels it.
async fn drive(
    server: &serve::Server,
    mut incoming: tokio::sync::mpsc::Receiver<Incoming>,
    agent: &DelegateAgent,
    task: &str,
) -> Ended {
    let ctx = &server.ctx;
    let conn = &server.conn;
    let mut transcript = Transcript::default();
    let session_id = std::sync::Mutex::new(None::<String>);
    let session = async {
        let init = conn.request("initialize", initialize_params()).await?;
        let init: InitializeResponse = answer_of("initialize", init)?;
        if init.protocol_version != PROTOCOL_VERSION {
            return Err(format!(
                "it speaks ACP version {}, egirl speaks {PROTOCOL_VERSION}",
                init.protocol_version
            ));
        }
        let new = NewSessionRequest::new(ctx.workspace.clone());
        let new = conn.request("session/new", new).await?;
        let new: NewSessionResponse = answer_of("session/new", new)?;
        if let Ok(mut s) = session_id.lock() {
            *s = Some(new.session_id.to_string());
        }
        let prompt = vec![ContentBlock::Text(TextContent::new(task))];
        let prompt = PromptRequest::new(new.session_id, prompt);
        let answer = conn.request("session/prompt", prompt).await?;
        Ok(stop_of(&answer))
    };
    tokio::pin!(session);
    let timeout = tokio::time::sleep(agent.timeout.0);
    tokio::pin!(timeout);
    let mut stopped: Option<String> = None;
    // Once cancelled, the time it has to end its turn (updates it keeps
    // sending do not extend it).
    let grace = tokio::time::sleep(Duration::MAX);
    tokio::pin!(grace);
    let result = loop {
        tokio::select! {
            result = &mut session => break result,
            Some(message) = incoming.recv() => handle(server, &mut transcript, message),
            () = &mut timeout, if stopped.is_none() => {
                stopped = Some(format!(
                    "ran past its timeout ({}s) and was stopped",
                    agent.timeout.0.as_secs()
                ));
                cancel(conn, &session_id);
                grace.as_mut().reset(tokio::time::Instant::now() + CANCEL_GRACE);
            }
            () = ctx.cancel.cancelled(), if stopped.is_none() => {
                stopped = Some("interrupted: it was stopped".to_string());
                cancel(conn, &session_id);
                grace.as_mut().reset(tokio::time::Instant::now() + CANCEL_GRACE);
            }
            // Cancelled: a moment to end its turn, then it is killed.
            () = &mut grace, if stopped.is_some() => break Err(String::new()),
        }
    };
    // The reader queued every update sent before the answer: read them.
    while let Ok(message) = incoming.try_recv() {
        handle(server, &mut transcript, message);
    }
    for line in transcript.flush() {
        ctx.progress(line);
    }
    let result = match stopped {
        Some(why) => Err(why),
        None => result,
    };
    Ended { transcript, result }
}

/// An update is shown under the call; a request is answered aside; a
/// line that is not JSON-RPC (a stray log line) is skipped, as ACP
/// clients do.
fn handle(server: &serve::Server, transcript: &mut Transcript, message: Incoming) {
    match message {
        Incoming::Notification { method, params } if method == "session/update" => {
            let Some(update) = updates::update_of(params) else {
                return;
            };
            for line in transcript.read(update) {
                server.ctx.progress(line);
            }
        }
        Incoming::Request { id, method, params } => server.spawn(id, method, params),
        Incoming::Notification { method, .. } => {
            tracing::debug!("delegate: ignoring the notification `{method}`");
        }
        Incoming::Invalid { why, .. } => tracing::debug!("delegate: skipped a line: {why}"),
    }
}

fn cancel(conn: &Connection, session_id: &std::sync::Mutex<Option<String>>) {
    if let Some(id) = session_id.lock().ok().and_then(|s| s.clone()) {
        conn.notify("session/cancel", CancelNotification::new(id));
    }
}

/// What the model reads: the agent's text with how it ended.
fn outcome(name: &str, ended: Ended, stderr: String) -> ToolOutput {
    let text = ended.transcript.text.trim();
    let cut = if ended.transcript.cut {
        "(earlier text cut)\n"
    } else {
        ""
    };
    match ended.result {
        Ok(Stop::Known(StopReason::EndTurn)) => {
            ToolOutput::ok(format!("{name} finished:\n{cut}{text}"))
        }
        Ok(stop) => ToolOutput::fail(format!("{name} stopped ({}):\n{cut}{text}", stop.name())),
        Err(why) => {
            let said = match stderr.trim() {
                "" => String::new(),
                s => format!("\nits stderr: {s}"),
            };
            let so_far = match text {
                "" => String::new(),
                t => format!("\nwhat it said:\n{cut}{t}"),
            };
            ToolOutput::fail(format!("{name} failed: {why}{said}{so_far}"))
        }
    }
}

fn join_diffs(
    mut a: crate::protocol::FileDiff,
    b: crate::protocol::FileDiff,
) -> crate::protocol::FileDiff {
    a.path = format!("{}, {}", a.path, b.path);
    a.text = format!("{}\n{}", a.text, b.text);
    a.added += b.added;
    a.removed += b.removed;
    a
}

/// The agent in its own process group, in `dir`, with HOME its state dir
/// and only the environment its entry passes.
fn command(
    program: &Path,
    agent: &DelegateAgent,
    dir: &Path,
    state: &Path,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(&agent.args)
        .current_dir(dir)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for name in ENV_KEPT
        .iter()
        .copied()
        .chain(agent.env.iter().map(String::as_str))
    {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.env("HOME", state);
    cmd
}

/// The first [`STDERR_KEPT`] bytes of its stderr, read aside so a full
/// pipe never blocks it.
fn keep_stderr(stderr: Option<tokio::process::ChildStderr>) -> tokio::task::JoinHandle<String> {
    tokio::spawn(async move {
        let mut kept = Vec::new();
        if let Some(mut err) = stderr {
            let _ = (&mut err).take(STDERR_KEPT).read_to_end(&mut kept).await;
            // The rest is drained, not kept.
            let _ = tokio::io::copy(&mut err, &mut tokio::io::sink()).await;
        }
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// What `egirl doctor` says of each configured agent: (ok, detail).
pub fn doctor_lines(config: &crate::config::Config) -> Vec<(Option<bool>, String)> {
    let sandbox = confine::describe(&config.tools.exec);
    config
        .delegate
        .agents
        .iter()
        .map(|(name, agent)| match agent.executable() {
            Ok(path) => (
                Some(true),
                format!(
                    "{name}: {} (permissions: {}; sandbox: {sandbox})",
                    path.display(),
                    match agent.permissions {
                        crate::config::ClaudePermissions::Ask => "ask",
                        crate::config::ClaudePermissions::LocalModel => "local-model",
                    }
                ),
            ),
            Err(why) => (Some(false), format!("{name}: cannot start: {why}")),
        })
        .collect()
}
