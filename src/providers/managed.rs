//! A llama-server egirl starts itself (`[local.server]`) when nothing
//! answers at `[local] endpoint`, and stops on exit. If something already
//! answers there, egirl uses it and starts nothing.
//!
//! It gets `--slot-save-path` (unless the configured args name one), so
//! sessions resumed after a restart start with their KV cache restored
//! (see `agent::slots`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::config::{LocalConfig, ManagedServerConfig, expand_home};

/// Saved session caches kept in the managed server's slot directory; older
/// ones are deleted at start (each is up to the whole KV cache in size).
pub const KEEP_SAVED_SLOTS: usize = 16;

/// Where the managed server saves session caches: `<workspace>/.egirl/slots`.
pub fn slot_dir(workspace: &Path) -> PathBuf {
    workspace.join(".egirl").join("slots")
}

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
/// `progress` gets a line now and then while the model loads; `slot_dir`
/// is its `--slot-save-path` (see [`slot_dir`]); `env` is all the
/// environment it gets (egirl's minus its secrets, as a command gets it:
/// a process that held egirl's keys would show them to anything that can
/// read its `/proc/<pid>/environ`).
pub async fn ensure_running(
    local: &LocalConfig,
    log_dir: &Path,
    slot_dir: &Path,
    env: &[(OsString, OsString)],
    mut progress: impl FnMut(&str),
) -> Result<Option<ManagedServer>> {
    let Some(server) = &local.server else {
        return Ok(None);
    };
    // With replicas, the managed server is the first of them.
    let endpoint = local
        .endpoint_list()
        .into_iter()
        .next()
        .unwrap_or_else(|| local.endpoint.clone());
    if answers(&endpoint).await {
        return Ok(None);
    }
    let mut started = start(server, &endpoint, log_dir, slot_dir, env)?;
    progress(&format!(
        "starting llama-server on {endpoint} (log: {})",
        started.log.display()
    ));
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .context("cannot build an HTTP client")?;
    let begun = Instant::now();
    let mut last_note = Instant::now();
    loop {
        if healthy(&client, &endpoint).await {
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

fn start(
    server: &ManagedServerConfig,
    endpoint: &str,
    log_dir: &Path,
    slot_dir: &Path,
    env: &[(OsString, OsString)],
) -> Result<ManagedServer> {
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
        .args(slot_args(&server.args, slot_dir))
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
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

/// `--slot-save-path DIR` unless the user's args set one; nothing (the
/// feature off) when the directory cannot be made.
fn slot_args(args: &[String], dir: &Path) -> Vec<OsString> {
    let flag = "--slot-save-path";
    if args
        .iter()
        .any(|a| a == flag || a.starts_with("--slot-save-path="))
    {
        return Vec::new();
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        tracing::warn!(dir = %dir.display(), "no slot directory, session caches are not kept ({e})");
        return Vec::new();
    }
    prune_saved_slots(dir, KEEP_SAVED_SLOTS);
    vec![flag.into(), dir.as_os_str().to_owned()]
}

/// Deletes all but the `keep` newest `egirl-*.bin` files in `dir`.
pub fn prune_saved_slots(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut saved: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("egirl-") && name.ends_with(".bin")
        })
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            Some((meta.modified().ok()?, e.path()))
        })
        .collect();
    saved.sort_by_key(|s| std::cmp::Reverse(s.0));
    for (_, path) in saved.into_iter().skip(keep) {
        match std::fs::remove_file(&path) {
            Ok(()) => tracing::info!(file = %path.display(), "deleted an old saved session cache"),
            Err(e) => tracing::debug!(file = %path.display(), "cannot delete ({e})"),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_save_path_is_added_unless_configured() {
        let dir = tempfile::tempdir().unwrap();
        let slots = dir.path().join("ws/.egirl/slots");
        let args = slot_args(&[], &slots);
        assert_eq!(
            args,
            vec!["--slot-save-path".into(), slots.as_os_str().to_owned()]
        );
        assert!(slots.is_dir());
        for own in [
            vec!["--slot-save-path".to_string(), "/x".into()],
            vec!["--slot-save-path=/x".to_string()],
        ] {
            assert!(slot_args(&own, &slots).is_empty(), "{own:?}");
        }
    }

    #[test]
    fn only_the_newest_saved_slots_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let old = std::time::SystemTime::now() - Duration::from_secs(3600);
        for i in 0..5 {
            let path = dir.path().join(format!("egirl-s{i}.bin"));
            std::fs::write(&path, b"kv").unwrap();
            let when = old + Duration::from_secs(i * 60);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        std::fs::write(dir.path().join("other.bin"), b"not ours").unwrap();
        prune_saved_slots(dir.path(), 2);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["egirl-s3.bin", "egirl-s4.bin", "other.bin"]);
    }
}
