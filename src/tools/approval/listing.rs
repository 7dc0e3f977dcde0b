//! The rules in force, as `/approvals` and `egirl approvals list` show
//! them, and revoking one by its id.
//!
//! A rule comes from the config (`[tools.exec] allow`, `[tools.web]
//! allow_domains`, `[delegate.claude_code] allowed_tools`: edited there,
//! never revoked from here), the approvals file ("always", with the date
//! it was added), or the session's memory. Its id is a short hash of kind,
//! rule and scope, so it is the same in every listing and every process.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::file;
use super::safe_commands::{self, Verdict};
use super::store::{GrantKind, SessionGrant};
use super::{Approver, Grant};
use crate::config::Config;
use crate::protocol::{ApprovalRule, ApprovalRuleKind, ApprovalScope};

/// Where a permanent rule is written, as listings say it.
pub const APPROVALS_FILE: &str = ".egirl/approvals.toml";

impl Approver {
    /// Every rule in force for `session`, grouped by kind: the config's,
    /// the approvals file's, then the session's within each group.
    pub fn rules_in_force(
        &self,
        session: &str,
        config: &Config,
    ) -> Result<Vec<ApprovalRule>, String> {
        let mut rules = config_rules(config);
        rules.extend(file_rules(self.store.path())?);
        rules.extend(self.store.session_grants(session).iter().map(session_rule));
        rules.sort_by_key(|r| r.kind);
        Ok(rules)
    }

    /// Revokes the rule `id` of [`Approver::rules_in_force`]: a session
    /// rule from memory, a permanent one from the approvals file. The
    /// revoked rule, or one line saying why not.
    pub fn revoke(&self, session: &str, id: &str, config: &Config) -> Result<ApprovalRule, String> {
        let rules = self.rules_in_force(session, config)?;
        let rule = find(rules, id)?;
        let grant = grant_of(&rule)?;
        let revoked = match rule.scope {
            ApprovalScope::Session => self.store.forget_for_session(session, &grant),
            _ => self.store.unsave(&grant)?,
        };
        if !revoked {
            return Err(format!("`{}` was already revoked", rule.rule));
        }
        Ok(rule)
    }
}

/// The config's rules and the approvals file's at `path` (what `egirl
/// approvals list` shows: session rules live in a running egirl).
pub fn permanent_rules(path: &Path, config: &Config) -> Result<Vec<ApprovalRule>, String> {
    let mut rules = config_rules(config);
    rules.extend(file_rules(path)?);
    rules.sort_by_key(|r| r.kind);
    Ok(rules)
}

/// Removes the approvals file's rule `id` (`egirl approvals revoke ID`).
pub fn revoke_permanent(path: &Path, id: &str, config: &Config) -> Result<ApprovalRule, String> {
    let rule = find(permanent_rules(path, config)?, id)?;
    let grant = grant_of(&rule)?;
    if !file::remove(path, grant.kind(), grant.text())? {
        return Err(format!("`{}` was already revoked", rule.rule));
    }
    Ok(rule)
}

/// The rule with `id`, or why there is none to revoke.
fn find(rules: Vec<ApprovalRule>, id: &str) -> Result<ApprovalRule, String> {
    let id = id.trim();
    rules
        .into_iter()
        .find(|r| r.id == id)
        .ok_or_else(|| format!("no approval rule has the id `{id}` (the list shows the ids)"))
}

/// The grant a revocable rule stands for; a config rule says where to
/// edit it instead.
fn grant_of(rule: &ApprovalRule) -> Result<Grant, String> {
    if rule.scope == ApprovalScope::Config {
        return Err(format!(
            "`{}` is set in the config ({}): remove it from egirl.toml",
            rule.rule, rule.source
        ));
    }
    Ok(match rule.kind {
        ApprovalRuleKind::ExecPrefix | ApprovalRuleKind::ExecArgv => {
            Grant::ExecRule(rule.rule.clone())
        }
        ApprovalRuleKind::Host => Grant::Host(rule.rule.clone()),
        ApprovalRuleKind::Mcp => Grant::McpTool(rule.rule.clone()),
        ApprovalRuleKind::Delegation => {
            return Err(format!("`{}` is not a remembered approval", rule.rule));
        }
    })
}

fn config_rules(config: &Config) -> Vec<ApprovalRule> {
    let config_rule = |kind, rule: &String, source: &str| {
        rule_of(kind, rule, ApprovalScope::Config, source, None)
    };
    let exec = config.tools.exec.allow.iter().map(|rule| {
        config_rule(
            ApprovalRuleKind::ExecPrefix,
            rule,
            "config [tools.exec] allow",
        )
    });
    let hosts = config.tools.web.allow_domains.iter().map(|host| {
        config_rule(
            ApprovalRuleKind::Host,
            host,
            "config [tools.web] allow_domains",
        )
    });
    let delegation = config
        .delegate
        .claude_code
        .allowed_tools
        .iter()
        .map(|tool| {
            config_rule(
                ApprovalRuleKind::Delegation,
                tool,
                "config [delegate.claude_code] allowed_tools",
            )
        });
    exec.chain(hosts).chain(delegation).collect()
}

fn file_rules(path: &Path) -> Result<Vec<ApprovalRule>, String> {
    let saved = file::read(path)?;
    let mut rules = Vec::new();
    for kind in [GrantKind::ExecRule, GrantKind::Host, GrantKind::McpTool] {
        for grant in saved.list(kind) {
            rules.push(rule_of(
                rule_kind(kind, grant),
                grant,
                ApprovalScope::Permanent,
                APPROVALS_FILE,
                saved.added(kind, grant),
            ));
        }
    }
    Ok(rules)
}

fn session_rule(grant: &SessionGrant) -> ApprovalRule {
    let text = grant.grant.text();
    rule_of(
        rule_kind(grant.grant.kind(), text),
        text,
        ApprovalScope::Session,
        "this session (in memory)",
        Some(grant.added.clone()),
    )
}

/// A remembered exec rule widens only within the read-only table
/// (`rules`): one the table accepts is a prefix, anything else covers its
/// exact argv.
fn rule_kind(kind: GrantKind, grant: &str) -> ApprovalRuleKind {
    match kind {
        GrantKind::Host => ApprovalRuleKind::Host,
        GrantKind::McpTool => ApprovalRuleKind::Mcp,
        GrantKind::ExecRule => match shell_words::split(grant) {
            Ok(argv) if safe_commands::judge(&argv, false) == Verdict::Safe => {
                ApprovalRuleKind::ExecPrefix
            }
            _ => ApprovalRuleKind::ExecArgv,
        },
    }
}

fn rule_of(
    kind: ApprovalRuleKind,
    rule: &str,
    scope: ApprovalScope,
    source: &str,
    added: Option<String>,
) -> ApprovalRule {
    ApprovalRule {
        id: rule_id(kind, rule, scope),
        kind,
        rule: rule.to_string(),
        scope,
        source: source.to_string(),
        added,
    }
}

/// Eight hex digits of SHA-256 over kind, rule and scope: stable across
/// processes and versions (unlike `std`'s hasher).
fn rule_id(kind: ApprovalRuleKind, rule: &str, scope: ApprovalScope) -> String {
    let kind = match kind {
        // One id for an exec rule whichever way the table judges it.
        ApprovalRuleKind::ExecPrefix | ApprovalRuleKind::ExecArgv => "exec",
        ApprovalRuleKind::Host => "host",
        ApprovalRuleKind::Mcp => "mcp",
        ApprovalRuleKind::Delegation => "delegation",
    };
    let digest = Sha256::digest(format!("{kind}\n{rule}\n{}", scope.name()));
    digest[..4].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
#[path = "listing_tests.rs"]
mod tests;
