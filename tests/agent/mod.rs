//! The agent core end to end against the fake llama-server: the turn loop,
//! tools, approvals, the window, queueing, interrupts and persistence.

mod approvals;
mod escalation;
mod release;
mod slots;
mod turns;
mod window;

use std::path::{Path, PathBuf};
use std::time::Duration;

use egirl::agent::{self, AgentHandle};
use egirl::bus::EventReceiver;
use egirl::config::{Config, ConfigDuration};
use egirl::protocol::{ErrorEvent, Event, EventKind, FinalAnswer, Op, Origin, ToolResultEvent};
use egirl::providers::remote::RemoteProviders;

use crate::support::fake_llama::FakeLlama;

pub struct Harness {
    pub agent: AgentHandle,
    pub events: EventReceiver,
    pub workspace: PathBuf,
    _dir: tempfile::TempDir,
}

pub fn config_for(fake: &FakeLlama) -> Config {
    let mut config = Config::default();
    config.local.endpoint = fake.url();
    config.local.model = "fake-model".into();
    config.local.timeout = ConfigDuration::from_secs(10);
    config.local.max_tokens = 512;
    config
}

pub fn start(fake: &FakeLlama, tweak: impl FnOnce(&mut Config)) -> Harness {
    start_with_remote(fake, RemoteProviders::default(), tweak)
}

/// `start` with remote providers the router and escalation may use.
pub fn start_with_remote(
    fake: &FakeLlama,
    remote: RemoteProviders,
    tweak: impl FnOnce(&mut Config),
) -> Harness {
    let mut config = config_for(fake);
    tweak(&mut config);
    let dir = tempfile::tempdir().expect("temp dir");
    let (workspace, _) = egirl::workspace::ensure(&dir.path().join("ws")).expect("workspace");
    let (agent, _task) = agent::spawn_with(config, workspace.clone(), Vec::new(), remote);
    let events = agent.bus.subscribe();
    Harness {
        agent,
        events,
        workspace,
        _dir: dir,
    }
}

impl Harness {
    pub fn send(&self, session: &str, text: &str) {
        assert!(self.agent.submit(Op::UserMessage {
            images: Vec::new(),
            session: session.into(),
            origin: Origin::Tui,
            text: text.into(),
        }));
    }

    pub async fn next(&mut self) -> Event {
        tokio::time::timeout(Duration::from_secs(15), self.events.recv())
            .await
            .expect("an event within 15s")
            .expect("the bus is open")
    }

    /// Events of one session up to and including its `turn_ended`.
    pub async fn turn(&mut self, session: &str) -> Vec<EventKind> {
        let mut out = Vec::new();
        loop {
            let event = self.next().await;
            if event.session != session {
                continue;
            }
            let end = matches!(event.kind, EventKind::TurnEnded(_));
            out.push(event.kind);
            if end {
                return out;
            }
        }
    }

    /// Today's daily log once every turn is over: a turn's lines go in
    /// right after its `turn_ended`.
    pub async fn daily_log(&self) -> String {
        tokio::time::timeout(Duration::from_secs(15), self.agent.idle())
            .await
            .expect("idle within 15s");
        let path = egirl::memory::daily::path_for(&self.workspace, chrono::Local::now());
        std::fs::read_to_string(path).unwrap_or_default()
    }

    pub fn transcript(&self, session: &str) -> Vec<serde_json::Value> {
        read_jsonl(
            &self
                .workspace
                .join("sessions")
                .join(format!("{session}.jsonl")),
        )
    }
}

pub fn read_jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

pub fn final_text(events: &[EventKind]) -> Option<String> {
    events.iter().find_map(|e| match e {
        EventKind::Final(FinalAnswer { text }) => Some(text.clone()),
        _ => None,
    })
}

pub fn error_text(events: &[EventKind]) -> Option<String> {
    events.iter().find_map(|e| match e {
        EventKind::Error(ErrorEvent { message }) => Some(message.clone()),
        _ => None,
    })
}

pub fn tool_results(events: &[EventKind]) -> Vec<(String, bool, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            EventKind::ToolResult(ToolResultEvent {
                name,
                success,
                output,
                ..
            }) => Some((name.clone(), *success, output.clone())),
            _ => None,
        })
        .collect()
}
