//! A minimal Chrome DevTools Protocol client: the web UI's browser tests
//! drive a real headless Chromium with it (tests/web_ui).
//!
//! [`Browser::shared`] launches one Chromium for the whole test binary
//! (`/usr/bin/chromium`, or `$EGIRL_CHROMIUM`), headless, with a fresh
//! profile and `--remote-debugging-port=0`, and speaks CDP to it over the
//! WebSocket named in the profile's `DevToolsActivePort`. Each test opens
//! its own [`Page`] in its own browser context (cookies are per host, not
//! per port: two tests' daemons on 127.0.0.1 must not share them), attached
//! with `flatten: true`.
//!
//! The connection lives on a thread of its own with its own runtime, so
//! pages of tests running on different runtimes share it. The browser is
//! killed (its whole process group) when a launched [`Browser`] drops, and
//! the shared one when the test binary exits.

use std::collections::HashMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

mod page;
pub use page::{Page, js_str};

/// Generous: a debug daemon and a browser on a busy 2-core machine.
pub const WAIT: Duration = Duration::from_secs(45);

type Reply = Result<Value, String>;

struct Command {
    method: String,
    params: Value,
    session: Option<String>,
    /// None: nobody waits for the answer.
    reply: Option<oneshot::Sender<Reply>>,
}

/// Per attached session: what its page logged (console, exceptions, the
/// browser's own log such as CSP violations and failed loads).
type Logs = Arc<Mutex<HashMap<String, Vec<String>>>>;

pub struct Browser {
    /// Chromium's pid, also its process group.
    pid: i32,
    profile: PathBuf,
    commands: mpsc::UnboundedSender<Command>,
    logs: Logs,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

static SHARED: tokio::sync::OnceCell<Browser> = tokio::sync::OnceCell::const_new();
static SHARED_PID: AtomicI32 = AtomicI32::new(0);
static SHARED_PROFILE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

extern "C" fn kill_shared() {
    let pid = SHARED_PID.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: signalling the process group of the browser we started.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    if let Some(profile) = SHARED_PROFILE.get() {
        let _ = std::fs::remove_dir_all(profile);
    }
}

impl Browser {
    /// The test binary's one browser, launched on first use.
    pub async fn shared() -> &'static Browser {
        SHARED
            .get_or_init(|| async {
                let browser = Browser::launch().await;
                SHARED_PID.store(browser.pid, Ordering::SeqCst);
                let _ = SHARED_PROFILE.set(browser.profile.clone());
                // SAFETY: registering a plain extern "C" function.
                unsafe { libc::atexit(kill_shared) };
                browser
            })
            .await
    }

    /// A browser of its own (killed on drop).
    pub async fn launch() -> Browser {
        let bin = std::env::var_os("EGIRL_CHROMIUM")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
        if !bin.exists() {
            panic!(
                "Chromium is missing at {}: run scripts/install-chromium.sh (make test does)",
                bin.display()
            );
        }
        let profile = std::env::temp_dir().join(format!(
            "egirl-cdp-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&profile).expect("a profile dir");
        let (ready_tx, ready_rx) = oneshot::channel();
        let thread_profile = profile.clone();
        // The browser is spawned by the connection's thread, which lives as
        // long as the browser is used: its parent-death signal must not
        // fire when a test's runtime thread ends.
        std::thread::spawn(move || connection_thread(bin, thread_profile, ready_tx));
        let (pid, commands, logs) = tokio::time::timeout(WAIT, ready_rx)
            .await
            .expect("Chromium's DevTools answered within 45 s")
            .expect("the DevTools thread")
            .unwrap_or_else(|e| panic!("{e}"));
        Browser {
            pid,
            profile,
            commands,
            logs,
        }
    }

    /// Sends a command (in `session` when given) and waits for its result.
    async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Reply {
        let (tx, rx) = oneshot::channel();
        let command = Command {
            method: method.into(),
            params,
            session: session.map(str::to_string),
            reply: Some(tx),
        };
        if self.commands.send(command).is_err() {
            return Err(format!("{method}: the browser's connection is gone"));
        }
        match tokio::time::timeout(WAIT, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(format!("{method}: the browser's connection is gone")),
            Err(_) => Err(format!("{method}: no answer within {WAIT:?}")),
        }
    }

    /// Sends a command nobody waits for (clean-up in `Drop`).
    fn send(&self, method: &str, params: Value) {
        let _ = self.commands.send(Command {
            method: method.into(),
            params,
            session: None,
            reply: None,
        });
    }

    /// A new tab in a fresh browser context (its own cookies).
    pub async fn page(&self) -> Page<'_> {
        let context = self
            .call(None, "Target.createBrowserContext", json!({}))
            .await
            .expect("a browser context")["browserContextId"]
            .as_str()
            .expect("browserContextId")
            .to_string();
        let target = self
            .call(
                None,
                "Target.createTarget",
                json!({"url": "about:blank", "browserContextId": context}),
            )
            .await
            .expect("a target")["targetId"]
            .clone();
        let session = self
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
            )
            .await
            .expect("attached")["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_string();
        lock(&self.logs).insert(session.clone(), Vec::new());
        let page = Page {
            browser: self,
            session,
            context,
        };
        for domain in ["Page", "Runtime", "Log"] {
            page.call(&format!("{domain}.enable"), json!({})).await;
        }
        page
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // SAFETY: signalling the process group of the browser we started.
        unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

type Ready = Result<(i32, mpsc::UnboundedSender<Command>, Logs), String>;

/// Spawns Chromium, connects, then serves commands until every sender
/// is gone.
fn connection_thread(bin: PathBuf, profile: PathBuf, ready: oneshot::Sender<Ready>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            let _ = ready.send(Err(format!("a runtime for DevTools: {e}")));
            return;
        }
    };
    runtime.block_on(async move {
        let (pid, url) = match start_chromium(&bin, &profile).await {
            Ok(started) => started,
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        };
        let socket = match tokio_tungstenite::connect_async(url.as_str()).await {
            Ok((socket, _)) => socket,
            Err(e) => {
                let _ = ready.send(Err(format!("connecting to Chromium at {url}: {e}")));
                return;
            }
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let logs = Logs::default();
        if ready.send(Ok((pid, tx, logs.clone()))).is_err() {
            return;
        }
        serve(socket, rx, logs).await;
    });
}

/// Launches the browser; its pid and its DevTools WebSocket URL.
async fn start_chromium(bin: &Path, profile: &Path) -> Result<(i32, String), String> {
    let stderr = std::fs::File::create(profile.join("chromium.log"))
        .map_err(|e| format!("{}: {e}", profile.display()))?;
    let mut command = std::process::Command::new(bin);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-breakpad",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .process_group(0);
    // SAFETY: prctl is async-signal-safe; the browser dies with this thread
    // (the test binary) even when nothing kills it.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("starting {}: {e}", bin.display()))?;
    let pid = child.id() as i32;
    let port_file = profile.join("DevToolsActivePort");
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Ok(text) = std::fs::read_to_string(&port_file)
            && let Some((port, path)) = text.split_once('\n')
            && !path.trim().is_empty()
        {
            return Ok((
                pid,
                format!("ws://127.0.0.1:{}{}", port.trim(), path.trim()),
            ));
        }
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(profile.join("chromium.log")).unwrap_or_default();
            return Err(format!(
                "Chromium exited ({status}) before listening:\n{log}"
            ));
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!("Chromium wrote no {}", port_file.display()));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Writes the commands, routes the answers to their callers and keeps the
/// pages' logs.
async fn serve(socket: Socket, mut commands: mpsc::UnboundedReceiver<Command>, logs: Logs) {
    let (mut write, mut read) = socket.split();
    let mut pending: HashMap<u64, oneshot::Sender<Reply>> = HashMap::new();
    let mut next_id = 1u64;
    loop {
        tokio::select! {
            command = commands.recv() => {
                let Some(command) = command else { return };
                let id = next_id;
                next_id += 1;
                let mut message = json!({"id": id, "method": command.method, "params": command.params});
                if let Some(session) = command.session {
                    message["sessionId"] = json!(session);
                }
                if let Some(reply) = command.reply {
                    pending.insert(id, reply);
                }
                if write.send(Message::Text(message.to_string())).await.is_err() {
                    return;
                }
            }
            message = read.next() => {
                let Some(Ok(Message::Text(text))) = message else {
                    if matches!(message, None | Some(Err(_))) {
                        return; // dropping `pending` fails every waiting call
                    }
                    continue;
                };
                let Ok(message) = serde_json::from_str::<Value>(&text) else { continue };
                if let Some(id) = message["id"].as_u64() {
                    if let Some(reply) = pending.remove(&id) {
                        let result = match message.get("error") {
                            Some(error) => Err(error.to_string()),
                            None => Ok(message["result"].clone()),
                        };
                        let _ = reply.send(result);
                    }
                } else if let (Some(session), Some(line)) =
                    (message["sessionId"].as_str(), log_line(&message))
                {
                    lock(&logs).entry(session.to_string()).or_default().push(line);
                }
            }
        }
    }
}

/// A page's console message, uncaught exception or browser log entry as
/// one line; None for other events.
fn log_line(event: &Value) -> Option<String> {
    let params = &event["params"];
    match event["method"].as_str()? {
        "Runtime.consoleAPICalled" => {
            let args: Vec<String> = params["args"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| match &a["value"] {
                    Value::String(s) => s.clone(),
                    Value::Null => a["description"].as_str().unwrap_or("").to_string(),
                    other => other.to_string(),
                })
                .collect();
            Some(format!(
                "console.{}: {}",
                params["type"].as_str()?,
                args.join(" ")
            ))
        }
        "Runtime.exceptionThrown" => {
            let details = &params["exceptionDetails"];
            let what = details["exception"]["description"]
                .as_str()
                .or(details["text"].as_str())
                .unwrap_or("?");
            Some(format!("uncaught: {what}"))
        }
        "Log.entryAdded" => {
            let entry = &params["entry"];
            Some(format!(
                "log.{} ({}): {} {}",
                entry["level"].as_str().unwrap_or("?"),
                entry["source"].as_str().unwrap_or("?"),
                entry["text"].as_str().unwrap_or(""),
                entry["url"].as_str().unwrap_or(""),
            ))
        }
        _ => None,
    }
}
