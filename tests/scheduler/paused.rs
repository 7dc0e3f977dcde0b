//! The scheduler in virtual time (tokio's paused clock, which the
//! scheduler's `TokioClock` follows): a job fires when due, never before,
//! and a failed run is retried after the first backoff step. The agent's
//! local server is a closed port, so every run fails at once.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use egirl::config::{Config, CronConfig, Delivery};
use egirl::cron::{CronStore, Job, Schedule};
use egirl::protocol::{EventKind, Origin};
use egirl::surfaces::clock::{Clock, TokioClock};
use egirl::surfaces::cron::{CronScheduler, retry_delay};
use tokio_util::sync::CancellationToken;

#[tokio::test(start_paused = true)]
async fn a_job_fires_when_due_and_a_failure_is_retried_after_backoff() {
    let dir = tempfile::tempdir().unwrap();
    let (workspace, _) = egirl::workspace::ensure(&dir.path().join("ws")).unwrap();
    let mut config = Config::default();
    config.local.endpoint = "http://127.0.0.1:9".into();
    let (agent, _core) = egirl::agent::spawn(config, workspace.clone(), Vec::new());
    let mut events = agent.bus.subscribe();

    let start: DateTime<Utc> = "2026-05-01T10:00:00Z".parse().unwrap();
    let clock = Arc::new(TokioClock::starting_at(start));
    let due = start + chrono::Duration::minutes(90);
    let store = CronStore::in_workspace(&workspace);
    store
        .add(Job {
            id: "report".into(),
            schedule: Schedule::every("1d").unwrap(),
            message: "send the report".into(),
            deliver: Delivery::Tui,
            enabled: true,
            created_at: start,
            next_run: Some(due),
            last_run: None,
            last_status: None,
            consecutive_errors: 0,
        })
        .unwrap();
    let stop = CancellationToken::new();
    CronScheduler {
        agent: agent.clone(),
        agent_name: None,
        store: store.clone(),
        config: CronConfig::default(),
        clock: clock.clone(),
    }
    .spawn(stop.clone());

    let mut started_at = Vec::new();
    while started_at.len() < 2 {
        let event = tokio::time::timeout(Duration::from_secs(4 * 3600), events.recv())
            .await
            .expect("the job ran within 4 virtual hours")
            .expect("bus open");
        if event.session == "cron-report"
            && event.origin == Origin::Cron("report".into())
            && matches!(event.kind, EventKind::TurnStarted(_))
        {
            started_at.push(clock.now());
        }
    }
    assert!(started_at[0] >= due, "ran early: {started_at:?}");
    let retry = chrono::Duration::from_std(retry_delay(1)).unwrap();
    assert!(
        started_at[1] >= started_at[0] + retry,
        "retried before the backoff: {started_at:?}"
    );
    let job = store.load().unwrap().remove(0);
    assert!(job.consecutive_errors >= 1, "{job:?}");
    // The retry has started: running, with the first failure counted.
    let status = job.last_status.unwrap_or_default();
    assert!(
        status == egirl::surfaces::cron::RUNNING || status.starts_with("error:"),
        "{status}"
    );
    stop.cancel();
}

#[tokio::test(start_paused = true)]
async fn the_heartbeat_ticks_once_per_interval() {
    let dir = tempfile::tempdir().unwrap();
    let (workspace, _) = egirl::workspace::ensure(&dir.path().join("ws")).unwrap();
    std::fs::write(workspace.join("HEARTBEAT.md"), "- check the mail\n").unwrap();
    let mut config = Config::default();
    config.local.endpoint = "http://127.0.0.1:9".into();
    let (agent, _core) = egirl::agent::spawn(config, workspace.clone(), Vec::new());
    let mut events = agent.bus.subscribe();
    let stop = CancellationToken::new();
    let heartbeat = egirl::surfaces::heartbeat::Heartbeat {
        agent: agent.clone(),
        agent_name: None,
        config: egirl::config::HeartbeatConfig::default(),
        workspace,
        clock: Arc::new(TokioClock::starting_at(Utc::now())),
    }
    .spawn(stop.clone())
    .expect("enabled by default");

    // Two hours and a minute of virtual time: ticks at 30, 60, 90, 120 min.
    let window = tokio::time::sleep(Duration::from_secs(2 * 3600 + 60));
    tokio::pin!(window);
    let mut ticks = 0;
    loop {
        tokio::select! {
            _ = &mut window => break,
            Some(event) = events.recv() => {
                if event.origin == Origin::Heartbeat
                    && matches!(event.kind, EventKind::TurnStarted(_))
                {
                    ticks += 1;
                }
            }
        }
    }
    assert_eq!(ticks, 4);
    stop.cancel();
    let _ = heartbeat.await;
}
