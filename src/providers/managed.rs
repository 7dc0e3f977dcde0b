//! A llama-server egirl starts itself (`[local.server]`) when nothing
//! answers at `[local] endpoint`, and stops on exit. If something already
//! answers there, egirl uses it and starts nothing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::config::{LocalConfig, ManagedServerConfig, expand_home};

pub struct ManagedServer {
    child: tokio::process::Child,
    pid: i32,
    pub log: PathBuf,
}

/// Whether anything answers HTTP at the endpoint (even "loading model").
pub async fn answers(endpoint: &str) -> bool {
    let Ok(client) = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
    else {
        return false;
    };
    client
        .get(format!("{}/health", endpoint.trim_end_matches('/')))
        .send()
        .await
        .is_ok()
}

async fn healthy(client: &reqwest::Client, endpoint: &str) -> bool {
    matches!(
        client.get(format!("{}/health", endpoint.trim_end_matches('/'))).send().await,
        Ok(r) if r.status().is_success()
    )
}

/// Starts the managed server if one is configured and nothing answers.
/// `progress` gets a line now and then while the model loads.
pub async fn ensure_running(
    local: &LocalConfig,
    log_dir: &Path,
    mut progress: impl FnMut(&str),
) -> Result<Option<ManagedServer>> {
    let Some(server) = &local.server else {
        return Ok(None);
    };
    if answers(&local.endpoint).await {
        return Ok(None);
    }
    let mut started = start(server, &local.endpoint, log_dir)?;
    progress(&format!(
        "starting llama-server on {} (log: {})",
        local.endpoint,
        started.log.display()
    ));
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .context("cannot build an HTTP client")?;
    let begun = Instant::now();
    let mut last_note = Instant::now();
    loop {
        if healthy(&client, &local.endpoint).await {
            progress(&format!(
                "llama-server ready after {:.1}s",
                begun.elapsed().as_secs_f64()
            ));
            return Ok(Some(started));
        }
        if let Ok(Some(status)) = started.child.try_wait() {
            bail!(
                "llama-server exited during start-up ({status}); log {} ends with: {}",
                started.log.display(),
                tail(&started.log, 3)
            );
        }
        if begun.elapsed() > server.startup_timeout.0 {
            let log = started.log.clone();
            started.stop().await;
            bail!(
                "llama-server did not become healthy within {}s (see {})",
                server.startup_timeout.0.as_secs(),
                log.display()
            );
        }
        if last_note.elapsed() >= Duration::from_secs(2) {
            progress(&format!(
                "waiting for llama-server to load the model… {:.0}s",
                begun.elapsed().as_secs_f64()
            ));
            last_note = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn start(server: &ManagedServerConfig, endpoint: &str, log_dir: &Path) -> Result<ManagedServer> {
    let url = reqwest::Url::parse(endpoint)
        .with_context(|| format!("bad [local] endpoint {endpoint}"))?;
    let host = url.host_str().unwrap_or("127.0.0.1").to_string();
    let port = url.port_or_known_default().unwrap_or(8080);
    let binary = expand_home(&server.binary);
    let model = expand_home(&server.model);
    if !binary.is_file() {
        bail!(
            "[local.server] binary {} not found (run scripts/install-llama.sh, or start your server at {endpoint})",
            binary.display()
        );
    }
    if !model.is_file() {
        bail!(
            "[local.server] model {} not found (run scripts/install-llama.sh)",
            model.display()
        );
    }
    std::fs::create_dir_all(log_dir)
        .with_context(|| format!("cannot create {}", log_dir.display()))?;
    let log = log_dir.join("llama-server.log");
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .with_context(|| format!("cannot open {}", log.display()))?;
    let err = out.try_clone().context("cannot share the log file")?;
    let mut cmd = tokio::process::Command::new(&binary);
    cmd.arg("--jinja")
        .arg("-m")
        .arg(&model)
        .arg("--host")
        .arg(&host)
        .arg("--port")
        .arg(port.to_string())
        .args(&server.args)
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err)
        .kill_on_drop(true);
    // SAFETY: only async-signal-safe calls between fork and exec. Its own
    // process group so that stopping it stops its children; a parent-death
    // signal so that no server outlives a killed egirl.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let pid = child.id().map_or(0, |p| p as i32);
    tracing::info!(pid, binary = %binary.display(), "started managed llama-server");
    Ok(ManagedServer { child, pid, log })
}

impl ManagedServer {
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// SIGTERM to the group, then SIGKILL if it lingers.
    pub async fn stop(mut self) {
        if self.pid > 0 {
            // SAFETY: signalling a process group we created.
            unsafe { libc::kill(-self.pid, libc::SIGTERM) };
        }
        if tokio::time::timeout(Duration::from_secs(3), self.child.wait())
            .await
            .is_err()
        {
            self.kill_group();
            let _ = self.child.wait().await;
        }
        tracing::info!(pid = self.pid, "stopped managed llama-server");
        self.pid = 0;
    }

    fn kill_group(&self) {
        if self.pid > 0 {
            // SAFETY: signalling a process group we created.
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        }
    }
}

impl Drop for ManagedServer {
    fn drop(&mut self) {
        // On an early return or a panic: never leave the server behind.
        self.kill_group();
    }
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join(" | ")
}
