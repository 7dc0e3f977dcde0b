//! `/stats`: usage totals read from the usage logs (`.egirl/usage.jsonl`,
//! what `egirl stats` reads): per agent when the config declares agents
//! (each agent's log is in its own workspace), else the one workspace's;
//! today's and all of it. The stats pane shows this run's events only.

use std::path::PathBuf;

use chrono::Local;

use super::app::App;
use super::conversation::Level;
use super::feeds::tokens;
use crate::usage::totals::Totals;
use crate::usage::usage_log::{self, UsageLine};

impl App {
    /// `/stats`: one line per agent (or one for the workspace).
    pub(super) fn stats_command(&mut self) {
        let workspaces = self.usage_workspaces();
        if workspaces.is_empty() {
            self.notice(Level::Warning, "no workspace: usage unknown");
            return;
        }
        let today = crate::usage::now().with_timezone(&Local).date_naive();
        let width = workspaces.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        let mut lines = Vec::new();
        for (name, workspace) in &workspaces {
            let read = match usage_log::read(workspace) {
                Ok(read) => read.unwrap_or_default(),
                Err(e) => {
                    self.notice(Level::Error, format!("{e:#}"));
                    return;
                }
            };
            let is_today = |l: &&UsageLine| l.ts.with_timezone(&Local).date_naive() == today;
            let (day, all) = (Totals::of(read.iter().filter(is_today)), Totals::of(&read));
            lines.push(format!(
                "  {name:<width$}  today {} · all {}",
                shown(&day),
                shown(&all)
            ));
        }
        let title = match self.agents.enabled() {
            true => "usage by agent (egirl stats --agent NAME for more):",
            false => "usage (egirl stats for more):",
        };
        self.notice(Level::Info, format!("{title}\n{}", lines.join("\n")));
    }

    /// (name, workspace) of each usage log `/stats` reads.
    fn usage_workspaces(&self) -> Vec<(String, PathBuf)> {
        if self.agents.enabled() {
            let known: Vec<(String, PathBuf)> = self
                .agents
                .names()
                .iter()
                .filter_map(|n| Some((n.clone(), self.agents.directory.workspaces.get(n)?.clone())))
                .collect();
            if !known.is_empty() {
                return known;
            }
        }
        self.sessions_dir
            .as_deref()
            .and_then(std::path::Path::parent)
            .map(|w| vec![("workspace".to_string(), w.to_path_buf())])
            .unwrap_or_default()
    }
}

/// `3 req, 1.2k in, 300 out, $0.0123 (local 67%)`.
fn shown(t: &Totals) -> String {
    if t.requests == 0 {
        return "none".into();
    }
    format!(
        "{} req, {} in, {} out, ${:.4} (local {:.0}%)",
        t.requests,
        tokens(t.input_tokens),
        tokens(t.output_tokens),
        t.cost_usd,
        t.local_share * 100.0
    )
}
