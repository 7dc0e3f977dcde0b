//! Cron: jobs from `.egirl/cron.json` (one store per agent, in its
//! workspace) sent to that agent when due, each
//! run's outcome written back (last status, errors in a row), failures
//! retried with backoff, one-shots removed after they succeed.
//!
//! Jobs that came due while egirl was not running run once at start
//! (`[cron] catch_up`), however many times they were missed.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::clock::{Clock, MAX_SLEEP, sleep_for};
use crate::agent::AgentHandle;
use crate::config::CronConfig;
use crate::cron::{CronStore, Job, store};
use crate::protocol::{AgentName, ErrorEvent, EventKind, Op, Origin, TurnEnded};

/// Waits before retrying a failed run: 30 s, 2 min, 10 min, then 30 min.
pub fn retry_delay(consecutive_errors: u32) -> Duration {
    const STEPS: [u64; 4] = [30, 120, 600, 1800];
    let i = (consecutive_errors.max(1) - 1) as usize;
    Duration::from_secs(STEPS[i.min(STEPS.len() - 1)])
}

/// How one run went.
#[derive(Clone, Debug, PartialEq)]
pub enum RunOutcome {
    Ok,
    Failed(String),
}

pub struct CronScheduler {
    pub agent: AgentHandle,
    /// The agent whose workspace holds `store` (None: a config without
    /// agents); its jobs run as that agent.
    pub agent_name: Option<AgentName>,
    pub store: CronStore,
    pub config: CronConfig,
    pub clock: Arc<dyn Clock>,
}

impl CronScheduler {
    pub fn spawn(self, stop: CancellationToken) -> JoinHandle<()> {
        tokio::spawn(self.run(stop))
    }

    async fn run(self, stop: CancellationToken) {
        if let Err(e) = self
            .store
            .update(|jobs| settle_missed(jobs, self.clock.now(), &self.config))
        {
            tracing::warn!("cron: {e:#}");
        }
        let (done_tx, mut done_rx) = mpsc::unbounded_channel::<(String, RunOutcome)>();
        let mut running: HashSet<String> = HashSet::new();
        loop {
            // Armed before reading, so a change made while we read wakes us.
            let notified = store::changed().notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let now = self.clock.now();
            let jobs = match self.store.load() {
                Ok(jobs) => jobs,
                Err(e) => {
                    tracing::warn!("cron: {e:#}");
                    Vec::new()
                }
            };
            let mut next_wake: Option<DateTime<Utc>> = None;
            let due: Vec<String> = jobs
                .iter()
                .filter(|j| j.enabled && !running.contains(&j.id))
                .filter(|j| j.next_run.is_some_and(|at| at <= now))
                .map(|j| j.id.clone())
                .collect();
            // Moved past `now` on disk before the run starts: a restart (or
            // a crash) during the run must not run it a second time.
            if !due.is_empty()
                && let Err(e) = self.store.update(|jobs| mark_started(jobs, &due, now))
            {
                tracing::warn!("cron: cannot mark jobs as started: {e:#}");
            }
            for job in jobs {
                if !job.enabled || running.contains(&job.id) {
                    continue;
                }
                let Some(due) = job.next_run else { continue };
                if due <= now {
                    running.insert(job.id.clone());
                    let (agent, done) = (self.agent.clone(), done_tx.clone());
                    let name = self.agent_name.clone();
                    tokio::spawn(async move {
                        let outcome = run_job(&agent, name.as_deref(), &job).await;
                        let _ = done.send((job.id, outcome));
                    });
                } else {
                    next_wake = Some(next_wake.map_or(due, |w| w.min(due)));
                }
            }
            let wait = next_wake.map_or(MAX_SLEEP, |at| sleep_for(self.clock.as_ref(), at));
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = notified => {}
                Some((id, outcome)) = done_rx.recv() => {
                    running.remove(&id);
                    let now = self.clock.now();
                    let max_retries = self.config.max_retries;
                    if let Err(e) = self.store.update(|jobs| record(jobs, &id, &outcome, now, max_retries)) {
                        tracing::warn!("cron: cannot record the run of `{id}`: {e:#}");
                    }
                }
                _ = stop.cancelled() => return,
            }
        }
    }
}

/// The status of a job whose run has started and not yet been recorded.
pub const RUNNING: &str = "running";

/// Before `ids` run: `last_run` is now, `next_run` the regular next time
/// (none for a one-shot), the status says it is running. `record` then
/// writes the outcome over this.
pub fn mark_started(jobs: &mut [Job], ids: &[String], now: DateTime<Utc>) {
    for job in jobs.iter_mut().filter(|j| ids.contains(&j.id)) {
        job.last_run = Some(now);
        job.last_status = Some(RUNNING.into());
        job.next_run = job.schedule.next_after(now, Some(now)).ok().flatten();
    }
}

/// At start: jobs due in the past run once now (catch-up) or move on to
/// their next time; a missed one-shot without catch-up is disabled and
/// says so rather than vanishing.
pub fn settle_missed(jobs: &mut [Job], now: DateTime<Utc>, config: &CronConfig) {
    for job in jobs.iter_mut().filter(|j| j.enabled) {
        // Stopped during its run: the run is not repeated (it may have done
        // its work); a one-shot says so and is kept, disabled.
        if job.last_status.as_deref() == Some(RUNNING) {
            job.last_status = Some("interrupted: egirl stopped during the run".into());
            if job.next_run.is_none() {
                job.enabled = false;
            }
        }
        let Some(due) = job.next_run else { continue };
        if due > now {
            continue;
        }
        if config.catch_up {
            tracing::info!(job = %job.id, "cron: running a job missed while egirl was not running");
            continue;
        }
        if job.schedule.is_one_shot() {
            job.enabled = false;
            job.last_status = Some("missed: egirl was not running".into());
        } else {
            job.next_run = job.schedule.next_after(now, None).ok().flatten();
        }
    }
}

/// Writes a run's outcome into the job (which may have been removed
/// meanwhile: then there is nothing to record).
pub fn record(
    jobs: &mut Vec<Job>,
    id: &str,
    outcome: &RunOutcome,
    now: DateTime<Utc>,
    max_retries: u32,
) {
    let Some(index) = jobs.iter().position(|j| j.id == id) else {
        return;
    };
    let job = &mut jobs[index];
    job.last_run = Some(now);
    let regular = job.schedule.next_after(now, Some(now)).unwrap_or_else(|e| {
        tracing::warn!(job = %id, "cron: {e:#}");
        None
    });
    match outcome {
        RunOutcome::Ok => {
            if job.schedule.is_one_shot() {
                jobs.remove(index);
                return;
            }
            job.last_status = Some("ok".into());
            job.consecutive_errors = 0;
            job.next_run = regular;
        }
        RunOutcome::Failed(why) => {
            job.consecutive_errors += 1;
            job.last_status = Some(format!("error: {why}"));
            tracing::warn!(job = %id, errors = job.consecutive_errors, "cron: run failed: {why}");
            if job.consecutive_errors > max_retries {
                job.next_run = regular;
                if job.schedule.is_one_shot() {
                    job.enabled = false;
                }
                return;
            }
            let retry = now
                + chrono::Duration::from_std(retry_delay(job.consecutive_errors))
                    .unwrap_or_default();
            job.next_run = Some(regular.map_or(retry, |r| r.min(retry)));
        }
    }
}

/// Sends the job's message (as `name`) and waits for its turn to end.
async fn run_job(agent: &AgentHandle, name: Option<&str>, job: &Job) -> RunOutcome {
    let session = job.session();
    let origin = Origin::Cron(job.id.clone());
    // Subscribed before sending, so the turn's events cannot be missed.
    let mut events = agent.bus.subscribe();
    let op = Op::UserMessage {
        session: session.clone(),
        origin: origin.clone(),
        text: job.message.clone(),
        images: Vec::new(),
    };
    let sent = super::routing::submit(agent, name, op);
    if !sent {
        return RunOutcome::Failed("the agent has stopped".into());
    }
    tracing::info!(job = %job.id, %session, "cron: job sent to the agent");
    let mut error = None;
    while let Some(event) = events.recv().await {
        // Another agent's job of the same name runs in a session of the
        // same id: its events name that agent.
        let other_agent = event.agent.is_some() && event.agent.as_deref() != name;
        if event.session != session || event.origin != origin || other_agent {
            continue;
        }
        match event.kind {
            EventKind::Error(ErrorEvent { message }) => error = Some(message),
            EventKind::TurnEnded(TurnEnded { interrupted: true }) => {
                return RunOutcome::Failed("interrupted".into());
            }
            EventKind::TurnEnded(TurnEnded { interrupted: false }) => {
                return error.map_or(RunOutcome::Ok, RunOutcome::Failed);
            }
            _ => {}
        }
    }
    RunOutcome::Failed("the agent stopped during the run".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Delivery;
    use crate::cron::Schedule;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn job(id: &str, schedule: Schedule, next: DateTime<Utc>) -> Job {
        Job {
            id: id.into(),
            schedule,
            message: "m".into(),
            deliver: Delivery::None,
            enabled: true,
            created_at: next,
            next_run: Some(next),
            last_run: None,
            last_status: None,
            consecutive_errors: 0,
        }
    }

    #[test]
    fn failures_back_off_then_wait_for_the_regular_time() {
        let now = at("2026-05-01T10:00:00Z");
        let mut jobs = vec![job("hourly", Schedule::every("1h").unwrap(), now)];
        let failed = RunOutcome::Failed("server down".into());
        record(&mut jobs, "hourly", &failed, now, 2);
        assert_eq!(jobs[0].next_run, Some(at("2026-05-01T10:00:30Z")));
        assert_eq!(jobs[0].last_status.as_deref(), Some("error: server down"));
        record(&mut jobs, "hourly", &failed, now, 2);
        assert_eq!(jobs[0].next_run, Some(at("2026-05-01T10:02:00Z")));
        record(&mut jobs, "hourly", &failed, now, 2);
        assert_eq!(jobs[0].consecutive_errors, 3);
        assert_eq!(jobs[0].next_run, Some(at("2026-05-01T11:00:00Z")));
        record(&mut jobs, "hourly", &RunOutcome::Ok, now, 2);
        assert_eq!(jobs[0].consecutive_errors, 0);
        assert_eq!(jobs[0].last_status.as_deref(), Some("ok"));
    }

    #[test]
    fn a_one_shot_is_removed_after_success_and_disabled_after_its_retries() {
        let now = at("2026-05-01T10:00:00Z");
        let once = Schedule::At { at: now };
        let mut jobs = vec![job("once", once.clone(), now), job("flaky", once, now)];
        record(&mut jobs, "once", &RunOutcome::Ok, now, 1);
        assert_eq!(jobs.len(), 1);
        let failed = RunOutcome::Failed("no".into());
        record(&mut jobs, "flaky", &failed, now, 1);
        assert!(jobs[0].enabled);
        assert_eq!(jobs[0].next_run, Some(at("2026-05-01T10:00:30Z")));
        record(&mut jobs, "flaky", &failed, now, 1);
        assert!(!jobs[0].enabled);
        assert_eq!(jobs[0].consecutive_errors, 2);
    }

    #[test]
    fn missed_jobs_without_catch_up_move_on_or_are_disabled() {
        let now = at("2026-05-01T10:00:00Z");
        let past = at("2026-05-01T07:00:00Z");
        let mut jobs = vec![
            job("hourly", Schedule::every("1h").unwrap(), past),
            job("once", Schedule::At { at: past }, past),
        ];
        let config = CronConfig {
            catch_up: false,
            ..CronConfig::default()
        };
        settle_missed(&mut jobs, now, &config);
        assert_eq!(jobs[0].next_run, Some(at("2026-05-01T11:00:00Z")));
        assert!(!jobs[1].enabled);
        assert!(
            jobs[1]
                .last_status
                .as_deref()
                .unwrap_or("")
                .contains("missed")
        );

        let mut jobs = vec![job("hourly", Schedule::every("1h").unwrap(), past)];
        settle_missed(&mut jobs, now, &CronConfig::default());
        assert_eq!(jobs[0].next_run, Some(past), "left due: runs once now");
    }
}
