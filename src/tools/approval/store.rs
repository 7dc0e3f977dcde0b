//! What approvals remember: one grant type, one map of per-session grants,
//! and the approvals file (`.egirl/approvals.toml`) that "always" writes.
//!
//! The file keeps one list per kind of grant (`allow` for exec rules,
//! `hosts`, `mcp`). Exec rules and hosts are read once at start and
//! refreshed when this process saves one; MCP tools are read from the file
//! at each check, so a tool another egirl approved "always" is honoured at
//! once. Every rewrite merges with what is on disk under one lock.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::lock;
use crate::protocol::SessionId;

/// Something the user approved that can be remembered for a session or
/// always.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Grant {
    /// An `exec` rule: an argv prefix in shell words (`git status`),
    /// matched by [`super::rule_covers`], never as a string prefix.
    ExecRule(String),
    /// A host `web_fetch` may reach: lowercase, without a trailing dot.
    Host(String),
    /// One MCP tool by its full name (`mcp__fs__write_file`): never a
    /// prefix or a pattern.
    McpTool(String),
}

/// The kinds of [`Grant`], one list each in the approvals file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum GrantKind {
    ExecRule,
    Host,
    McpTool,
}

impl Grant {
    /// The rule, host or tool name, as the file and the messages show it.
    pub fn text(&self) -> &str {
        match self {
            Grant::ExecRule(text) | Grant::Host(text) | Grant::McpTool(text) => text,
        }
    }

    fn kind(&self) -> GrantKind {
        match self {
            Grant::ExecRule(_) => GrantKind::ExecRule,
            Grant::Host(_) => GrantKind::Host,
            Grant::McpTool(_) => GrantKind::McpTool,
        }
    }
}

/// Where a grant that covers a request comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `[tools.exec] allow` in the config.
    Config,
    /// The approvals file ("always").
    File,
    /// This session's approvals, kept in memory.
    Session,
}

impl Source {
    /// `config`, `file` or `session`, as `/approvals` and the messages say it.
    pub fn name(self) -> &'static str {
        match self {
            Source::Config => "config",
            Source::File => "file",
            Source::Session => "session",
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The approvals file: `allow = ["git status", "cargo test"]`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    allow: Vec<String>,
    /// Hosts `web_fetch` may reach without asking (`p` on a web request).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    hosts: Vec<String>,
    /// MCP tools approved with "always", by full name (`mcp__fs__write_file`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    mcp: Vec<String>,
}

impl RulesFile {
    fn list(&self, kind: GrantKind) -> &Vec<String> {
        match kind {
            GrantKind::ExecRule => &self.allow,
            GrantKind::Host => &self.hosts,
            GrantKind::McpTool => &self.mcp,
        }
    }

    fn list_mut(&mut self, kind: GrantKind) -> &mut Vec<String> {
        match kind {
            GrantKind::ExecRule => &mut self.allow,
            GrantKind::Host => &mut self.hosts,
            GrantKind::McpTool => &mut self.mcp,
        }
    }
}

/// The grants remembered by "session" and "always".
pub(super) struct Store {
    path: PathBuf,
    /// The approvals file as last read; the lock also serializes rewrites.
    saved: Mutex<RulesFile>,
    session: Mutex<HashMap<SessionId, Vec<Grant>>>,
}

impl Store {
    /// Reads the approvals file (a missing file is no grants; an unreadable
    /// one is logged and ignored, which only means more questions).
    pub(super) fn load(path: PathBuf) -> Self {
        let saved = read_rules(&path).unwrap_or_else(|e| {
            tracing::warn!("ignoring the approvals file: {e}");
            RulesFile::default()
        });
        Self {
            path,
            saved: Mutex::new(saved),
            session: Mutex::new(HashMap::new()),
        }
    }

    /// The remembered grants of `kind` that apply to `session`: the file's,
    /// then the session's.
    pub(super) fn list(&self, kind: GrantKind, session: &str) -> Vec<(String, Source)> {
        let saved = match kind {
            // Read each time: the file is small, and another egirl may have
            // approved the tool since.
            GrantKind::McpTool => match read_rules(&self.path) {
                Ok(file) => file.mcp,
                Err(e) => {
                    tracing::warn!("ignoring the approvals file: {e}");
                    Vec::new()
                }
            },
            _ => lock(&self.saved).list(kind).clone(),
        };
        let mut out: Vec<(String, Source)> = saved.into_iter().map(|g| (g, Source::File)).collect();
        if let Some(grants) = lock(&self.session).get(session) {
            out.extend(
                grants
                    .iter()
                    .filter(|g| g.kind() == kind)
                    .map(|g| (g.text().to_string(), Source::Session)),
            );
        }
        out
    }

    /// The first remembered grant of `kind` that `covers` accepts.
    pub(super) fn find(
        &self,
        kind: GrantKind,
        session: &str,
        covers: impl Fn(&str) -> bool,
    ) -> Option<(String, Source)> {
        // An MCP tool the session allowed is found without reading the
        // file, which `list` reads on every call for MCP grants.
        if kind == GrantKind::McpTool {
            let in_session = lock(&self.session).get(session).and_then(|grants| {
                grants
                    .iter()
                    .find(|g| g.kind() == kind && covers(g.text()))
                    .map(|g| (g.text().to_string(), Source::Session))
            });
            if in_session.is_some() {
                return in_session;
            }
        }
        self.list(kind, session)
            .into_iter()
            .find(|(grant, _)| covers(grant))
    }

    pub(super) fn remember_for_session(&self, session: &str, grant: Grant) {
        lock(&self.session)
            .entry(session.to_string())
            .or_default()
            .push(grant);
    }

    /// Adds a grant to the approvals file, merging with what is on disk now
    /// (another egirl process may have written it since we read it).
    pub(super) fn save(&self, grant: &Grant) -> Result<(), String> {
        let mut saved = lock(&self.saved);
        let mut file = read_rules(&self.path)?;
        let kind = grant.kind();
        if !file.list(kind).iter().any(|g| g == grant.text()) {
            file.list_mut(kind).push(grant.text().to_string());
        }
        write_rules(&self.path, &file)?;
        *saved.list_mut(kind) = file.list(kind).clone();
        Ok(())
    }
}

/// Reads the exec rules of an approvals file; a missing file has none.
pub fn read_rules_file(path: &Path) -> Result<Vec<String>, String> {
    read_rules(path).map(|file| file.allow)
}

/// The whole approvals file (every kind of grant); missing: empty.
fn read_rules(path: &Path) -> Result<RulesFile, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RulesFile::default()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    toml::from_str(&text).map_err(|e| format!("{} is not valid: {e}", path.display()))
}

/// Writes the approvals file whole (the caller holds the lock and read the
/// file just before).
fn write_rules(path: &Path, file: &RulesFile) -> Result<(), String> {
    let body = toml::to_string(file).map_err(|e| format!("could not save the approval: {e}"))?;
    let text = format!(
        "# Approved with \"always\": command prefixes (allow, matched against the parsed argv) and web_fetch hosts.\n{body}"
    );
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| {
            format!(
                "could not save the approval: cannot create {}: {e}",
                dir.display()
            )
        })?;
    }
    crate::fsutil::atomic::write_atomic(path, text.as_bytes())
        .map_err(|e| format!("could not save the approval to {}: {e}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_grant_is_saved_in_one_file_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".egirl/approvals.toml");
        let store = Store::load(path.clone());
        for grant in [
            Grant::ExecRule("git status".into()),
            Grant::Host("example.com".into()),
            Grant::McpTool("mcp__fs__write_file".into()),
            Grant::ExecRule("git status".into()),
        ] {
            store.save(&grant).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# Approved with \"always\": command prefixes (allow, matched against the parsed argv) and web_fetch hosts.\n\
             allow = [\"git status\"]\n\
             hosts = [\"example.com\"]\n\
             mcp = [\"mcp__fs__write_file\"]\n"
        );
        let reloaded = Store::load(path);
        reloaded.remember_for_session("s", Grant::Host("docs.rs".into()));
        let file = |text: &str| (text.to_string(), Source::File);
        assert_eq!(
            reloaded.list(GrantKind::Host, "s"),
            vec![file("example.com"), ("docs.rs".into(), Source::Session)]
        );
        assert_eq!(
            reloaded.list(GrantKind::Host, "other"),
            vec![file("example.com")]
        );
        assert_eq!(
            reloaded.list(GrantKind::ExecRule, "s"),
            vec![file("git status")]
        );
        assert_eq!(
            reloaded.list(GrantKind::McpTool, "s"),
            vec![file("mcp__fs__write_file")]
        );
    }
}
