//! The heartbeat: every `[heartbeat] every`, within `active_hours`, the
//! agent is handed the checklist in `HEARTBEAT.md` and asked whether
//! anything needs the owner. A checklist with nothing in it (blank lines,
//! headings, comments) skips the tick without calling a model; a reply
//! that is only `HEARTBEAT_OK` is dropped by the core; a tick that finds
//! the agent busy waits for it to be idle instead of queueing behind it.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, bail};
use chrono::{Local, NaiveTime, Timelike};
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use super::clock::Clock;
use crate::agent::{AgentHandle, HEARTBEAT_OK};
use crate::config::HeartbeatConfig;
use crate::protocol::{AgentName, Op, Origin};

pub const FILE: &str = "HEARTBEAT.md";

/// A daily window in local time; it may wrap past midnight ("22:00-06:00").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActiveHours {
    start: NaiveTime,
    end: NaiveTime,
}

impl ActiveHours {
    /// "" is always active (None); otherwise "HH:MM-HH:MM".
    pub fn parse(text: &str) -> Result<Option<Self>> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let bad = || format!("invalid active_hours `{text}` (use e.g. \"08:00-23:00\")");
        let Some((start, end)) = text.split_once('-') else {
            bail!(bad());
        };
        let time = |t: &str| match t.trim() {
            // "24:00" reads naturally as the end of the day.
            "24:00" => NaiveTime::from_hms_opt(23, 59, 59),
            t => NaiveTime::parse_from_str(t, "%H:%M").ok(),
        };
        match (time(start), time(end)) {
            (Some(start), Some(end)) if start != end => Ok(Some(Self { start, end })),
            _ => bail!(bad()),
        }
    }

    pub fn contains(&self, time: NaiveTime) -> bool {
        let time = time.with_nanosecond(0).unwrap_or(time);
        if self.start < self.end {
            self.start <= time && time < self.end
        } else {
            time >= self.start || time < self.end
        }
    }
}

/// The checklist, or None when it has nothing to act on (missing, blank,
/// only headings or HTML comments).
pub fn checklist(text: &str) -> Option<&str> {
    let mut in_comment = false;
    let has_content = text.lines().any(|line| {
        let mut line = line.trim();
        if in_comment {
            match line.find("-->") {
                Some(end) => {
                    in_comment = false;
                    line = line[end + 3..].trim();
                }
                None => return false,
            }
        }
        while let Some(start) = line.find("<!--") {
            match line[start..].find("-->") {
                Some(end) => {
                    let rest = &line[start + end + 3..];
                    if !line[..start].trim().is_empty() {
                        return true;
                    }
                    line = rest.trim();
                }
                None => {
                    in_comment = true;
                    line = line[..start].trim();
                    break;
                }
            }
        }
        !line.is_empty() && !line.starts_with('#')
    });
    has_content.then_some(text.trim())
}

/// What the agent is told each tick.
pub fn prompt(checklist: &str) -> String {
    format!(
        "Heartbeat check. This is your standing checklist ({FILE}):\n\n{checklist}\n\n\
         Follow it strictly; do not bring back old tasks from earlier chats. \
         If nothing needs the owner's attention, reply exactly {HEARTBEAT_OK}."
    )
}

/// What one tick did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tick {
    OutsideActiveHours,
    EmptyChecklist,
    /// Sent to the agent; `deferred`: it first waited for a busy agent.
    Sent {
        deferred: bool,
    },
    Stopped,
}

pub struct Heartbeat {
    pub agent: AgentHandle,
    /// The agent whose checklist this is (None: a config without agents).
    pub agent_name: Option<AgentName>,
    pub config: HeartbeatConfig,
    pub workspace: PathBuf,
    pub clock: Arc<dyn Clock>,
}

impl Heartbeat {
    /// Starts ticking; None when `every` is 0 (disabled) or the active
    /// hours do not parse (start-up reports that as a config error).
    pub fn spawn(self, stop: CancellationToken) -> Option<JoinHandle<()>> {
        if self.config.every.is_zero() {
            return None;
        }
        let hours = ActiveHours::parse(&self.config.active_hours).ok()?;
        Some(tokio::spawn(self.run(hours, stop)))
    }

    async fn run(self, hours: Option<ActiveHours>, stop: CancellationToken) {
        let every = self.config.every.0;
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        // A long deferral skips the ticks it covered instead of bursting them.
        ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                _ = stop.cancelled() => return,
            }
            let outcome = self.tick(hours, &stop).await;
            tracing::debug!(?outcome, "heartbeat tick");
            if outcome == Tick::Stopped {
                return;
            }
        }
    }

    /// One tick: checks the window and the checklist, waits out a busy
    /// agent, then sends the checklist.
    pub async fn tick(&self, hours: Option<ActiveHours>, stop: &CancellationToken) -> Tick {
        let local = self.clock.now().with_timezone(&Local).time();
        if hours.is_some_and(|h| !h.contains(local)) {
            return Tick::OutsideActiveHours;
        }
        if self.read_checklist().is_none() {
            return Tick::EmptyChecklist;
        }
        let deferred = self.agent.busy();
        if deferred {
            tracing::info!("heartbeat: the agent is busy; the tick waits for it");
            tokio::select! {
                _ = self.agent.idle() => {}
                _ = stop.cancelled() => return Tick::Stopped,
            }
        }
        // Read again: the wait may have been long and the file edited.
        let Some(text) = self.read_checklist() else {
            return Tick::EmptyChecklist;
        };
        let session = self.config.deliver.session("heartbeat");
        let op = Op::UserMessage {
            session,
            origin: Origin::Heartbeat,
            text: prompt(&text),
            images: Vec::new(),
        };
        if !super::routing::submit(&self.agent, self.agent_name.as_deref(), op) {
            return Tick::Stopped;
        }
        Tick::Sent { deferred }
    }

    fn read_checklist(&self) -> Option<String> {
        // Not through a link out of the workspace (`workspace::confined`).
        let text = crate::workspace::read_prompt_file(&self.workspace, FILE)?;
        checklist(&text).map(str::to_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).unwrap()
    }

    #[test]
    fn active_hours_within_a_day_and_across_midnight() {
        let day = ActiveHours::parse("08:00-23:00").unwrap().unwrap();
        assert!(day.contains(t(8, 0)) && day.contains(t(22, 59)));
        assert!(!day.contains(t(23, 0)) && !day.contains(t(7, 59)));
        let night = ActiveHours::parse("22:00-06:00").unwrap().unwrap();
        assert!(night.contains(t(23, 30)) && night.contains(t(5, 0)));
        assert!(!night.contains(t(12, 0)));
        assert_eq!(ActiveHours::parse("").unwrap(), None);
        for bad in ["8-23", "08:00", "25:00-26:00", "08:00-08:00"] {
            assert!(ActiveHours::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn headings_blank_lines_and_comments_are_an_empty_checklist() {
        assert_eq!(checklist(""), None);
        assert_eq!(checklist("# Heartbeat\n\n## Daily\n   \n"), None);
        assert_eq!(
            checklist("# Heartbeat\n<!-- add items here\nlike this -->\n"),
            None
        );
        assert_eq!(checklist("<!-- one line -->"), None);
        assert!(checklist("# Heartbeat\n- check the backup log\n").is_some());
        assert!(checklist("<!-- note --> check mail").is_some());
    }
}
