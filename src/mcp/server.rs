//! One MCP server's life: connect (a child process over stdio, or
//! streamable HTTP), list its tools, wait for it to go away, and start it
//! again after a backoff, until egirl stops. Each failure is one notice;
//! the state it leaves (`failed`, the last error) is what `/mcp` shows.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::Tool;
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

use super::naming::full_name;
use super::{McpTool, State};
use crate::config::McpServerConfig;
use crate::config::mcp::expand_vars;

/// Backoff between restarts: 1 s doubling to a minute.
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(60);
/// Lines of a stdio server's stderr kept for its last error.
const STDERR_LINES: usize = 5;

/// A server as the manager holds it.
pub struct Server {
    pub name: String,
    pub config: McpServerConfig,
    pub inner: Mutex<Inner>,
    /// Its `env` and `headers` are taken as written: a session's client
    /// brought it, and `${NAME}` must not read egirl's own environment.
    literal: bool,
}

#[derive(Default)]
pub struct Inner {
    pub state: State,
    pub tools: Vec<McpTool>,
    pub last_error: Option<String>,
    pub peer: Option<Peer<RoleClient>>,
    /// The stdio child's process group (it leads it), killed at exit.
    pub group: Option<i32>,
    /// The last lines the stdio child wrote to stderr.
    stderr: Arc<Mutex<Vec<String>>>,
}

/// How the supervisor tells the manager something changed.
pub trait Reporter: Send + Sync {
    fn changed(&self);
    fn notice(&self, message: String);
}

/// What start-up needs from egirl for a stdio child.
#[derive(Default)]
pub struct Launch {
    pub workspace: std::path::PathBuf,
    /// egirl's environment without its secrets (the exec baseline).
    pub base_env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
}

impl Server {
    pub fn new(name: &str, config: McpServerConfig) -> Self {
        Self {
            name: name.to_string(),
            config,
            inner: Mutex::new(Inner::default()),
            literal: false,
        }
    }

    /// A server a session's client brought (see `literal`).
    pub fn from_client(name: &str, config: McpServerConfig) -> Self {
        Self {
            literal: true,
            ..Self::new(name, config)
        }
    }

    /// A configured `env` or `headers` value as the server gets it.
    fn value(&self, value: &str) -> Result<String, String> {
        match self.literal {
            true => Ok(value.to_string()),
            false => expand_vars(value),
        }
    }

    /// Runs until `stop`: connect, serve, restart with backoff.
    pub async fn supervise(
        self: Arc<Self>,
        launch: Arc<Launch>,
        report: Arc<dyn Reporter>,
        stop: CancellationToken,
    ) {
        let mut backoff = BACKOFF_FIRST;
        let mut notified = false;
        loop {
            self.set(|i| i.state = State::Starting);
            report.changed();
            let timeout = self.config.startup_timeout.0;
            let started = tokio::select! {
                _ = stop.cancelled() => return,
                r = tokio::time::timeout(timeout, self.connect(&launch)) => r,
            };
            let why = match started {
                Ok(Ok(service)) => {
                    backoff = BACKOFF_FIRST;
                    notified = false;
                    report.changed();
                    let token = service.cancellation_token();
                    let waiting = service.waiting();
                    tokio::pin!(waiting);
                    tokio::select! {
                        _ = stop.cancelled() => {
                            token.cancel();
                            let _ = waiting.await;
                            return;
                        }
                        _ = &mut waiting => {}
                    }
                    format!("exited{}", self.stderr_tail())
                }
                Ok(Err(e)) => format!("{e}{}", self.stderr_tail()),
                Err(_) => format!(
                    "did not start within {}s{}",
                    timeout.as_secs(),
                    self.stderr_tail()
                ),
            };
            self.kill_group();
            self.set(|i| {
                i.state = State::Failed;
                i.peer = None;
                i.last_error = Some(why.clone());
            });
            report.changed();
            if !notified {
                notified = true;
                report.notice(format!(
                    "MCP server `{}` {why}; retrying in the background",
                    self.name
                ));
            }
            tracing::warn!(server = %self.name, "MCP server {why}; retry in {}s", backoff.as_secs());
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
    }

    /// Connects and lists the tools; the server is `ready` when this returns.
    async fn connect(&self, launch: &Launch) -> Result<RunningService<RoleClient, ()>, String> {
        let service = match (&self.config.command, &self.config.url) {
            (Some(command), _) => {
                let transport = self.spawn(command, launch).await?;
                ().serve(transport)
                    .await
                    .map_err(|e| format!("failed to start: {e}"))?
            }
            (None, Some(url)) => {
                let mut headers = HashMap::new();
                for (name, value) in &self.config.headers {
                    let value = self
                        .value(value)
                        .map_err(|e| format!("header {name}: {e}"))?;
                    let name = reqwest::header::HeaderName::try_from(name.as_str())
                        .map_err(|e| format!("header {name}: {e}"))?;
                    let value = reqwest::header::HeaderValue::try_from(value)
                        .map_err(|e| format!("header {name}: {e}"))?;
                    headers.insert(name, value);
                }
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(headers);
                let transport = StreamableHttpClientTransport::from_config(config);
                ().serve(transport)
                    .await
                    .map_err(|e| format!("failed to connect: {e}"))?
            }
            (None, None) => return Err("has neither `command` nor `url`".into()),
        };
        let listed = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("could not list its tools: {e}"))?;
        let tools = self.offered(listed);
        let peer = service.peer().clone();
        self.set(|i| {
            i.state = State::Ready;
            i.tools = tools;
            i.peer = Some(peer);
            i.last_error = None;
        });
        Ok(service)
    }

    /// The child in a process group of its own, with egirl's environment
    /// minus its secrets plus the server's `env`; its stderr goes to the log
    /// (never onto the TUI) and its last lines into the last error.
    async fn spawn(&self, command: &str, launch: &Launch) -> Result<TokioChildProcess, String> {
        let mut cmd = tokio::process::Command::new(command);
        cmd.args(&self.config.args);
        cmd.env_clear();
        cmd.envs(launch.base_env.iter().map(|(k, v)| (k, v)));
        for (name, value) in &self.config.env {
            cmd.env(
                name,
                self.value(value).map_err(|e| format!("env {name}: {e}"))?,
            );
        }
        let cwd = match &self.config.cwd {
            Some(dir) => crate::config::expand_home(dir),
            None => launch.workspace.clone(),
        };
        cmd.current_dir(&cwd);
        cmd.process_group(0);
        // SAFETY: one prctl between fork and exec. The server dies with
        // egirl, SIGKILL included (nothing else would stop it then).
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        // Off the async workers, which draw the TUI's first frame meanwhile,
        // on a thread that lives as long as egirl: the death signal fires
        // when the forking *thread* ends (a blocking-pool thread would end
        // after ten idle seconds, and the server with it).
        let spawned = super::spawner::on_lasting_thread(move || {
            TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
        })
        .await
        .map_err(|e| format!("could not start `{command}`: {e}"))?;
        let (transport, stderr) =
            spawned.map_err(|e| format!("could not start `{command}`: {e}"))?;
        let group = transport.id().map(|pid| pid as i32);
        let lines = Arc::new(Mutex::new(Vec::new()));
        self.set(|i| {
            i.group = group;
            i.stderr = lines.clone();
        });
        if let Some(stderr) = stderr {
            let name = self.name.clone();
            tokio::spawn(async move {
                let mut reader = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    tracing::debug!(server = %name, "stderr: {line}");
                    let mut kept = lock(&lines);
                    kept.push(line);
                    if kept.len() > STDERR_LINES {
                        kept.remove(0);
                    }
                }
            });
        }
        Ok(transport)
    }

    /// The server's tools egirl offers, sorted (the prompt's tool list must
    /// be byte-identical from request to request).
    fn offered(&self, listed: Vec<Tool>) -> Vec<McpTool> {
        let mut tools: Vec<McpTool> = listed
            .into_iter()
            .filter(|t| self.config.tools.offers(&t.name))
            .map(|t| McpTool {
                full_name: full_name(&self.name, &t.name),
                server: self.name.clone(),
                name: t.name.to_string(),
                description: t.description.as_deref().unwrap_or("").trim().to_string(),
                schema: serde_json::Value::Object((*t.input_schema).clone()),
                read_only: t
                    .annotations
                    .as_ref()
                    .and_then(|a| a.read_only_hint)
                    .unwrap_or(false),
            })
            .collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        tools
    }

    /// Kills the stdio child's whole process group (whatever it started
    /// too): SIGTERM, then SIGKILL for what is left.
    pub fn kill_group(&self) {
        let Some(group) = self.set(|i| i.group.take()) else {
            return;
        };
        if group <= 1 {
            return;
        }
        // SAFETY: signals to a process group egirl created (the child leads it).
        unsafe {
            libc::kill(-group, libc::SIGTERM);
        }
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            // SAFETY: as above; ESRCH when the group is gone already.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        });
    }

    /// The group id to kill at exit without waiting (see `McpManager::shutdown`).
    pub fn group(&self) -> Option<i32> {
        lock(&self.inner).group
    }

    fn stderr_tail(&self) -> String {
        let lines = lock(&lock(&self.inner).stderr).clone();
        match lines.iter().rev().find(|l| !l.trim().is_empty()) {
            Some(line) => format!(" ({})", line.trim()),
            None => String::new(),
        }
    }

    pub fn set<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        f(&mut lock(&self.inner))
    }
}

pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
