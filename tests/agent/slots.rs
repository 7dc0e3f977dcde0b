//! A session's KV cache across restarts: saved at shutdown, restored when
//! the session is resumed from its transcript, silent where unsupported.

use std::path::{Path, PathBuf};
use std::time::Duration;

use egirl::agent::{self, AgentHandle};
use egirl::bus::EventReceiver;
use egirl::protocol::{EventKind, Op, Origin, TokenUsage};
use tokio::task::JoinHandle;

use super::{config_for, error_text, final_text};
use crate::support::fake_llama::FakeLlama;
use crate::support::fake_llama::slots::SlotAction;

/// One egirl process: a core on a workspace that outlives it.
struct Process {
    agent: AgentHandle,
    events: EventReceiver,
    core: JoinHandle<()>,
}

impl Process {
    fn start(fake: &FakeLlama, workspace: &Path) -> Self {
        let (agent, core) = agent::spawn(config_for(fake), workspace.to_path_buf(), Vec::new());
        let events = agent.bus.subscribe();
        Self {
            agent,
            events,
            core,
        }
    }

    /// One message, its events up to `turn_ended`.
    async fn turn(&mut self, session: &str, text: &str) -> Vec<EventKind> {
        assert!(self.agent.submit(Op::UserMessage {
            images: Vec::new(),
            session: session.into(),
            origin: Origin::Cli,
            text: text.into(),
        }));
        let mut out = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(15), self.events.recv())
                .await
                .expect("an event within 15s")
                .expect("the bus is open");
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

    /// `Op::Shutdown`, then wait for the core to finish (slots saved).
    async fn shutdown(self) {
        assert!(self.agent.submit(Op::Shutdown));
        tokio::time::timeout(Duration::from_secs(15), self.core)
            .await
            .expect("the core stops within 15s")
            .expect("the core did not panic");
    }
}

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (ws, _) = egirl::workspace::ensure(&dir.path().join("ws")).expect("workspace");
    (dir, ws)
}

fn action(slot: u64, action: &str, session: &str) -> SlotAction {
    SlotAction {
        slot,
        action: action.into(),
        filename: agent::slot_file_name(session),
    }
}

fn first_usage(events: &[EventKind]) -> (u64, u64) {
    events
        .iter()
        .find_map(|e| match e {
            EventKind::Usage(TokenUsage {
                input_tokens,
                cached_tokens,
                ..
            }) => Some((*input_tokens, *cached_tokens)),
            _ => None,
        })
        .expect("a usage event")
}

#[tokio::test]
async fn shutdown_saves_and_a_resumed_session_restores_before_its_first_request() {
    let fake = FakeLlama::start().await;
    fake.enable_slot_save();
    let (_dir, ws) = workspace();

    let mut first = Process::start(&fake, &ws);
    let events = first.turn("resume-me", "My name is Ada.").await;
    assert!(final_text(&events).is_some(), "{events:?}");
    // A new session: nothing to restore.
    assert_eq!(fake.slot_actions(), []);
    first.shutdown().await;
    assert_eq!(fake.slot_actions(), [action(0, "save", "resume-me")]);
    assert_eq!(fake.saved_slot_files(), ["egirl-resume-me.bin"]);

    // The server restarts: its slot is empty, the file is still there.
    fake.restart();
    let chats_before = fake.requests().len();
    let mut second = Process::start(&fake, &ws);
    let events = second.turn("resume-me", "What is my name?").await;
    assert!(final_text(&events).is_some(), "{events:?}");
    let (input, cached) = first_usage(&events);
    assert!(cached > 0 && cached < input, "{input} in, {cached} cached");

    // The restore came before the turn's first chat request.
    assert_eq!(
        fake.slot_actions(),
        [
            action(0, "save", "resume-me"),
            action(0, "restore", "resume-me")
        ]
    );
    let recorded = fake.recorded();
    let restore_at = recorded.iter().rposition(|r| r.path == "/slots");
    let first_chat_at = recorded
        .iter()
        .enumerate()
        .filter(|(_, r)| r.path == "/v1/chat/completions")
        .nth(chats_before)
        .map(|(i, _)| i);
    assert!(
        restore_at < first_chat_at,
        "{restore_at:?} {first_chat_at:?}"
    );
    second.shutdown().await;
    assert_eq!(fake.slot_actions().len(), 3);
    assert_eq!(fake.slot_actions()[2], action(0, "save", "resume-me"));
}

#[tokio::test]
async fn without_restore_the_first_turn_after_a_restart_is_cold() {
    // The same two processes against a server without --slot-save-path.
    let fake = FakeLlama::start().await;
    let (_dir, ws) = workspace();
    let mut first = Process::start(&fake, &ws);
    first.turn("cold", "My name is Ada.").await;
    first.shutdown().await;
    fake.restart();
    let mut second = Process::start(&fake, &ws);
    let events = second.turn("cold", "What is my name?").await;
    // Unsupported is not the user's problem: no error, no notice.
    assert_eq!(error_text(&events), None);
    assert!(
        !events.iter().any(|e| matches!(e, EventKind::Notice(_))),
        "{events:?}"
    );
    assert!(final_text(&events).is_some(), "{events:?}");
    let (input, cached) = first_usage(&events);
    assert_eq!(cached, 0, "{input} in, {cached} cached");
    second.shutdown().await;
    // Tried (save, restore, save) and answered 501 each time.
    assert_eq!(
        fake.slot_actions(),
        [
            action(0, "save", "cold"),
            action(0, "restore", "cold"),
            action(0, "save", "cold"),
        ]
    );
    assert_eq!(fake.saved_slot_files(), Vec::<String>::new());
}

#[tokio::test]
async fn a_slot_is_saved_only_for_the_session_that_used_it_last() {
    let fake = FakeLlama::start().await;
    fake.enable_slot_save();
    let (_dir, ws) = workspace();
    let mut process = Process::start(&fake, &ws);
    // One slot: b's request replaced a's cache.
    process.turn("a", "hi").await;
    process.turn("b", "hello").await;
    process.shutdown().await;
    assert_eq!(fake.slot_actions(), [action(0, "save", "b")]);

    // Two slots: each session keeps (and saves) its own.
    let fake = FakeLlama::start().await;
    fake.enable_slot_save();
    fake.set_total_slots(2);
    let mut process = Process::start(&fake, &ws);
    process.turn("c", "hi").await;
    process.turn("d", "hello").await;
    process.shutdown().await;
    assert_eq!(
        fake.slot_actions(),
        [action(0, "save", "c"), action(1, "save", "d")]
    );
}

#[tokio::test]
async fn a_missing_slot_file_leaves_the_turn_working() {
    let fake = FakeLlama::start().await;
    fake.enable_slot_save();
    let (_dir, ws) = workspace();
    let mut first = Process::start(&fake, &ws);
    first.turn("gone", "hi").await;
    // Killed without a shutdown: nothing saved.
    first.core.abort();
    fake.restart();
    let mut second = Process::start(&fake, &ws);
    let events = second.turn("gone", "again").await;
    assert_eq!(error_text(&events), None);
    assert!(final_text(&events).is_some(), "{events:?}");
    assert_eq!(fake.slot_actions(), [action(0, "restore", "gone")]);
}

#[tokio::test]
async fn a_warm_slot_is_not_restored_over() {
    // The server outlived the first run: its slot still holds the session.
    let fake = FakeLlama::start().await;
    fake.enable_slot_save();
    let (_dir, ws) = workspace();
    let mut first = Process::start(&fake, &ws);
    first.turn("warm", "hi").await;
    first.shutdown().await;
    let mut second = Process::start(&fake, &ws);
    let events = second.turn("warm", "again").await;
    let (input, cached) = first_usage(&events);
    assert!(cached > 0, "{input} in, {cached} cached");
    assert_eq!(fake.slot_actions(), [action(0, "save", "warm")]);
    assert_eq!(fake.hits("/slots (list)"), 1);
}
