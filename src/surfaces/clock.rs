//! Wall-clock time for the proactive surfaces: the heartbeat (a standing
//! checklist read every so often, `heartbeat`) and cron jobs (messages to
//! the agent on a schedule, `cron`). Both are surfaces like any other: they
//! only send `Op`s to the core and read its events.

use std::time::Duration;

use chrono::{DateTime, Utc};

/// Wall-clock time for the schedulers, injectable so tests can move it.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;
}

/// The system's clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// Wall time that moves with tokio's clock: under a paused runtime
/// (`tokio::time::pause`), advancing tokio's time advances this clock by
/// the same amount, so schedules can be tested without waiting.
pub struct TokioClock {
    base: DateTime<Utc>,
    start: tokio::time::Instant,
}

impl TokioClock {
    pub fn starting_at(base: DateTime<Utc>) -> Self {
        Self {
            base,
            start: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> DateTime<Utc> {
        let elapsed = chrono::Duration::from_std(self.start.elapsed()).unwrap_or_default();
        self.base + elapsed
    }
}

/// A scheduler never sleeps longer than this, so that a changed wall clock
/// (suspend, NTP) or a job added by another process is seen soon.
pub const MAX_SLEEP: Duration = Duration::from_secs(60);

/// How long to sleep until `at` by `clock`, at most [`MAX_SLEEP`].
pub fn sleep_for(clock: &dyn Clock, at: DateTime<Utc>) -> Duration {
    (at - clock.now())
        .to_std()
        .unwrap_or(Duration::ZERO)
        .min(MAX_SLEEP)
}
