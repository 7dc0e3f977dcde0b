//! `egirl approvals list [--json]` and `egirl approvals revoke ID`: the
//! permanent approval rules (the approvals file's, with the config's for
//! the whole picture) and revoking one from the shell. Session rules live
//! in the memory of the egirl process that runs the session: `/approvals`
//! there shows and revokes them. A revoked rule stops counting at once,
//! in a running egirl too (the checks read the file each time).

use std::path::Path;

use serde::Serialize;

use crate::config::Config;
use crate::print;
use crate::protocol::{ApprovalRule, ApprovalRuleKind, ApprovalScope};
use crate::tools::approval::{APPROVALS_FILE, permanent_rules, revoke_permanent};

/// Said under the list: where the other rules are.
const SESSION_NOTE: &str = "session rules live in the running egirl that holds the session: /approvals there lists and revokes them";

#[derive(Debug, clap::Args)]
pub struct ApprovalsArgs {
    #[command(subcommand)]
    pub command: ApprovalsCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum ApprovalsCommand {
    /// The permanent approval rules (and the config's), grouped by kind.
    List {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Remove a permanent rule from .egirl/approvals.toml.
    Revoke {
        /// The rule's id, as `egirl approvals list` shows it.
        id: String,
    },
}

#[derive(Serialize)]
struct Listing<'a> {
    file: String,
    rules: &'a [ApprovalRule],
    note: &'static str,
}

pub fn run(workspace: &Path, config: &Config, args: &ApprovalsArgs) -> anyhow::Result<()> {
    let path = workspace.join(APPROVALS_FILE);
    match &args.command {
        ApprovalsCommand::List { json } => {
            let rules = permanent_rules(&path, config).map_err(anyhow::Error::msg)?;
            if *json {
                let listing = Listing {
                    file: path.display().to_string(),
                    rules: &rules,
                    note: SESSION_NOTE,
                };
                print::out_json(&serde_json::to_string(&listing)?)?;
            } else {
                print::out(&render(&rules))?;
            }
        }
        ApprovalsCommand::Revoke { id } => {
            let rule = revoke_permanent(&path, id, config).map_err(anyhow::Error::msg)?;
            print::out(&format!(
                "revoked {} `{}`: removed from {}; the next request it covered asks again\n",
                rule.id,
                rule.rule,
                path.display()
            ))?;
        }
    }
    Ok(())
}

fn render(rules: &[ApprovalRule]) -> String {
    let mut out = String::new();
    if rules.is_empty() {
        out.push_str("no permanent approval rules (`p` on an approval request saves one)\n");
    }
    let width = rules
        .iter()
        .map(|r| r.rule.chars().count())
        .max()
        .unwrap_or(0);
    let mut group: Option<ApprovalRuleKind> = None;
    for rule in rules {
        if group != Some(rule.kind) {
            group = Some(rule.kind);
            out.push_str(&format!("{}:\n", rule.kind.heading()));
        }
        let when = match (&rule.added, rule.scope) {
            (_, ApprovalScope::Config) => String::new(),
            (Some(added), _) => format!(", added {}", local_time(added)),
            (None, _) => ", before dates were kept".into(),
        };
        out.push_str(&format!(
            "  {:<8}  {:<width$}  {} ({}{when})\n",
            rule.id,
            rule.rule,
            rule.scope.name(),
            rule.source
        ));
    }
    out.push_str(&format!("{SESSION_NOTE}\n"));
    out
}

fn local_time(rfc3339: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(rfc3339) {
        Ok(at) => at
            .with_timezone(&chrono::Local)
            .format("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => rfc3339.to_string(),
    }
}
