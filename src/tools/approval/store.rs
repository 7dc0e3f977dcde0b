//! What approvals remember: one grant type, one map of per-session grants,
//! and the approvals file (`.egirl/approvals.toml`) that "always" writes.
//!
//! The file ([`file`]) keeps one list per kind of grant (`allow` for exec
//! rules, `hosts`, `mcp`) and when each was added. It is read at each check,
//! so a grant another egirl approved "always", or one `egirl approvals
//! revoke` removed, counts at once. Every rewrite merges with what is on
//! disk, under the file's lock.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::file::{self, RulesFile};
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
pub(crate) enum GrantKind {
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

    pub(super) fn kind(&self) -> GrantKind {
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

/// A grant remembered for one session, with when.
#[derive(Clone, Debug)]
pub(super) struct SessionGrant {
    pub(super) grant: Grant,
    /// RFC 3339, UTC.
    pub(super) added: String,
}

/// The grants remembered by "session" and "always".
pub(super) struct Store {
    path: PathBuf,
    /// The approvals file as last read well: what the checks use when a
    /// later read fails (exec rules and hosts; an unreadable file never
    /// widens MCP grants).
    saved: Mutex<RulesFile>,
    session: Mutex<HashMap<SessionId, Vec<SessionGrant>>>,
}

impl Store {
    /// Reads the approvals file (a missing file is no grants; an unreadable
    /// one is logged and ignored, which only means more questions).
    pub(super) fn load(path: PathBuf) -> Self {
        let saved = file::read(&path).unwrap_or_else(|e| {
            tracing::warn!("ignoring the approvals file: {e}");
            RulesFile::default()
        });
        Self {
            path,
            saved: Mutex::new(saved),
            session: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The approvals file as it is now. Read at each check (the file is
    /// small): a rule another egirl saved, or `egirl approvals revoke`
    /// removed, counts at once.
    pub(super) fn file(&self, kind: GrantKind) -> RulesFile {
        match file::read(&self.path) {
            Ok(file) => {
                *lock(&self.saved) = file.clone();
                file
            }
            Err(e) => {
                tracing::warn!("ignoring the approvals file: {e}");
                match kind {
                    GrantKind::McpTool => RulesFile::default(),
                    _ => lock(&self.saved).clone(),
                }
            }
        }
    }

    /// The remembered grants of `kind` that apply to `session`: the file's,
    /// then the session's.
    pub(super) fn list(&self, kind: GrantKind, session: &str) -> Vec<(String, Source)> {
        let saved = self.file(kind).list(kind).clone();
        let mut out: Vec<(String, Source)> = saved.into_iter().map(|g| (g, Source::File)).collect();
        out.extend(
            self.session_grants(session)
                .into_iter()
                .filter(|g| g.grant.kind() == kind)
                .map(|g| (g.grant.text().to_string(), Source::Session)),
        );
        out
    }

    /// The grants `session` remembers, oldest first.
    pub(super) fn session_grants(&self, session: &str) -> Vec<SessionGrant> {
        lock(&self.session)
            .get(session)
            .cloned()
            .unwrap_or_default()
    }

    /// The first remembered grant of `kind` that `covers` accepts.
    pub(super) fn find(
        &self,
        kind: GrantKind,
        session: &str,
        covers: impl Fn(&str) -> bool,
    ) -> Option<(String, Source)> {
        self.list(kind, session)
            .into_iter()
            .find(|(grant, _)| covers(grant))
    }

    pub(super) fn remember_for_session(&self, session: &str, grant: Grant) {
        let mut sessions = lock(&self.session);
        let grants = sessions.entry(session.to_string()).or_default();
        if !grants.iter().any(|g| g.grant == grant) {
            grants.push(SessionGrant {
                grant,
                added: now(),
            });
        }
    }

    /// Forgets a session grant; false when the session did not hold it.
    pub(super) fn forget_for_session(&self, session: &str, grant: &Grant) -> bool {
        let mut sessions = lock(&self.session);
        let Some(grants) = sessions.get_mut(session) else {
            return false;
        };
        let before = grants.len();
        grants.retain(|g| &g.grant != grant);
        grants.len() != before
    }

    /// Adds a grant to the approvals file, merging with what is on disk now
    /// (another egirl process may have written it since we read it).
    pub(super) fn save(&self, grant: &Grant) -> Result<(), String> {
        file::add(&self.path, grant.kind(), grant.text(), &now())?;
        self.file(grant.kind());
        Ok(())
    }

    /// Removes a grant from the approvals file; false when it was not there.
    pub(super) fn unsave(&self, grant: &Grant) -> Result<bool, String> {
        let removed = file::remove(&self.path, grant.kind(), grant.text())?;
        self.file(grant.kind());
        Ok(removed)
    }
}

/// Now, as the approvals file and `/approvals` write it.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Reads the exec rules of an approvals file; a missing file has none.
pub fn read_rules_file(path: &Path) -> Result<Vec<String>, String> {
    file::read(path).map(|file| file.allow)
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
        // The lists as files without dates had them, then when each grant was added.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(
                "# Approved with \"always\": command prefixes (allow, matched against the parsed argv) and web_fetch hosts.\n\
                 allow = [\"git status\"]\n\
                 hosts = [\"example.com\"]\n\
                 mcp = [\"mcp__fs__write_file\"]\n"
            ),
            "{text}"
        );
        for (table, grant) in [
            ("allow", "git status"),
            ("hosts", "example.com"),
            ("mcp", "mcp__fs__write_file"),
        ] {
            let dates: toml::Value = toml::from_str(&text).unwrap();
            let date = dates["added"][table][grant].as_str().unwrap_or_default();
            assert!(date.starts_with("20"), "{text}");
        }
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
