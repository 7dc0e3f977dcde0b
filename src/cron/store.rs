//! The jobs, in `<workspace>/.egirl/cron.json`: read and rewritten whole
//! (atomically) under a file lock, so the scheduler, the cron tools and
//! another egirl process on the same workspace never lose each other's
//! changes.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use super::schedule::Schedule;
use crate::config::Delivery;
use crate::fsutil::lockfile::FileLock;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub id: String,
    #[serde(flatten)]
    pub schedule: Schedule,
    /// What the agent is told when the job runs.
    pub message: String,
    #[serde(default)]
    pub deliver: Delivery,
    #[serde(default = "yes")]
    pub enabled: bool,
    pub created_at: DateTime<Utc>,
    /// None: nothing more to run (a disabled one-shot).
    #[serde(default)]
    pub next_run: Option<DateTime<Utc>>,
    #[serde(default)]
    pub last_run: Option<DateTime<Utc>>,
    /// "ok", or "error: ..." with what went wrong.
    #[serde(default)]
    pub last_status: Option<String>,
    #[serde(default)]
    pub consecutive_errors: u32,
}

fn yes() -> bool {
    true
}

impl Job {
    /// The session the job's turns run in (a Discord channel's, or its own).
    pub fn session(&self) -> String {
        self.deliver.session(&format!("cron-{}", self.id))
    }

    /// One line for `cron_list` and the TUI's `/cron`.
    pub fn describe(&self, now: DateTime<Utc>) -> String {
        let next = match (self.enabled, self.next_run) {
            (false, _) | (_, None) => "disabled".to_string(),
            (true, Some(at)) => format!(
                "next {} ({})",
                at.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M"),
                until(at, now)
            ),
        };
        let mut line = format!(
            "{} · {} · {next} · → {}",
            self.id,
            self.schedule.describe(),
            self.deliver
        );
        if let Some(status) = &self.last_status {
            line.push_str(&format!(" · last {status}"));
            if self.consecutive_errors > 1 {
                line.push_str(&format!(" ({} in a row)", self.consecutive_errors));
            }
        }
        line
    }
}

fn until(at: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (at - now).num_seconds();
    if secs <= 0 {
        return "due".into();
    }
    // To the nearest minute: "in 2h 0m", not "in 1h 59m" a moment later.
    let minutes = (secs + 30) / 60;
    let (d, h, m) = (minutes / 1440, minutes % 1440 / 60, minutes % 60);
    match (d, h) {
        (0, 0) => format!("in {m}m"),
        (0, _) => format!("in {h}h {m}m"),
        _ => format!("in {d}d {h}h"),
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    jobs: Vec<Job>,
}

/// This process changed the store: a scheduler waiting in it looks again
/// at once. (Changes by other processes are seen at the next wake-up,
/// within a minute.)
pub fn changed() -> &'static Notify {
    static CHANGED: OnceLock<Notify> = OnceLock::new();
    CHANGED.get_or_init(Notify::new)
}

#[derive(Clone, Debug)]
pub struct CronStore {
    path: PathBuf,
}

impl CronStore {
    pub fn in_workspace(workspace: &Path) -> Self {
        Self {
            path: workspace.join(".egirl").join("cron.json"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The jobs (none when the file does not exist yet). A file that does
    /// not parse is an error, never treated as empty: rewriting it would
    /// lose the user's jobs.
    pub fn load(&self) -> Result<Vec<Job>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(e).with_context(|| format!("cannot read {}", self.path.display()));
            }
        };
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        let file: StoreFile = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a valid job list (fix or remove it)",
                self.path.display()
            )
        })?;
        Ok(file.jobs)
    }

    /// Reads, changes and writes the jobs under the store's lock.
    pub fn update<R>(&self, change: impl FnOnce(&mut Vec<Job>) -> R) -> Result<R> {
        let lock_path = self.path.with_extension("json.lock");
        let _lock = FileLock::acquire(&lock_path)?;
        let mut jobs = self.load()?;
        let before = jobs.clone();
        let result = change(&mut jobs);
        if jobs != before {
            let file = StoreFile { jobs };
            let mut bytes = serde_json::to_vec_pretty(&file).context("cannot encode the jobs")?;
            bytes.push(b'\n');
            crate::fsutil::atomic::write_atomic(&self.path, &bytes)
                .with_context(|| format!("cannot write {}", self.path.display()))?;
            changed().notify_waiters();
        }
        Ok(result)
    }

    /// Adds a job, refusing a duplicate id.
    pub fn add(&self, job: Job) -> Result<()> {
        let id = job.id.clone();
        let added = self.update(|jobs| {
            if jobs.iter().any(|j| j.id == id) {
                return false;
            }
            jobs.push(job);
            true
        })?;
        if !added {
            bail!("a job named `{id}` exists already (remove it first or pick another name)");
        }
        Ok(())
    }

    /// Removes a job; false when there was none by that id.
    pub fn remove(&self, id: &str) -> Result<bool> {
        self.update(|jobs| {
            let before = jobs.len();
            jobs.retain(|j| j.id != id);
            jobs.len() != before
        })
    }
}

/// Job ids name sessions (`cron-<id>`) and origins (`cron:<id>`).
pub fn validate_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
    if !ok {
        bail!("invalid job name `{id}`: use letters, digits, `-` and `_` (max 64)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: &str) -> Job {
        Job {
            id: id.into(),
            schedule: Schedule::every("1h").unwrap(),
            message: "check the backups".into(),
            deliver: Delivery::Tui,
            enabled: true,
            created_at: Utc::now(),
            next_run: Some(Utc::now()),
            last_run: None,
            last_status: None,
            consecutive_errors: 0,
        }
    }

    #[test]
    fn jobs_survive_a_reload_and_a_corrupt_file_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let store = CronStore::in_workspace(dir.path());
        assert!(store.load().unwrap().is_empty());
        let backups = job("backups");
        store.add(backups.clone()).unwrap();
        assert!(store.add(job("backups")).is_err());
        assert_eq!(store.load().unwrap(), vec![backups]);
        let text = std::fs::read_to_string(store.path()).unwrap();
        assert!(text.contains("\"kind\": \"every\""), "{text}");
        assert!(store.remove("backups").unwrap());
        assert!(!store.remove("backups").unwrap());

        std::fs::write(store.path(), "{ not json").unwrap();
        assert!(store.load().is_err());
        assert!(store.add(job("x")).is_err());
        assert_eq!(std::fs::read_to_string(store.path()).unwrap(), "{ not json");
    }

    #[test]
    fn ids_are_safe_names() {
        assert!(validate_id("daily-news_2").is_ok());
        for bad in ["", "a b", "../x", "x:y"] {
            assert!(validate_id(bad).is_err(), "{bad}");
        }
    }
}
