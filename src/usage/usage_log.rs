//! `<workspace>/.egirl/usage.jsonl`: every `usage` event, one line each, for
//! `egirl stats`. A bus subscriber rather than part of the turn loop, so a
//! slow or full disk never holds up a turn and every provider is covered.

use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::bus::EventBus;
use crate::protocol::{Event, EventKind, TokenUsage};

/// The provider name of the local server; everything else is remote.
pub const LOCAL_PROVIDER: &str = "llamacpp";

/// One line of `usage.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UsageLine {
    pub ts: DateTime<Utc>,
    pub session: String,
    pub origin: String,
    pub provider: String,
    pub model: String,
    /// Written so that readers need not know provider names.
    #[serde(default)]
    pub local: bool,
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cached_tokens: u64,
    #[serde(default)]
    pub cost_usd: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_sec: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u64>,
}

impl UsageLine {
    /// The line for a `usage` event; `None` for every other kind.
    pub fn from_event(event: &Event, ts: DateTime<Utc>) -> Option<Self> {
        let EventKind::Usage(TokenUsage {
            provider,
            model,
            input_tokens,
            output_tokens,
            cached_tokens,
            cost_usd,
            tokens_per_sec,
            latency_ms,
            ..
        }) = &event.kind
        else {
            return None;
        };
        Some(Self {
            ts,
            session: event.session.clone(),
            origin: event.origin.to_string(),
            provider: provider.clone(),
            model: model.clone(),
            local: provider == LOCAL_PROVIDER,
            input_tokens: *input_tokens,
            output_tokens: *output_tokens,
            cached_tokens: *cached_tokens,
            cost_usd: *cost_usd,
            tokens_per_sec: *tokens_per_sec,
            latency_ms: *latency_ms,
        })
    }
}

pub fn path(workspace: &Path) -> PathBuf {
    workspace.join(".egirl").join("usage.jsonl")
}

/// Appends every `usage` event on the bus to `.egirl/usage.jsonl` until the
/// bus closes. Write errors are logged and the event dropped: losing a
/// stats line is better than stopping the agent.
pub fn spawn_usage_log(bus: &EventBus, workspace: &Path) -> JoinHandle<()> {
    spawn_usage_log_counted(bus, workspace, watch::channel(0).0)
}

/// As [`spawn_usage_log`], counting the lines written on `written`: what
/// reads the log again after each (the spend caps a status shows) waits
/// on it rather than racing the write.
pub fn spawn_usage_log_counted(
    bus: &EventBus,
    workspace: &Path,
    written: watch::Sender<u64>,
) -> JoinHandle<()> {
    let mut events = bus.subscribe();
    let path = path(workspace);
    // Each agent's log takes its own agent's events only (the bus is shared).
    let agent = bus.agent().map(str::to_string);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if event.agent != agent {
                continue;
            }
            let Some(line) = UsageLine::from_event(&event, super::now()) else {
                continue;
            };
            if let Err(e) = append(&path, &line) {
                tracing::warn!("cannot append to {}: {e}", path.display());
            }
            written.send_modify(|n| *n += 1);
        }
    })
}

/// One line, opened per append and flushed, so a crash loses at most the
/// line being written (readers skip a torn last line).
fn append(path: &Path, line: &UsageLine) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
    text.push('\n');
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(text.as_bytes())?;
    file.flush()
}

/// Reads `usage.jsonl`: `Ok(None)` when nothing was recorded yet. A torn
/// last line (crash mid-write) is skipped; a bad line elsewhere is an error
/// naming the line.
pub fn read(workspace: &Path) -> anyhow::Result<Option<Vec<UsageLine>>> {
    use anyhow::Context;
    let path = path(workspace);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<UsageLine>(line) {
            Ok(l) => out.push(l),
            Err(_) if n + 1 == lines.len() => {
                tracing::warn!(path = %path.display(), "skipping a torn last line");
            }
            Err(e) => anyhow::bail!("{}:{}: bad usage line: {e}", path.display(), n + 1),
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AnswerDelta, Origin};

    fn usage(provider: &str, cost: f64) -> EventKind {
        EventKind::Usage(TokenUsage {
            provider: provider.into(),
            model: "m".into(),
            input_tokens: 100,
            output_tokens: 20,
            cached_tokens: 40,
            cost_usd: cost,
            tokens_per_sec: Some(12.5),
            latency_ms: None,
            endpoint: None,
            context: None,
        })
    }

    #[tokio::test]
    async fn writes_one_line_per_usage_event_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let bus = EventBus::new();
        let task = spawn_usage_log(&bus, dir.path());
        bus.emit(
            "s1",
            &Origin::Cli,
            EventKind::Delta(AnswerDelta { text: "x".into() }),
        );
        bus.emit("s1", &Origin::Cli, usage("llamacpp", 0.0));
        bus.emit("s2", &Origin::Discord("9".into()), usage("anthropic", 0.25));
        // The task ends when the last sender (the bus) goes away.
        drop(bus);
        task.await.unwrap();

        let lines = read(dir.path()).unwrap().unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].session, "s1");
        assert!(lines[0].local);
        assert_eq!(lines[0].tokens_per_sec, Some(12.5));
        assert_eq!(lines[1].origin, "discord:9");
        assert_eq!(lines[1].provider, "anthropic");
        assert!(!lines[1].local);
        assert_eq!(lines[1].cost_usd, 0.25);
        assert_eq!(
            (
                lines[1].input_tokens,
                lines[1].output_tokens,
                lines[1].cached_tokens
            ),
            (100, 20, 40)
        );
    }

    #[tokio::test]
    async fn an_unwritable_log_is_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        // `.egirl` is a file, so the log cannot be created.
        std::fs::write(dir.path().join(".egirl"), "").unwrap();
        let bus = EventBus::new();
        let task = spawn_usage_log(&bus, dir.path());
        bus.emit("s", &Origin::Cli, usage("llamacpp", 0.0));
        drop(bus);
        task.await.unwrap();
    }

    #[test]
    fn missing_file_and_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(dir.path()).unwrap().is_none());
        std::fs::create_dir_all(dir.path().join(".egirl")).unwrap();
        let good = r#"{"ts":"2025-01-01T12:00:00Z","session":"s","origin":"cli","provider":"llamacpp","model":"m","local":true,"input_tokens":1,"output_tokens":2,"cached_tokens":0,"cost_usd":0.0}"#;
        std::fs::write(path(dir.path()), format!("{good}\n{{\"ts\":\"20")).unwrap();
        assert_eq!(read(dir.path()).unwrap().unwrap().len(), 1);
        std::fs::write(path(dir.path()), format!("garbage\n{good}\n")).unwrap();
        let err = read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("usage.jsonl:1"), "{err}");
    }
}
