//! Cron runs against the agent: a job missed while egirl was down runs
//! once at start, jobs survive a restart, a failure is recorded and
//! retried later, a one-shot is removed after it succeeds.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use egirl::config::{CronConfig, Delivery};
use egirl::cron::{CronStore, Job, Schedule};
use egirl::protocol::{Op, Origin};
use egirl::surfaces::clock::TokioClock;
use egirl::surfaces::cron::{self, CronScheduler};
use tokio_util::sync::CancellationToken;

use super::CHAT;
use crate::agent::{Harness, final_text, start};
use crate::support::fake_llama::{FakeLlama, Reply};

fn job(id: &str, schedule: Schedule, next_run: DateTime<Utc>) -> Job {
    Job {
        id: id.into(),
        schedule,
        message: format!("job {id}: check the backups"),
        deliver: Delivery::Tui,
        enabled: true,
        created_at: next_run,
        next_run: Some(next_run),
        last_run: None,
        last_status: None,
        consecutive_errors: 0,
    }
}

/// Starts a scheduler whose clock reads `now` at start.
fn scheduler(h: &Harness, now: DateTime<Utc>) -> CancellationToken {
    let stop = CancellationToken::new();
    CronScheduler {
        agent: h.agent.clone(),
        agent_name: None,
        store: CronStore::in_workspace(&h.workspace),
        config: CronConfig::default(),
        clock: Arc::new(TokioClock::starting_at(now)),
    }
    .spawn(stop.clone());
    stop
}

/// Waits until the store shows `done` for job `id`.
async fn wait_store(store: &CronStore, done: impl Fn(Option<&Job>) -> bool) -> Vec<Job> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let jobs = store.load().unwrap();
        if done(jobs.first()) {
            return jobs;
        }
        assert!(tokio::time::Instant::now() < deadline, "store: {jobs:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_job_missed_while_down_runs_once_at_start() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, |_| {});
    let store = CronStore::in_workspace(&h.workspace);
    let now = Utc::now();
    // Due three hours ago and every hour since: one catch-up run, not three.
    let hourly = job(
        "hourly",
        Schedule::every("1h").unwrap(),
        now - chrono::Duration::hours(3),
    );
    store.add(hourly).unwrap();
    fake.push_reply(Reply::text("backups look fine"));
    let stop = scheduler(&h, now);
    let events = h.turn("cron-hourly").await;
    assert_eq!(final_text(&events).as_deref(), Some("backups look fine"));
    let jobs = wait_store(&store, |j| {
        j.is_some_and(|j| j.last_status.as_deref().is_some_and(|s| s != cron::RUNNING))
    })
    .await;
    assert_eq!(jobs[0].last_status.as_deref(), Some("ok"));
    assert!(jobs[0].next_run.is_some_and(|n| n > now), "{jobs:?}");
    assert_eq!(fake.hits(CHAT), 1);
    let transcript = h.transcript("cron-hourly");
    assert_eq!(transcript[0]["origin"], "cron:hourly");
    stop.cancel();
}

#[tokio::test]
async fn jobs_persist_across_a_restart_and_run_when_due() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, |_| {});
    let store = CronStore::in_workspace(&h.workspace);
    let now = Utc::now();
    let first = scheduler(&h, now);
    // Added through the agent's tool, as a user would.
    fake.push_replies([
        Reply::tool_calls(&[(
            "cron_add",
            r#"{"name": "water", "every": "2h", "message": "remind me to drink water"}"#,
        )]),
        Reply::text("scheduled"),
    ]);
    h.send("tui-1", "remind me to drink water every two hours");
    h.turn("tui-1").await;
    first.cancel();
    let saved = store.load().unwrap();
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].id, "water");

    // "Restart" two and a half hours later: a new scheduler finds it due.
    fake.push_reply(Reply::text("Time for a glass of water."));
    let second = scheduler(&h, now + chrono::Duration::minutes(150));
    let events = h.turn("cron-water").await;
    assert_eq!(
        final_text(&events).as_deref(),
        Some("Time for a glass of water.")
    );
    let sent = fake.requests_to(CHAT).last().unwrap().to_string();
    assert!(sent.contains("remind me to drink water"), "{sent}");
    second.cancel();
}

#[tokio::test]
async fn a_failed_run_is_recorded_and_retried_later() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, |_| {});
    let store = CronStore::in_workspace(&h.workspace);
    let now = Utc::now();
    store
        .add(job("report", Schedule::every("1d").unwrap(), now))
        .unwrap();
    fake.push_reply(Reply::status(500, "model crashed"));
    let stop = scheduler(&h, now);
    h.turn("cron-report").await;
    let jobs = wait_store(&store, |j| j.is_some_and(|j| j.consecutive_errors == 1)).await;
    let status = jobs[0].last_status.clone().unwrap_or_default();
    assert!(status.starts_with("error:"), "{status}");
    // Retried after the first backoff step, well before the next day.
    let retry = jobs[0].next_run.unwrap();
    assert!(
        retry > now && retry < now + chrono::Duration::hours(1),
        "{jobs:?}"
    );
    assert_eq!(fake.hits(CHAT), 1, "no immediate second attempt");
    stop.cancel();

    // When the retry comes due it runs again; success clears the count.
    fake.push_reply(Reply::text("report sent"));
    let stop = scheduler(&h, retry);
    h.turn("cron-report").await;
    let jobs = wait_store(&store, |j| j.is_some_and(|j| j.consecutive_errors == 0)).await;
    assert_eq!(jobs[0].last_status.as_deref(), Some("ok"));
    stop.cancel();
}

#[tokio::test]
async fn a_one_shot_is_removed_after_it_succeeds() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, |_| {});
    let store = CronStore::in_workspace(&h.workspace);
    let now = Utc::now();
    let at = Schedule::at("20m", now).unwrap();
    store
        .add(job("tea", at, now + chrono::Duration::minutes(20)))
        .unwrap();
    let stop = scheduler(&h, now + chrono::Duration::minutes(21));
    fake.push_reply(Reply::text("Your tea is ready."));
    let events = h.turn("cron-tea").await;
    assert_eq!(final_text(&events).as_deref(), Some("Your tea is ready."));
    wait_store(&store, |j| j.is_none()).await;
    stop.cancel();
}

#[tokio::test]
async fn discord_delivery_runs_in_the_channel_session() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, |_| {});
    let store = CronStore::in_workspace(&h.workspace);
    let now = Utc::now();
    let mut standup = job("standup", Schedule::every("1d").unwrap(), now);
    standup.deliver = Delivery::Discord("777".into());
    store.add(standup).unwrap();
    fake.push_reply(Reply::text("Stand-up in 5 minutes."));
    let stop = scheduler(&h, now);
    let event = loop {
        let event = h.next().await;
        if matches!(event.kind, egirl::protocol::EventKind::Final(_)) {
            break event;
        }
    };
    assert_eq!(event.session, "discord-777");
    assert_eq!(event.origin, Origin::Cron("standup".into()));
    stop.cancel();
    let _ = h.agent.submit(Op::Shutdown);
}

#[tokio::test]
async fn a_run_cut_short_by_a_restart_is_not_run_again() {
    let fake = FakeLlama::start().await;
    let h = start(&fake, |_| {});
    let store = CronStore::in_workspace(&h.workspace);
    let now = Utc::now();
    // As the store is left by a process that stopped during the runs: the
    // recurring job already moved on, the one-shot has no next run.
    let mut hourly = job("hourly", Schedule::every("1h").unwrap(), now);
    let mut once = job("once", Schedule::at("2026-01-01 09:00", now).unwrap(), now);
    cron::mark_started(
        std::slice::from_mut(&mut hourly),
        &["hourly".to_string()],
        now - chrono::Duration::minutes(5),
    );
    cron::mark_started(
        std::slice::from_mut(&mut once),
        &["once".to_string()],
        now - chrono::Duration::minutes(5),
    );
    assert!(hourly.next_run.is_some_and(|n| n > now));
    assert_eq!(once.next_run, None);
    store.add(hourly).unwrap();
    store.add(once).unwrap();

    let stop = scheduler(&h, now);
    let jobs = wait_store(&store, |j| {
        j.is_some_and(|j| j.last_status.as_deref() != Some(cron::RUNNING))
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(fake.hits(CHAT), 0, "nothing runs a second time");
    let jobs = if jobs.len() == 2 {
        store.load().unwrap()
    } else {
        jobs
    };
    let once = jobs.iter().find(|j| j.id == "once").expect("kept");
    assert!(!once.enabled);
    assert!(
        once.last_status
            .as_deref()
            .is_some_and(|s| s.starts_with("interrupted")),
        "{once:?}"
    );
    stop.cancel();
}
