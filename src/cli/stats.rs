//! `egirl stats [--json] [--days N] [--agent NAME]`: totals from
//! `.egirl/usage.jsonl` per day, per provider/model, per session for
//! today and, when the config declares agents, per agent (each agent's
//! log is in its own workspace: all of them are read).

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{Local, NaiveDate};
use serde::Serialize;

use crate::config::{Config, DEFAULT_AGENT};
use crate::print;
use crate::usage::budget::{Budget, Period};
use crate::usage::usage_log::{self, UsageLine};

#[derive(Debug, clap::Args)]
pub struct StatsArgs {
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Only the last N days (today included).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub days: Option<u32>,
    /// Only this agent's usage (its workspace's log).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
}

pub use crate::usage::totals::Totals;

#[derive(Debug, Serialize)]
pub struct DayRow {
    pub date: NaiveDate,
    #[serde(flatten)]
    pub totals: Totals,
}

#[derive(Debug, Serialize)]
pub struct ModelRow {
    pub provider: String,
    pub model: String,
    #[serde(flatten)]
    pub totals: Totals,
}

#[derive(Debug, Serialize)]
pub struct SessionRow {
    pub session: String,
    pub origin: String,
    #[serde(flatten)]
    pub totals: Totals,
}

/// What `--json` prints.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Local date (YYYY-MM-DD) the report counts as today.
    pub today: NaiveDate,
    pub days: Vec<DayRow>,
    pub models: Vec<ModelRow>,
    /// Today's sessions.
    pub sessions: Vec<SessionRow>,
    pub total: Totals,
    /// Remote spend against `[remote] budget_day_usd` / `budget_month_usd`
    /// (only the caps that are set).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub budget: Vec<Period>,
    /// Per agent, when the config declares agents (`--agent`: that one).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub agents: BTreeMap<String, Totals>,
}

/// Days are local calendar days, the ones the user lives in.
pub fn report(lines: &[UsageLine], today: NaiveDate, days: Option<u32>) -> Report {
    let first_day = days.map(|n| today - chrono::Days::new(u64::from(n.saturating_sub(1))));
    let mut by_day: BTreeMap<NaiveDate, Totals> = BTreeMap::new();
    let mut by_model: BTreeMap<(String, String), Totals> = BTreeMap::new();
    let mut by_session: BTreeMap<String, (String, Totals)> = BTreeMap::new();
    let mut total = Totals::default();
    for line in lines {
        let date = line.ts.with_timezone(&Local).date_naive();
        if first_day.is_some_and(|first| date < first) {
            continue;
        }
        by_day.entry(date).or_default().add(line);
        by_model
            .entry((line.provider.clone(), line.model.clone()))
            .or_default()
            .add(line);
        if date == today {
            by_session
                .entry(line.session.clone())
                .or_insert_with(|| (line.origin.clone(), Totals::default()))
                .1
                .add(line);
        }
        total.add(line);
    }
    Report {
        today,
        days: by_day
            .into_iter()
            .map(|(date, totals)| DayRow { date, totals })
            .collect(),
        models: by_model
            .into_iter()
            .map(|((provider, model), totals)| ModelRow {
                provider,
                model,
                totals,
            })
            .collect(),
        sessions: by_session
            .into_iter()
            .map(|(session, (origin, totals))| SessionRow {
                session,
                origin,
                totals,
            })
            .collect(),
        total,
        budget: Vec::new(),
        agents: BTreeMap::new(),
    }
}

/// The lines of the days `report` counts (`--days`), for one agent's sums.
fn in_days(lines: &[UsageLine], today: NaiveDate, days: Option<u32>) -> Totals {
    let first_day = days.map(|n| today - chrono::Days::new(u64::from(n.saturating_sub(1))));
    Totals::of(lines.iter().filter(|line| {
        let date = line.ts.with_timezone(&Local).date_naive();
        first_day.is_none_or(|first| date >= first)
    }))
}

/// Each agent's usage log: the one workspace's without agents (then
/// `--agent` may only name `default`), every agent's with them, or the
/// one `--agent` names. `None` for a log not written yet.
type AgentLogs = Vec<(String, Option<Vec<UsageLine>>)>;

fn read_logs(config: &Config, workspace: &Path, only: Option<&str>) -> anyhow::Result<AgentLogs> {
    if let Some(name) = only.filter(|n| !config.knows_agent(n)) {
        anyhow::bail!(
            "unknown agent {name}: the agents are {}",
            config.agent_names().join(", ")
        );
    }
    if !config.has_agents() {
        return Ok(vec![(
            DEFAULT_AGENT.to_string(),
            usage_log::read(workspace)?,
        )]);
    }
    let mut logs = Vec::new();
    for name in config.agent_names() {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        // `default`'s workspace is the one this run uses (`--workspace`).
        let dir = match name == DEFAULT_AGENT {
            true => workspace.to_path_buf(),
            false => config.agent_workspace(&name),
        };
        let read = usage_log::read(&dir)?;
        logs.push((name, read));
    }
    Ok(logs)
}

pub fn run(config: &Config, workspace: &Path, args: &StatsArgs) -> anyhow::Result<()> {
    let now = crate::usage::now();
    let today = now.with_timezone(&Local).date_naive();
    let logs = read_logs(config, workspace, args.agent.as_deref())?;
    let recorded = logs.iter().any(|(_, read)| read.is_some());
    let lines: Vec<UsageLine> = logs
        .iter()
        .flat_map(|(_, read)| read.iter().flatten().cloned())
        .collect();
    let mut report = report(&lines, today, args.days);
    if config.has_agents() {
        report.agents = logs
            .iter()
            .map(|(name, read)| {
                let lines = read.as_deref().unwrap_or_default();
                (name.clone(), in_days(lines, today, args.days))
            })
            .collect();
    }
    // Whatever `--days` shows, the caps count their own day and month
    // (the process's spend: every agent's).
    let spent = match args.agent {
        Some(_) => read_logs(config, workspace, None)?
            .into_iter()
            .flat_map(|(_, read)| read.unwrap_or_default())
            .collect(),
        None => lines,
    };
    report.budget = Budget::from_lines(&config.remote, &spent, now)
        .map(|b| b.periods)
        .unwrap_or_default();
    if !recorded && !args.json {
        let missing = match config.has_agents() {
            true => "no agent's .egirl/usage.jsonl exists".to_string(),
            false => format!("{} does not exist", usage_log::path(workspace).display()),
        };
        print::out(&format!(
            "no usage recorded yet ({missing})\n{}",
            budget_line(&report.budget)
        ))?;
        return Ok(());
    }
    if args.json {
        print::out_json(&serde_json::to_string(&report)?)?;
    } else {
        print::out(&render(&report))?;
    }
    Ok(())
}

fn render(report: &Report) -> String {
    let mut out = String::new();
    if report.total.requests == 0 {
        out.push_str("no usage recorded in this period\n");
        out.push_str(&budget_line(&report.budget));
        return out;
    }
    let header = "requests  local  tokens in  tokens out   cached     cost USD";
    out.push_str(&format!("per day\n  {:<10}  {header}\n", "date"));
    for row in &report.days {
        out.push_str(&format!("  {:<10}  {}\n", row.date, columns(&row.totals)));
    }
    out.push_str(&format!(
        "\nper provider/model\n  {:<32}  {header}\n",
        "model"
    ));
    for row in &report.models {
        let name = format!("{}/{}", row.provider, row.model);
        out.push_str(&format!("  {name:<32}  {}\n", columns(&row.totals)));
    }
    out.push_str(&format!(
        "\nsessions today ({})\n  {:<32}  {header}\n",
        report.today, "session"
    ));
    if report.sessions.is_empty() {
        out.push_str("  (none)\n");
    }
    for row in &report.sessions {
        out.push_str(&format!(
            "  {:<32}  {}\n",
            row.session,
            columns(&row.totals)
        ));
    }
    if !report.agents.is_empty() {
        out.push_str(&format!("\nper agent\n  {:<32}  {header}\n", "agent"));
        for (name, totals) in &report.agents {
            out.push_str(&format!("  {name:<32}  {}\n", columns(totals)));
        }
    }
    out.push_str(&format!(
        "\n  {:<10}  {}\n",
        "total",
        columns(&report.total)
    ));
    out.push_str(&budget_line(&report.budget));
    out
}

/// "budget (remote): day 1.20/2.00 USD · month 9.50/30.00 USD", with
/// what a spent cap means; empty without caps.
fn budget_line(periods: &[Period]) -> String {
    if periods.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = periods.iter().map(Period::shown).collect();
    let spent = match periods.iter().any(Period::exhausted) {
        true => " (spent: remote models are off until it resets)",
        false => "",
    };
    format!("\nbudget (remote): {}{spent}\n", shown.join(" · "))
}

fn columns(t: &Totals) -> String {
    format!(
        "{:>8}  {:>4.0}%  {:>9}  {:>10}  {:>7}  {:>11.4}",
        t.requests,
        t.local_share * 100.0,
        t.input_tokens,
        t.output_tokens,
        t.cached_tokens,
        t.cost_usd
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(ts: &str, session: &str, provider: &str, cost: f64) -> UsageLine {
        UsageLine {
            ts: ts.parse().unwrap(),
            session: session.into(),
            origin: "cli".into(),
            provider: provider.into(),
            model: "m".into(),
            local: provider == "llamacpp",
            input_tokens: 10,
            output_tokens: 5,
            cached_tokens: 1,
            cost_usd: cost,
            tokens_per_sec: None,
            latency_ms: None,
        }
    }

    #[test]
    fn days_filter_counts_back_from_today() {
        // Noon UTC is the same calendar day in nearly every time zone.
        let lines = [
            line("2025-03-01T12:00:00Z", "a", "llamacpp", 0.0),
            line("2025-03-03T12:00:00Z", "b", "anthropic", 0.5),
            line("2025-03-03T12:00:00Z", "b", "llamacpp", 0.0),
        ];
        let today = NaiveDate::from_ymd_opt(2025, 3, 3).unwrap();
        let all = report(&lines, today, None);
        assert_eq!(all.days.len(), 2);
        assert_eq!(all.total.requests, 3);
        let recent = report(&lines, today, Some(1));
        assert_eq!(recent.days.len(), 1);
        assert_eq!(recent.total.requests, 2);
        assert_eq!(recent.total.local_share, 0.5);
        assert_eq!(recent.sessions.len(), 1);
        assert_eq!(recent.sessions[0].totals.cost_usd, 0.5);
        assert!(render(&recent).contains("anthropic/m"));
    }
}
