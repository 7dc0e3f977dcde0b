//! What the proactive side looks like in the TUI: heartbeat, cron and
//! webhook answers with their badges (the heartbeat's standing prompt
//! hidden), and `/cron` listing the jobs with their next run.

use chrono::{Duration, Utc};
use crossterm::event::KeyCode;
use egirl::config::Delivery;
use egirl::cron::{CronStore, Job, Schedule};
use egirl::protocol::{EventKind, FinalAnswer, Origin, TurnEnded, TurnStarted};
use insta::assert_snapshot;

use super::*;

fn unattended_turn(session: &str, origin: Origin, asked: &str, answer: &str) -> Vec<Event> {
    let e = |kind| ev_from(session, origin.clone(), kind);
    vec![
        e(EventKind::TurnStarted(TurnStarted {
            text: asked.into(),
            ..Default::default()
        })),
        e(EventKind::Final(FinalAnswer {
            text: answer.into(),
        })),
        e(EventKind::TurnEnded(TurnEnded { interrupted: false })),
    ]
}

#[test]
fn heartbeat_cron_and_webhook_answers_carry_their_badges() {
    let mut app = app();
    let mut events = unattended_turn(
        "heartbeat",
        Origin::Heartbeat,
        "Heartbeat check. This is your standing checklist (HEARTBEAT.md): ...",
        "Your 15:00 meeting moved to 16:00.",
    );
    events.extend(unattended_turn(
        "cron-news",
        Origin::Cron("news".into()),
        "Summarize today's headlines in three bullets.",
        "- Rust 1.95 is out\n- Rain all week\n- Markets flat",
    ));
    events.extend(unattended_turn(
        "webhook-default",
        Origin::Webhook,
        "Webhook received: {\"alert\": \"disk 91%\"}",
        "The backup disk is 91% full; consider pruning old snapshots.",
    ));
    apply_all(&mut app, events);
    let shown = screen(&app, 100, 30);
    assert!(!shown.contains("standing checklist"), "{shown}");
    assert_snapshot!(shown);
}

fn job(id: &str, schedule: Schedule, next_run: Option<chrono::DateTime<Utc>>) -> Job {
    Job {
        id: id.into(),
        schedule,
        message: "m".into(),
        deliver: Delivery::Tui,
        enabled: next_run.is_some(),
        created_at: Utc::now(),
        next_run,
        last_run: None,
        last_status: None,
        consecutive_errors: 0,
    }
}

/// The local date of a next run depends on the day and the machine's
/// zone: blanked to a placeholder of the same width.
fn blank_dates(screen: &str) -> String {
    let mut out = String::new();
    let mut rest = screen;
    while let Some(at) = rest.find("next ") {
        let start = at + "next ".len();
        out.push_str(&rest[..start]);
        out.push_str("YYYY-MM-DD HH:MM");
        rest = rest.get(start + 16..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

#[test]
fn cron_command_lists_jobs_with_their_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = CronStore::in_workspace(dir.path());
    let now = Utc::now();
    let mut news = job(
        "news",
        Schedule::cron("0 8 * * 1-5", Some("Europe/Berlin")).unwrap(),
        Some(now + Duration::hours(2)),
    );
    news.last_status = Some("ok".into());
    store.add(news).unwrap();
    let mut flaky = job(
        "backup-check",
        Schedule::every("30m").unwrap(),
        Some(now + Duration::minutes(30)),
    );
    flaky.last_status = Some("error: local server unreachable".into());
    flaky.consecutive_errors = 2;
    store.add(flaky).unwrap();
    store
        .add(job(
            "once",
            Schedule::At {
                at: chrono::DateTime::parse_from_rfc3339("2026-01-05T09:00:00Z")
                    .unwrap()
                    .with_timezone(&Utc),
            },
            None,
        ))
        .unwrap();

    let mut app = app();
    app.sessions_dir = Some(dir.path().join("sessions"));
    type_text(&mut app, "/cron");
    press(&mut app, key(KeyCode::Enter));
    assert_snapshot!(blank_dates(&screen(&app, 120, 20)));
}
