//! The three kinds of schedule and when each runs next: `at` (once, an ISO
//! time or "20m" from now), `every` (a fixed interval) and `cron` (a
//! 5-field expression, in a named time zone or the machine's).

use std::str::FromStr;

use anyhow::{Context, Result, anyhow, bail};
use chrono::{DateTime, Local, NaiveDateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use crate::config::parse_duration;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Schedule {
    /// Once, at this instant; the job is removed after it succeeds.
    At { at: DateTime<Utc> },
    /// Every interval ("30m", "1h"), counted from the last run.
    Every { every: String },
    /// A 5-field cron expression; `tz` is an IANA zone ("Europe/Berlin"),
    /// none: the machine's local time.
    Cron {
        expr: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tz: Option<String>,
    },
}

/// How far ahead a job may be scheduled. Durations are parsed without a
/// bound, and chrono panics on a time past its range.
const MAX_AHEAD: std::time::Duration = std::time::Duration::from_secs(10 * 366 * 24 * 3600);

/// `from + after`, for `after` up to [`MAX_AHEAD`]; an error, never a panic.
fn add(from: DateTime<Utc>, after: std::time::Duration) -> Result<DateTime<Utc>> {
    if after > MAX_AHEAD {
        bail!("that is more than 10 years ahead");
    }
    let after = chrono::Duration::from_std(after).context("duration too long")?;
    from.checked_add_signed(after)
        .ok_or_else(|| anyhow!("that time is out of range"))
}

impl Schedule {
    /// `at`: an RFC 3339 time ("2026-03-01T09:00:00+01:00"), a local time
    /// without offset ("2026-03-01 09:00"), or a duration from now ("20m").
    pub fn at(text: &str, now: DateTime<Utc>) -> Result<Self> {
        let text = text.trim();
        if let Ok(after) = parse_duration(text) {
            return Ok(Schedule::At {
                at: add(now, after)?,
            });
        }
        if let Ok(at) = DateTime::parse_from_rfc3339(text) {
            return Ok(Schedule::At {
                at: at.with_timezone(&Utc),
            });
        }
        for format in [
            "%Y-%m-%dT%H:%M:%S",
            "%Y-%m-%dT%H:%M",
            "%Y-%m-%d %H:%M:%S",
            "%Y-%m-%d %H:%M",
        ] {
            if let Ok(naive) = NaiveDateTime::parse_from_str(text, format) {
                let local = Local
                    .from_local_datetime(&naive)
                    .earliest()
                    .ok_or_else(|| anyhow!("`{text}` does not exist in local time (a DST gap)"))?;
                return Ok(Schedule::At {
                    at: local.with_timezone(&Utc),
                });
            }
        }
        bail!(
            "invalid time `{text}` (use e.g. \"20m\", \"2026-03-01 09:00\" or \"2026-03-01T09:00:00+01:00\")"
        )
    }

    pub fn every(text: &str) -> Result<Self> {
        let interval = parse_duration(text).map_err(|e| anyhow!(e))?;
        if interval < std::time::Duration::from_secs(1) {
            bail!("`every` must be at least 1s");
        }
        if interval > MAX_AHEAD {
            bail!("`every` must be at most 10 years");
        }
        Ok(Schedule::Every {
            every: text.trim().to_string(),
        })
    }

    pub fn cron(expr: &str, tz: Option<&str>) -> Result<Self> {
        let schedule = Schedule::Cron {
            expr: expr.split_whitespace().collect::<Vec<_>>().join(" "),
            tz: tz
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string),
        };
        // Checked now, so a stored job always has a computable next run.
        schedule.next_after(Utc::now(), None)?;
        Ok(schedule)
    }

    /// When the job runs next, counting from `now`; `last_run` anchors
    /// `every`. `None`: never again (a one-shot that has run).
    pub fn next_after(
        &self,
        now: DateTime<Utc>,
        last_run: Option<DateTime<Utc>>,
    ) -> Result<Option<DateTime<Utc>>> {
        match self {
            Schedule::At { at } => Ok(last_run.is_none().then_some(*at)),
            Schedule::Every { every } => {
                let interval = parse_duration(every).map_err(|e| anyhow!(e))?;
                Ok(Some(add(last_run.unwrap_or(now), interval)?))
            }
            Schedule::Cron { expr, tz } => {
                let fields = expr.split_whitespace().count();
                if fields != 5 {
                    bail!(
                        "cron expression `{expr}` has {fields} fields; use 5 (minute hour day month weekday)"
                    );
                }
                let cron = croner::Cron::from_str(expr)
                    .map_err(|e| anyhow!("invalid cron expression `{expr}`: {e}"))?;
                let next = match tz {
                    Some(name) => {
                        let zone: chrono_tz::Tz = name
                            .parse()
                            .map_err(|_| anyhow!("unknown time zone `{name}` (use an IANA name such as \"Europe/Berlin\")"))?;
                        cron.find_next_occurrence(&now.with_timezone(&zone), false)
                            .map(|t| t.with_timezone(&Utc))
                    }
                    None => cron
                        .find_next_occurrence(&now.with_timezone(&Local), false)
                        .map(|t| t.with_timezone(&Utc)),
                };
                next.map(Some)
                    .map_err(|e| anyhow!("cron expression `{expr}` has no next run: {e}"))
            }
        }
    }

    pub fn is_one_shot(&self) -> bool {
        matches!(self, Schedule::At { .. })
    }

    /// As people read it: `at 2026-03-01 09:00 UTC`, `every 30m`,
    /// `cron 0 8 * * 1-5 Europe/Berlin`.
    pub fn describe(&self) -> String {
        match self {
            Schedule::At { at } => format!("at {}", at.format("%Y-%m-%d %H:%M UTC")),
            Schedule::Every { every } => format!("every {every}"),
            Schedule::Cron { expr, tz: Some(tz) } => format!("cron {expr} {tz}"),
            Schedule::Cron { expr, tz: None } => format!("cron {expr}"),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn absurd_durations_are_errors_not_panics() {
        let now = Utc::now();
        assert!(Schedule::at("100000000d", now).is_err());
        assert!(Schedule::every("100000000d").is_err());
        let stored = Schedule::Every {
            every: "100000000d".into(),
        };
        assert!(stored.next_after(now, None).is_err());
        assert!(Schedule::at("3650d", now).is_ok());
    }

    use super::*;

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn at_takes_relative_and_absolute_times() {
        let now = utc("2026-05-01T10:00:00Z");
        assert_eq!(
            Schedule::at("20m", now).unwrap(),
            Schedule::At {
                at: utc("2026-05-01T10:20:00Z")
            }
        );
        assert_eq!(
            Schedule::at("2026-05-02T08:00:00+02:00", now).unwrap(),
            Schedule::At {
                at: utc("2026-05-02T06:00:00Z")
            }
        );
        assert!(Schedule::at("2026-05-02 08:00", now).is_ok());
        assert!(Schedule::at("tomorrow-ish", now).is_err());
        let at = Schedule::at("1h", now).unwrap();
        assert_eq!(
            at.next_after(now, None).unwrap(),
            Some(utc("2026-05-01T11:00:00Z"))
        );
        assert_eq!(at.next_after(now, Some(now)).unwrap(), None);
    }

    #[test]
    fn every_counts_from_the_last_run() {
        let now = utc("2026-05-01T10:00:00Z");
        let every = Schedule::every("90m").unwrap();
        assert_eq!(
            every.next_after(now, None).unwrap(),
            Some(utc("2026-05-01T11:30:00Z"))
        );
        assert_eq!(
            every
                .next_after(now, Some(utc("2026-05-01T09:45:00Z")))
                .unwrap(),
            Some(utc("2026-05-01T11:15:00Z"))
        );
        assert!(Schedule::every("soon").is_err());
        assert!(Schedule::every("0").is_err());
    }

    #[test]
    fn cron_in_a_named_zone() {
        let cron = Schedule::cron("0 8 * * 1-5", Some("Europe/Berlin")).unwrap();
        // Friday 2026-05-01 07:00 UTC is 09:00 in Berlin (CEST): next is Monday 08:00 CEST.
        assert_eq!(
            cron.next_after(utc("2026-05-01T07:00:00Z"), None).unwrap(),
            Some(utc("2026-05-04T06:00:00Z"))
        );
        assert!(Schedule::cron("0 8 * *", None).is_err());
        assert!(Schedule::cron("0 8 * * *", Some("Mars/Olympus")).is_err());
        assert!(Schedule::cron("61 8 * * *", None).is_err());
    }

    #[test]
    fn cron_across_daylight_saving_changes() {
        // New York springs forward on 2026-03-08: 02:30 does not exist that
        // day, so the 02:30 job runs at the first instant after the gap
        // (03:00 EDT = 07:00 UTC), and at 02:30 EDT the day after.
        let cron = Schedule::cron("30 2 * * *", Some("America/New_York")).unwrap();
        let before_gap = utc("2026-03-08T06:00:00Z"); // 01:00 EST
        let first = cron.next_after(before_gap, None).unwrap().unwrap();
        assert_eq!(first, utc("2026-03-08T07:00:00Z"));
        assert_eq!(
            cron.next_after(first, Some(first)).unwrap(),
            Some(utc("2026-03-09T06:30:00Z"))
        );
        // Falling back on 2026-11-01, 01:30 happens twice; a daily job runs once.
        let cron = Schedule::cron("30 1 * * *", Some("America/New_York")).unwrap();
        let first = cron
            .next_after(utc("2026-11-01T04:00:00Z"), None)
            .unwrap()
            .unwrap();
        assert_eq!(first, utc("2026-11-01T05:30:00Z")); // 01:30 EDT
        assert_eq!(
            cron.next_after(first, Some(first)).unwrap(),
            Some(utc("2026-11-02T06:30:00Z")) // 01:30 EST the next day
        );
    }
}
