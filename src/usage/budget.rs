//! Spend caps on the remote models: `[remote] budget_day_usd` and
//! `budget_month_usd`. What was spent is read from the usage log each time
//! (never kept in a counter of this process), so every process using the
//! workspace and every restart sees the same sums. Days and months are the
//! user's local calendar ones, as `egirl stats` counts them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Datelike, Local, Utc};

use super::usage_log::{self, UsageLine};
use crate::chat::Usage;
use crate::config::{Pricing, RemoteConfig};
pub use crate::protocol::wire::SpendPeriod as Period;

/// The share of a cap at which one notice says spending is close to it.
pub const WARN_SHARE: f64 = 0.8;

/// The capped periods now; none when no cap is set.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    pub periods: Vec<Period>,
    /// The local day, which keys the once-a-day notices.
    day: String,
}

impl Budget {
    /// The budget as the workspace's usage log has it at `now`; `None`
    /// without a cap. A log that cannot be read counts as nothing spent
    /// (with a warning): a broken stats file must not stop the agent.
    pub fn of(remote: &RemoteConfig, workspace: &Path, now: DateTime<Utc>) -> Option<Self> {
        remote.budget_day_usd.or(remote.budget_month_usd)?;
        let lines = usage_log::read(workspace)
            .map_err(|e| tracing::warn!("spend caps count nothing spent: {e:#}"))
            .ok()
            .flatten()
            .unwrap_or_default();
        Self::from_lines(remote, &lines, now)
    }

    /// The budget from these usage lines; `None` without a cap.
    pub fn from_lines(
        remote: &RemoteConfig,
        lines: &[UsageLine],
        now: DateTime<Utc>,
    ) -> Option<Self> {
        let now = now.with_timezone(&Local);
        let today = now.date_naive();
        let (mut day, mut month) = (0.0, 0.0);
        // Local models cost nothing real: only remote spend (Claude Code
        // delegation included, at the cost it reports) counts.
        for line in lines.iter().filter(|l| !l.local) {
            let date = line.ts.with_timezone(&Local).date_naive();
            if date.year() == today.year() && date.month() == today.month() {
                month += line.cost_usd;
                if date == today {
                    day += line.cost_usd;
                }
            }
        }
        let day_key = today.format("%Y-%m-%d").to_string();
        let mut periods = Vec::new();
        if let Some(cap) = remote.budget_day_usd {
            periods.push(period("day", &day_key, day, cap));
        }
        if let Some(cap) = remote.budget_month_usd {
            let key = today.format("%Y-%m").to_string();
            periods.push(period("month", &key, month, cap));
        }
        (!periods.is_empty()).then_some(Self {
            periods,
            day: day_key,
        })
    }

    /// The same budget after `usd` more was spent.
    pub fn spend(&mut self, usd: f64) {
        for p in &mut self.periods {
            p.spent_usd += usd;
        }
    }

    /// Why a remote request that may cost up to `estimate_usd` must not
    /// start (`budget: day 2.00/2.00 USD`); `None` when every cap allows it.
    pub fn refusal(&self, estimate_usd: f64) -> Option<String> {
        if let Some(p) = self.periods.iter().find(|p| p.exhausted()) {
            return Some(format!("budget: {}", p.shown()));
        }
        let p = self
            .periods
            .iter()
            .find(|p| p.spent_usd + estimate_usd > p.cap_usd)?;
        Some(format!(
            "budget: {}, a remote request may cost up to {estimate_usd:.2} USD",
            p.shown()
        ))
    }

    /// The first exhausted period, as `/remote` and the stats show it.
    pub fn exhausted(&self) -> Option<&Period> {
        self.periods.iter().find(|p| p.exhausted())
    }

    /// The notices due now that no process gave yet: one per period at
    /// 80% of its cap, and one a day once remote calls stop (`stopped`:
    /// the reason). Recorded in `.egirl/budget_notices.json`.
    pub fn due_notices(&self, workspace: &Path, stopped: Option<&str>) -> Vec<String> {
        let mut due = Vec::new();
        for p in &self.periods {
            if p.spent_usd >= WARN_SHARE * p.cap_usd && !p.exhausted() {
                let key = format!("{} {} 80", p.name, p.key);
                if first_time(workspace, &key, &self.day) {
                    due.push(format!(
                        "remote spend is at {:.0}% of the {}'s budget ({})",
                        100.0 * p.spent_usd / p.cap_usd.max(f64::MIN_POSITIVE),
                        p.name,
                        p.shown()
                    ));
                }
            }
        }
        if let Some(why) = stopped
            && first_time(workspace, &format!("stop {}", self.day), &self.day)
        {
            due.push(format!(
                "remote models are off ({why}): turns run locally until the budget resets"
            ));
        }
        due
    }

    /// Marks today's stop notice as given (after the user heard it another way).
    pub fn stop_noticed(&self, workspace: &Path) {
        first_time(workspace, &format!("stop {}", self.day), &self.day);
    }
}

/// What keeps a status's spend current: the caps, the workspace, and
/// the count of lines this process's usage log has written (the spend is
/// read again after each).
#[derive(Clone, Debug)]
pub struct SpendWatch {
    remote: RemoteConfig,
    workspace: PathBuf,
    pub written: tokio::sync::watch::Receiver<u64>,
}

impl SpendWatch {
    /// `None` without a cap.
    pub fn new(
        remote: &RemoteConfig,
        workspace: &Path,
        written: tokio::sync::watch::Receiver<u64>,
    ) -> Option<Self> {
        remote.budget_day_usd.or(remote.budget_month_usd)?;
        Some(Self {
            remote: remote.clone(),
            workspace: workspace.to_path_buf(),
            written,
        })
    }

    /// The capped periods as the log has them now.
    pub fn periods(&self) -> Vec<Period> {
        Budget::of(&self.remote, &self.workspace, super::now())
            .map(|b| b.periods)
            .unwrap_or_default()
    }
}

fn period(name: &str, key: &str, spent_usd: f64, cap_usd: f64) -> Period {
    Period {
        name: name.into(),
        key: key.into(),
        // An empty sum is -0.0, which would show as "-0.00".
        spent_usd: spent_usd + 0.0,
        cap_usd,
    }
}

/// Most a request may cost: `prompt_tokens` uncached at the input rate and
/// `max_output` at the output rate. 0 for a model without a price.
pub fn request_estimate(pricing: Option<&Pricing>, prompt_tokens: u64, max_output: u64) -> f64 {
    let usage = Usage {
        input_tokens: prompt_tokens,
        output_tokens: max_output,
        ..Default::default()
    };
    super::cost_usd(pricing, &usage)
}

fn notices_path(workspace: &Path) -> PathBuf {
    workspace.join(".egirl").join("budget_notices.json")
}

/// Whether `key` is new to the notices file (then it is added). Keys of
/// past days and months are dropped as it is rewritten. A file that cannot
/// be written makes every notice new: a repeated notice beats a lost one.
fn first_time(workspace: &Path, key: &str, today: &str) -> bool {
    let path = notices_path(workspace);
    let mut given: BTreeSet<String> = std::fs::read(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default();
    if given.contains(key) {
        return false;
    }
    let month = today.get(..7).unwrap_or(today).to_string();
    // "day 2026-11-26 80", "month 2026-11 80", "stop 2026-11-26".
    given.retain(|k| {
        k.split(' ')
            .nth(1)
            .is_some_and(|when| when == today || when == month)
    });
    given.insert(key.to_string());
    let written = serde_json::to_vec(&given)
        .map_err(std::io::Error::other)
        .and_then(|bytes| {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            crate::fsutil::atomic::write_atomic(&path, &bytes)
        });
    if let Err(e) = written {
        tracing::warn!("cannot write {}: {e}", path.display());
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(day: Option<f64>, month: Option<f64>) -> RemoteConfig {
        RemoteConfig {
            budget_day_usd: day,
            budget_month_usd: month,
            ..Default::default()
        }
    }

    fn line(ts: &str, local: bool, cost: f64) -> UsageLine {
        UsageLine {
            ts: ts.parse().unwrap(),
            session: "s".into(),
            origin: "cli".into(),
            provider: if local { "llamacpp" } else { "anthropic" }.into(),
            model: "m".into(),
            local,
            input_tokens: 0,
            output_tokens: 0,
            cached_tokens: 0,
            cost_usd: cost,
            tokens_per_sec: None,
            latency_ms: None,
        }
    }

    /// Noon UTC: the same local date in every zone from UTC-11 to UTC+11.
    fn noon(date: &str) -> DateTime<Utc> {
        format!("{date}T12:00:00Z").parse().unwrap()
    }

    #[test]
    fn no_cap_no_budget() {
        assert!(Budget::from_lines(&caps(None, None), &[], noon("2026-03-10")).is_none());
    }

    #[test]
    fn counts_remote_spend_of_the_day_and_month_only() {
        let lines = [
            line("2026-03-10T11:00:00Z", false, 1.0),
            line("2026-03-10T11:30:00Z", true, 5.0),
            line("2026-03-02T12:00:00Z", false, 3.0),
            line("2026-02-27T12:00:00Z", false, 7.0),
        ];
        let b =
            Budget::from_lines(&caps(Some(2.0), Some(10.0)), &lines, noon("2026-03-10")).unwrap();
        assert_eq!(b.periods[0].spent_usd, 1.0);
        assert_eq!(b.periods[1].spent_usd, 4.0);
        assert_eq!(b.refusal(0.5), None);
        let refused = b.refusal(1.5).unwrap();
        assert!(
            refused.starts_with("budget: day 1.00/2.00 USD"),
            "{refused}"
        );
    }

    #[test]
    fn an_exhausted_cap_says_so_plainly() {
        let lines = [line("2026-03-10T10:00:00Z", false, 2.0)];
        let b = Budget::from_lines(&caps(Some(2.0), None), &lines, noon("2026-03-10")).unwrap();
        assert_eq!(b.refusal(0.0).as_deref(), Some("budget: day 2.00/2.00 USD"));
        let next_day = Budget::from_lines(&caps(Some(2.0), None), &lines, noon("2026-03-11"));
        assert_eq!(next_day.unwrap().refusal(0.1), None);
    }

    #[test]
    fn notices_are_given_once() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [line("2026-03-10T10:00:00Z", false, 1.7)];
        let b = Budget::from_lines(&caps(Some(2.0), None), &lines, noon("2026-03-10")).unwrap();
        let first = b.due_notices(dir.path(), None);
        assert_eq!(first.len(), 1, "{first:?}");
        assert!(first[0].contains("85%"), "{first:?}");
        assert!(b.due_notices(dir.path(), None).is_empty());
        let stop = b.due_notices(dir.path(), Some("budget: day 1.70/2.00 USD"));
        assert_eq!(stop.len(), 1);
        assert!(b.due_notices(dir.path(), Some("x")).is_empty());
    }

    #[test]
    fn an_estimate_prices_the_whole_output() {
        let p = crate::usage::builtin_price("claude-sonnet-4-5").unwrap();
        let usd = request_estimate(Some(&p), 1_000, 8_192);
        assert!((usd - (1_000.0 * 3.0 + 8_192.0 * 15.0) / 1e6).abs() < 1e-9);
        assert_eq!(request_estimate(None, 1_000, 8_192), 0.0);
    }
}
