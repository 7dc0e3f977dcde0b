//! `egirl skills list [--json]`: the skills found, with their gating status
//! (available; unavailable with the reason; broken with file:line).

use std::path::Path;

use serde::Serialize;

use crate::config::SkillsConfig;
use crate::print;
use crate::skills::{Registry, Snapshot};

#[derive(Debug, clap::Args)]
pub struct SkillsArgs {
    #[command(subcommand)]
    pub command: SkillsCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum SkillsCommand {
    /// Discovered skills with gating status.
    List {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// One row of `--json` (docs/cli.md).
#[derive(Debug, Serialize)]
pub struct Row {
    pub name: String,
    pub description: String,
    pub path: String,
    pub available: bool,
    pub reason: Option<String>,
    pub error: Option<String>,
}

/// The skills, then the broken files, each in name order.
pub fn rows(snapshot: &Snapshot) -> Vec<Row> {
    let loaded = snapshot.skills.iter().map(|s| Row {
        name: s.name.clone(),
        description: s.description.clone(),
        path: s.path.display().to_string(),
        available: s.available(),
        reason: s.unavailable.clone(),
        error: None,
    });
    let broken = snapshot.broken.iter().map(|b| Row {
        name: b.name.clone(),
        description: String::new(),
        path: b.path.display().to_string(),
        available: false,
        reason: None,
        error: Some(format!("line {}: {}", b.line, b.error)),
    });
    loaded.chain(broken).collect()
}

pub fn run(config: &SkillsConfig, workspace: &Path, args: &SkillsArgs) -> anyhow::Result<()> {
    let SkillsCommand::List { json } = args.command;
    let registry = Registry::load(config, workspace);
    let snapshot = registry.snapshot();
    if json {
        let out = serde_json::json!({ "skills": rows(&snapshot) });
        print::out_json(&serde_json::to_string(&out)?)?;
    } else {
        print::out(&render(&snapshot, &registry))?;
    }
    Ok(())
}

fn render(snapshot: &Snapshot, registry: &Registry) -> String {
    let mut out = String::new();
    let searched = registry
        .dirs()
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if snapshot.skills.is_empty() && snapshot.broken.is_empty() {
        out.push_str(&format!("no skills found (searched {searched})\n"));
        return out;
    }
    let width = snapshot
        .skills
        .iter()
        .map(|s| s.name.chars().count())
        .chain(snapshot.broken.iter().map(|b| b.name.chars().count()))
        .max()
        .unwrap_or(0);
    let available: Vec<_> = snapshot.available().collect();
    if !available.is_empty() {
        out.push_str(&format!("available ({})\n", available.len()));
        for s in available {
            let user_only = if s.model_invocable {
                ""
            } else {
                " (slash command only)"
            };
            out.push_str(&format!(
                "  {:<width$}  {}{user_only}\n  {:<width$}  {}\n",
                s.name, s.description, "", s.location
            ));
        }
    }
    let unavailable: Vec<_> = snapshot.skills.iter().filter(|s| !s.available()).collect();
    if !unavailable.is_empty() {
        out.push_str(&format!("unavailable ({})\n", unavailable.len()));
        for s in unavailable {
            out.push_str(&format!(
                "  {:<width$}  {}\n  {:<width$}  {}\n",
                s.name,
                s.unavailable.as_deref().unwrap_or_default(),
                "",
                s.location
            ));
        }
    }
    if !snapshot.broken.is_empty() {
        out.push_str(&format!("broken ({})\n", snapshot.broken.len()));
        for b in &snapshot.broken {
            out.push_str(&format!("  {:<width$}  {}\n", b.name, b.message()));
        }
    }
    out.push_str(&format!("searched {searched}\n"));
    out
}
