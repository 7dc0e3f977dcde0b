//! Heartbeat ticks: what reaches the model and what reaches anyone.

use std::sync::Arc;
use std::time::Duration;

use chrono::{Local, Utc};
use egirl::config::HeartbeatConfig;
use egirl::protocol::{EventKind, Op, Origin};
use egirl::surfaces::clock::{Clock, SystemClock, TokioClock};
use egirl::surfaces::heartbeat::{ActiveHours, Heartbeat, Tick};
use tokio_util::sync::CancellationToken;

use super::{CHAT, wait_requests};
use crate::agent::{Harness, final_text, start};
use crate::support::fake_llama::{FakeLlama, Reply};

fn heartbeat(h: &Harness, clock: Arc<dyn Clock>) -> Heartbeat {
    Heartbeat {
        agent: h.agent.clone(),
        agent_name: None,
        config: HeartbeatConfig::default(),
        workspace: h.workspace.clone(),
        clock,
    }
}

fn write_checklist(h: &Harness, text: &str) {
    std::fs::write(h.workspace.join("HEARTBEAT.md"), text).unwrap();
}

fn send_heartbeat(h: &Harness) {
    assert!(h.agent.submit(Op::UserMessage {
        images: Vec::new(),
        session: "heartbeat".into(),
        origin: Origin::Heartbeat,
        text: "Heartbeat check.".into(),
    }));
}

#[tokio::test]
async fn an_empty_checklist_skips_the_tick_without_a_request() {
    let fake = FakeLlama::start().await;
    let h = start(&fake, |_| {});
    // The workspace template: a heading and a comment, nothing to do.
    let tick = heartbeat(&h, Arc::new(SystemClock))
        .tick(None, &CancellationToken::new())
        .await;
    assert_eq!(tick, Tick::EmptyChecklist);
    write_checklist(&h, "# Heartbeat\n\n## Later\n\n");
    let tick = heartbeat(&h, Arc::new(SystemClock))
        .tick(None, &CancellationToken::new())
        .await;
    assert_eq!(tick, Tick::EmptyChecklist);
    assert_eq!(fake.hits(CHAT), 0);
}

#[tokio::test]
async fn a_tick_sends_the_checklist_as_a_heartbeat_turn() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, |_| {});
    write_checklist(&h, "# Heartbeat\n- remind me to drink water\n");
    fake.push_reply(Reply::text(
        "Drink some water: it has been a while since the last glass.",
    ));
    let tick = heartbeat(&h, Arc::new(SystemClock))
        .tick(None, &CancellationToken::new())
        .await;
    assert_eq!(tick, Tick::Sent { deferred: false });
    let events = h.turn("heartbeat").await;
    assert_eq!(
        final_text(&events).as_deref(),
        Some("Drink some water: it has been a while since the last glass.")
    );
    let sent = fake.requests_to(CHAT)[0].to_string();
    assert!(sent.contains("remind me to drink water"), "{sent}");
    assert!(sent.contains("HEARTBEAT_OK"), "{sent}");
}

#[tokio::test]
async fn heartbeat_ok_at_the_start_or_end_is_dropped_everywhere() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, |_| {});
    for reply in [
        "HEARTBEAT_OK",
        "HEARTBEAT_OK - nothing new.",
        "All quiet today. **HEARTBEAT_OK**",
    ] {
        fake.push_reply(Reply::text(reply));
        send_heartbeat(&h);
        let events = h.turn("heartbeat").await;
        assert_eq!(final_text(&events), None, "{reply}: {events:?}");
        assert!(
            !events.iter().any(|e| matches!(e, EventKind::Delta(_))),
            "{reply} streamed: {events:?}"
        );
    }
    let log = h.daily_log().await;
    assert!(
        !log.contains("HEARTBEAT_OK") && !log.contains("All quiet"),
        "{log}"
    );
    // The transcript keeps what the model said (its history stays true).
    let transcript = h.transcript("heartbeat");
    assert!(transcript.iter().any(|r| r["content"] == "HEARTBEAT_OK"));
}

#[tokio::test]
async fn news_next_to_the_token_or_a_token_in_the_middle_is_delivered() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, |_| {});
    let news = "The nightly backup failed at 03:12; the disk is full.";
    fake.push_reply(Reply::text(&format!("{news}\nHEARTBEAT_OK")));
    send_heartbeat(&h);
    assert_eq!(
        final_text(&h.turn("heartbeat").await).as_deref(),
        Some(news)
    );
    assert!(h.daily_log().await.contains(news));

    let middle = "Usually I would say HEARTBEAT_OK but the server is down.";
    fake.push_reply(Reply::text(middle));
    send_heartbeat(&h);
    assert_eq!(
        final_text(&h.turn("heartbeat").await).as_deref(),
        Some(middle)
    );
}

#[tokio::test]
async fn outside_active_hours_nothing_is_sent() {
    let fake = FakeLlama::start().await;
    let h = start(&fake, |_| {});
    write_checklist(&h, "- check the mail\n");
    let now = Utc::now().with_timezone(&Local);
    let later = |hours: i64| {
        (now + chrono::Duration::hours(hours))
            .format("%H:%M")
            .to_string()
    };
    let away = ActiveHours::parse(&format!("{}-{}", later(2), later(3))).unwrap();
    let here = ActiveHours::parse(&format!("{}-{}", later(-1), later(1))).unwrap();
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::starting_at(Utc::now()));
    let beat = heartbeat(&h, clock);
    let stop = CancellationToken::new();
    assert_eq!(beat.tick(away, &stop).await, Tick::OutsideActiveHours);
    assert_eq!(fake.hits(CHAT), 0);
    fake.push_reply(Reply::text("HEARTBEAT_OK"));
    assert_eq!(beat.tick(here, &stop).await, Tick::Sent { deferred: false });
    wait_requests(&fake, 1).await;
}

#[tokio::test]
async fn a_tick_while_the_agent_is_busy_waits_instead_of_queueing() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, |_| {});
    write_checklist(&h, "- check the mail\n");
    fake.push_reply(Reply::hang());
    h.send("tui-1", "a long task");
    wait_requests(&fake, 1).await;
    assert!(h.agent.busy());

    let beat = heartbeat(&h, Arc::new(SystemClock));
    let stop = CancellationToken::new();
    let tick = beat.tick(None, &stop);
    tokio::pin!(tick);
    // While the TUI turn runs the tick holds back: nothing is queued.
    let early = tokio::time::timeout(Duration::from_millis(300), &mut tick).await;
    assert!(early.is_err(), "the tick went ahead: {early:?}");
    assert_eq!(fake.hits(CHAT), 1);

    fake.push_reply(Reply::text("HEARTBEAT_OK"));
    assert!(h.agent.submit(Op::Interrupt {
        session: "tui-1".into()
    }));
    assert_eq!(tick.await, Tick::Sent { deferred: true });
    let events = h.turn("heartbeat").await;
    assert_eq!(fake.hits(CHAT), 2);
    assert!(
        !events.iter().any(|e| matches!(e, EventKind::Queued(_))),
        "a heartbeat was queued behind a busy agent: {events:?}"
    );
}
