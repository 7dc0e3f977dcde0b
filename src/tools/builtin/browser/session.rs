//! One session's browser: the process, its DevTools connection, its tabs,
//! and the event pump that holds every new target until its requests are
//! intercepted (`Fetch.enable`) and answers each paused request with the
//! guard's verdict.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::cdp::{Cdp, CdpEvent};
use super::process::{self, Process};
use super::proxy;
use super::requests::RequestGuard;
use crate::tools::ToolContext;

/// Target kinds whose requests are intercepted; a worker whose
/// interception cannot be enabled is never resumed.
const FETCHING: [&str; 5] = [
    "page",
    "iframe",
    "worker",
    "shared_worker",
    "service_worker",
];

/// An open tab: its target and the session attached to it.
#[derive(Clone)]
pub struct Tab {
    pub target: String,
    pub session: String,
}

#[derive(Default)]
struct Tabs {
    open: Vec<Tab>,
    current: Option<String>,
    /// Targets never made tabs: the one Chromium opened by itself.
    ignored: HashSet<String>,
    /// Sessions detached (a tab closed before its set-up finished).
    gone: HashSet<String>,
}

pub struct Browser {
    pub cdp: Cdp,
    process: Process,
    /// Stops the browser's proxy (`proxy`).
    proxy: tokio::task::AbortHandle,
    pub guard: Arc<RequestGuard>,
    tabs: Arc<Mutex<Tabs>>,
    dead: Arc<AtomicBool>,
    last_used: Mutex<Instant>,
}

impl Browser {
    /// Launches Chromium for the session of `ctx` and opens its first tab.
    pub async fn start(ctx: &ToolContext) -> Result<Browser, String> {
        let bin = ctx.config.tools.browser.chromium()?;
        let profile = process::profile_dir(ctx.bus.agent(), &ctx.session);
        let env = crate::tools::sandbox::env::command_env(&[], ctx.protected.env_files());
        let guard: Arc<RequestGuard> = Arc::default();
        let (proxy_port, proxy) = proxy::start(&guard).await?;
        let launched = process::launch(&bin, &profile, env, proxy_port);
        let (process, pipes) = launched.inspect_err(|_| proxy.abort())?;
        let (cdp, events) = Cdp::connect(pipes.to, pipes.from);
        let browser = Browser {
            cdp,
            process,
            proxy,
            guard,
            tabs: Arc::default(),
            dead: Arc::default(),
            last_used: Mutex::new(Instant::now()),
        };
        browser.pump(events);
        // The first answer says Chromium is up; none: why it is not.
        let downloads = json!({"behavior": "deny"});
        if let Err(why) = browser
            .cdp
            .call("Browser.setDownloadBehavior", downloads, None)
            .await
        {
            return Err(browser.process.exited().unwrap_or(why));
        }
        // The tab Chromium opened by itself is replaced by one opened once
        // its requests are guarded: known (and never made a tab) before
        // anything is attached.
        let initial = browser
            .cdp
            .call("Target.getTargets", json!({}), None)
            .await?;
        let initial: Vec<String> = initial["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|info| info["type"] == "page")
            .filter_map(|info| info["targetId"].as_str().map(str::to_string))
            .collect();
        if let Ok(mut tabs) = browser.tabs.lock() {
            tabs.ignored.extend(initial.iter().cloned());
        }
        browser
            .cdp
            .call(
                "Target.setAutoAttach",
                json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}),
                None,
            )
            .await?;
        browser.new_tab().await?;
        for target in initial {
            let closing = json!({"targetId": target});
            let _ = browser.cdp.call("Target.closeTarget", closing, None).await;
        }
        Ok(browser)
    }

    /// Handles events until the connection closes (the browser is then dead).
    fn pump(&self, mut events: mpsc::UnboundedReceiver<CdpEvent>) {
        let cdp = self.cdp.clone();
        let guard = self.guard.clone();
        let tabs = self.tabs.clone();
        let dead = self.dead.clone();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                handle(event, &cdp, &guard, &tabs);
            }
            dead.store(true, Ordering::Relaxed);
        });
    }

    pub fn is_dead(&self) -> bool {
        self.dead.load(Ordering::Relaxed)
    }

    pub fn pid(&self) -> i32 {
        self.process.pid()
    }

    pub fn touch(&self) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = Instant::now();
        }
    }

    pub fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or_default()
    }

    pub fn kill(&self) {
        self.process.kill();
        self.proxy.abort();
    }

    /// Opens a blank tab, waits until it is attached and guarded, and
    /// makes it current.
    pub async fn new_tab(&self) -> Result<Tab, String> {
        let created = self
            .cdp
            .call("Target.createTarget", json!({"url": "about:blank"}), None)
            .await?;
        let target = created["targetId"].as_str().unwrap_or_default().to_string();
        let deadline = Instant::now() + Duration::from_secs(10);
        let tab = loop {
            if let Some(tab) = self.tab(&target) {
                break tab;
            }
            if Instant::now() > deadline {
                return Err("the browser's new tab never attached".into());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        self.switch_to(&target);
        Ok(tab)
    }

    fn tab(&self, target: &str) -> Option<Tab> {
        let tabs = self.tabs.lock().ok()?;
        tabs.open.iter().find(|t| t.target == target).cloned()
    }

    /// The current tab (the last one opened, or the one switched to).
    pub fn current(&self) -> Option<Tab> {
        let tabs = self.tabs.lock().ok()?;
        let current = tabs.current.as_deref()?;
        tabs.open.iter().find(|t| t.target == current).cloned()
    }

    pub fn tabs(&self) -> Vec<Tab> {
        self.tabs.lock().map(|t| t.open.clone()).unwrap_or_default()
    }

    pub fn switch_to(&self, target: &str) {
        if let Ok(mut tabs) = self.tabs.lock() {
            tabs.current = Some(target.to_string());
        }
    }
}

/// One event: a paused request judged, a new target set up, a gone one
/// forgotten, a dialog dismissed (nobody would ever answer it).
fn handle(event: CdpEvent, cdp: &Cdp, guard: &Arc<RequestGuard>, tabs: &Arc<Mutex<Tabs>>) {
    let session = event.session.clone();
    match event.method.as_str() {
        "Fetch.requestPaused" => {
            let (cdp, guard) = (cdp.clone(), guard.clone());
            tokio::spawn(async move {
                let id = event.params["requestId"].clone();
                let url = event.params["request"]["url"].as_str().unwrap_or_default();
                let session = session.as_deref();
                match guard.judge(url).await {
                    Ok(()) => cdp.send("Fetch.continueRequest", json!({"requestId": id}), session),
                    Err(_) => cdp.send(
                        "Fetch.failRequest",
                        json!({"requestId": id, "errorReason": "BlockedByClient"}),
                        session,
                    ),
                }
            });
        }
        "Target.attachedToTarget" => {
            let (cdp, tabs) = (cdp.clone(), tabs.clone());
            tokio::spawn(async move { set_up(&event.params, &cdp, &tabs).await });
        }
        "Target.detachedFromTarget" => {
            let gone = event.params["sessionId"].as_str().unwrap_or_default();
            if let Ok(mut tabs) = tabs.lock() {
                tabs.gone.insert(gone.to_string());
                tabs.open.retain(|t| t.session != gone);
                let current = tabs.current.clone();
                if !tabs
                    .open
                    .iter()
                    .any(|t| Some(&t.target) == current.as_ref())
                {
                    tabs.current = tabs.open.last().map(|t| t.target.clone());
                }
            }
        }
        // The proxy asks for the browser's secret (`proxy`); a site's own
        // sign-in prompt is cancelled, as nobody could answer it.
        "Fetch.authRequired" => {
            let id = event.params["requestId"].clone();
            let answer = match event.params["authChallenge"]["source"].as_str() {
                Some("Proxy") => json!({"response": "ProvideCredentials",
                    "username": "egirl", "password": guard.proxy_secret()}),
                _ => json!({"response": "CancelAuth"}),
            };
            let params = json!({"requestId": id, "authChallengeResponse": answer});
            cdp.send("Fetch.continueWithAuth", params, session.as_deref());
        }
        "Page.javascriptDialogOpening" => cdp.send(
            "Page.handleJavaScriptDialog",
            json!({"accept": false}),
            session.as_deref(),
        ),
        _ => {}
    }
}

/// A new target, held by Chromium until resumed: its requests intercepted,
/// its own children held the same way, then resumed.
async fn set_up(params: &Value, cdp: &Cdp, tabs: &Mutex<Tabs>) {
    let Some(session) = params["sessionId"].as_str() else {
        return;
    };
    let kind = params["targetInfo"]["type"].as_str().unwrap_or_default();
    let target = params["targetInfo"]["targetId"]
        .as_str()
        .unwrap_or_default();
    let s = Some(session);
    if FETCHING.contains(&kind) {
        let intercepted = cdp
            .call(
                "Fetch.enable",
                json!({"patterns": [{"urlPattern": "*"}], "handleAuthRequests": true}),
                s,
            )
            .await;
        if let Err(why) = intercepted {
            tracing::warn!(
                "browser: a {kind} target's requests cannot be intercepted ({why}); left paused"
            );
            return;
        }
    }
    if matches!(kind, "page" | "iframe") {
        let _ = cdp
            .call(
                "Target.setAutoAttach",
                json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}),
                s,
            )
            .await;
    }
    let _ = cdp
        .call("Runtime.runIfWaitingForDebugger", json!({}), s)
        .await;
    if kind != "page" {
        return;
    }
    // Dialogs are announced by the Page domain (a held page answers it
    // only once resumed).
    cdp.send("Page.enable", json!({}), s);
    // A new tab becomes the current one: a page opened it (a link with a
    // target, window.open; `noopener` hides which), so it is followed.
    // The tab Chromium opened by itself is closed by `Browser::start`.
    if let Ok(mut tabs) = tabs.lock()
        && !tabs.ignored.contains(target)
        && !tabs.gone.contains(session)
    {
        tabs.open.push(Tab {
            target: target.to_string(),
            session: session.to_string(),
        });
        tabs.current = Some(target.to_string());
    }
}

#[cfg(test)]
mod tests {
    /// The inodes of the TCP sockets of this machine that listen.
    fn listening_inodes() -> Vec<String> {
        let mut found = Vec::new();
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = std::fs::read_to_string(table).unwrap_or_default();
            for line in text.lines().skip(1) {
                let fields: Vec<&str> = line.split_whitespace().collect();
                if fields.get(3) == Some(&"0A") {
                    found.extend(fields.get(9).map(|inode| inode.to_string()));
                }
            }
        }
        found
    }

    /// DevTools is a pipe: the browser holds no listening socket through
    /// which another process (a sandboxed command with the network on)
    /// could drive it.
    #[tokio::test(flavor = "multi_thread")]
    async fn chromium_listens_on_no_port() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::tools::approval::test_context(dir.path(), Default::default());
        if let Err(why) = ctx.config.tools.browser.chromium() {
            eprintln!("skipped: {why}");
            return;
        }
        let browser = super::Browser::start(&ctx)
            .await
            .expect("the browser starts");
        let fds = std::fs::read_dir(format!("/proc/{}/fd", browser.pid())).unwrap();
        let held: Vec<String> = fds
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok())
            .map(|target| target.display().to_string())
            .collect();
        let listening: Vec<String> = listening_inodes()
            .into_iter()
            .filter(|inode| held.contains(&format!("socket:[{inode}]")))
            .collect();
        browser.kill();
        assert!(listening.is_empty(), "Chromium listens: {listening:?}");
    }
}
