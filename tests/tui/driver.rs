//! The real event loop on `TestBackend` with paused time: no redraw when
//! idle, coalesced and capped redraws under a delta storm, keys reaching
//! the core, the bell on an approval.

use std::io;
use std::time::Duration;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use egirl::bus::EventBus;
use egirl::protocol::{AnswerDelta, ApprovalRequest, EventKind, Op, Submission, TurnStarted};
use egirl::surfaces::tui::Effect;
use egirl::surfaces::tui::driver::{AppEvent, Host, drive};
use futures_util::stream::{self, Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc;

use super::*;

#[derive(Default)]
struct Recorder {
    ops: Vec<Op>,
    effects: Vec<Effect>,
}

impl Host<TestBackend> for Recorder {
    fn submit(&mut self, submission: Submission) -> bool {
        self.ops.push(submission.op);
        true
    }

    fn effect(&mut self, _: &mut Terminal<TestBackend>, effect: Effect) -> anyhow::Result<()> {
        self.effects.push(effect);
        Ok(())
    }
}

/// Scripted terminal input, then silence (a real terminal never ends).
fn keys(events: Vec<TermEvent>) -> impl Stream<Item = io::Result<TermEvent>> + Unpin {
    stream::iter(events.into_iter().map(Ok)).chain(stream::pending())
}

fn quit_after(after: Duration) -> mpsc::UnboundedReceiver<AppEvent> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        let _ = tx.send(AppEvent::Quit);
    });
    rx
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(100, 30)).expect("test terminal")
}

#[tokio::test(start_paused = true)]
async fn an_idle_tui_draws_once_and_then_never() {
    let mut app = app();
    let _core_tx = EventBus::new();
    let core = _core_tx.subscribe();
    let mut host = Recorder::default();
    let frames = drive(
        &mut terminal(),
        &mut app,
        keys(Vec::new()),
        core,
        quit_after(Duration::from_secs(5)),
        &mut host,
    )
    .await
    .expect("loop");
    assert_eq!(frames, 1, "an idle TUI must not redraw");
}

#[tokio::test(start_paused = true)]
async fn a_delta_storm_is_coalesced_and_capped_with_no_backlog() {
    let mut app = app();
    let core_tx = EventBus::new();
    let core = core_tx.subscribe();
    // 5,000 deltas a second for two seconds.
    let producer = tokio::spawn(async move {
        core_tx.send(ev(EventKind::TurnStarted(TurnStarted {
            text: "go".into(),
            ..Default::default()
        })));
        for ms in 0..2000 {
            for i in 0..5 {
                core_tx.send(ev(EventKind::Delta(AnswerDelta {
                    text: format!("{} ", ms * 5 + i),
                })));
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // Keep the channel open while the loop winds down.
        tokio::time::sleep(Duration::from_secs(10)).await;
    });
    let mut host = Recorder::default();
    let frames = drive(
        &mut terminal(),
        &mut app,
        keys(Vec::new()),
        core,
        quit_after(Duration::from_millis(2500)),
        &mut host,
    )
    .await
    .expect("loop");
    producer.abort();
    // At most one frame per 16.7 ms (plus the first), and it kept drawing.
    eprintln!("delta storm: {frames} frames in 2.5 s");
    assert!((30..=152).contains(&frames), "{frames} frames");
    let answer = &app.conversation.entries[1].text;
    assert!(
        answer.ends_with(" 9999 "),
        "backlog left ({} bytes)",
        answer.len()
    );
}

#[tokio::test(start_paused = true)]
async fn keys_reach_the_core_and_two_ctrl_c_quit() {
    let mut app = app();
    let _core_tx = EventBus::new();
    let core = _core_tx.subscribe();
    let mut script: Vec<TermEvent> = "hi"
        .chars()
        .map(|c| TermEvent::Key(key(KeyCode::Char(c))))
        .collect();
    script.push(TermEvent::Key(key(KeyCode::Enter)));
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    script.push(TermEvent::Key(ctrl_c));
    script.push(TermEvent::Key(ctrl_c));
    let mut host = Recorder::default();
    let start = tokio::time::Instant::now();
    drive(
        &mut terminal(),
        &mut app,
        keys(script),
        core,
        // The second Ctrl+C must end the loop long before this.
        quit_after(Duration::from_secs(3600)),
        &mut host,
    )
    .await
    .expect("loop");
    assert!(matches!(&host.ops[..], [Op::UserMessage { text, .. }] if text == "hi"));
    assert!(start.elapsed() < Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn an_approval_rings_the_bell() {
    let mut app = app();
    let core_tx = EventBus::new();
    let core = core_tx.subscribe();
    core_tx.send(ev(EventKind::ApprovalRequest(ApprovalRequest {
        id: "ap".into(),
        tool: "exec".into(),
        command: "make".into(),
        cwd: "/ws".into(),
        rule: Some("make".into()),
        rule_covers: None,
        sandbox: None,
        escalation: None,
    })));
    let mut host = Recorder::default();
    drive(
        &mut terminal(),
        &mut app,
        keys(Vec::new()),
        core,
        quit_after(Duration::from_millis(100)),
        &mut host,
    )
    .await
    .expect("loop");
    assert!(matches!(host.effects.as_slice(), [Effect::Bell]));
    assert_eq!(app.approvals.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn health_probes_redraw_only_when_the_answer_changes() {
    let mut app = app();
    let _core_tx = EventBus::new();
    let core = _core_tx.subscribe();
    let (tx, internal) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        // Up, up, up (no change after the first), then down, then quit.
        for up in [true, true, true, false] {
            tokio::time::sleep(Duration::from_secs(10)).await;
            let _ = tx.send(AppEvent::LocalHealth(up));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let _ = tx.send(AppEvent::Quit);
    });
    let mut host = Recorder::default();
    let frames = drive(
        &mut terminal(),
        &mut app,
        keys(Vec::new()),
        core,
        internal,
        &mut host,
    )
    .await
    .expect("loop");
    // The first frame, "up", "failing".
    assert_eq!(frames, 3);
    assert_eq!(
        app.status.local,
        egirl::surfaces::tui::app::LocalState::Failing
    );
}

#[tokio::test(start_paused = true)]
async fn discord_status_changes_reach_the_status_line() {
    use egirl::protocol::BotStatus;
    let mut app = app();
    let _core_tx = EventBus::new();
    let core = _core_tx.subscribe();
    let (tx, internal) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let ready = BotStatus::Ready("egirl-bot".into());
        for status in [BotStatus::Connecting, ready.clone(), ready] {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let _ = tx.send(AppEvent::Discord(status));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let _ = tx.send(AppEvent::Quit);
    });
    let mut host = Recorder::default();
    let frames = drive(
        &mut terminal(),
        &mut app,
        keys(Vec::new()),
        core,
        internal,
        &mut host,
    )
    .await
    .expect("loop");
    // The first frame, "connecting", "ready" (the repeat draws nothing).
    assert_eq!(frames, 3);
    assert_eq!(app.status.discord, BotStatus::Ready("egirl-bot".into()));
}

/// The loop arms the approval modal on its own clock: a key 100 ms after
/// the request is the message's, the modal lights its keys half a second
/// after it (a timer, then a frame), and a key then decides.
#[tokio::test(start_paused = true)]
async fn the_loop_arms_the_modal_after_a_quiet_half_second() {
    use egirl::protocol::ReviewDecision;
    let mut app = app();
    let core_tx = EventBus::new();
    let core = core_tx.subscribe();
    core_tx.send(ev(EventKind::ApprovalRequest(ApprovalRequest {
        id: "ap".into(),
        tool: "exec".into(),
        command: "touch pwned.txt".into(),
        cwd: "/ws".into(),
        rule: Some("touch".into()),
        rule_covers: None,
        sandbox: None,
        escalation: None,
    })));
    let start = tokio::time::Instant::now();
    let script = [(100, 'y'), (1000, 'y')];
    let input = stream::iter(script)
        .then(move |(ms, c)| async move {
            tokio::time::sleep_until(start + Duration::from_millis(ms)).await;
            Ok(TermEvent::Key(key(KeyCode::Char(c))))
        })
        .chain(stream::pending())
        .boxed();
    let mut host = Recorder::default();
    let frames = drive(
        &mut terminal(),
        &mut app,
        input,
        core,
        quit_after(Duration::from_secs(2)),
        &mut host,
    )
    .await
    .expect("loop");
    assert!(
        matches!(
            &host.ops[..],
            [Op::ApprovalDecision { id, decision: ReviewDecision::ApprovedOnce, .. }] if id == "ap"
        ),
        "{:?}",
        host.ops
    );
    assert_eq!(app.input.text(), "y", "the early key went to the input");
    // The modal, its keys lit, the key typed, the modal closed: a handful
    // of frames, no timer spinning.
    assert!(frames < 10, "{frames} frames");
}
