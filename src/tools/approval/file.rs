//! The approvals file, `.egirl/approvals.toml`: one list per kind of grant
//! (`allow` for exec rules, `hosts`, `mcp`), and an `[added]` table with
//! when each was added (`[added.allow]`, `"git status" = "2026-…Z"`).
//!
//! A file written before dates were kept has no `[added]` and still loads.
//! Every change (a grant added, one revoked) is a read-modify-write of the
//! text as it is on disk now, under the file's lock (`approvals.lock` beside
//! it, so two egirl processes and `egirl approvals revoke` never lose each
//! other's rules), edited in place so the user's comments and the other
//! rules stay as they were, then written atomically.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::store::GrantKind;

/// The first line of a file egirl creates.
const HEADER: &str = "# Approved with \"always\": command prefixes (allow, matched against the parsed argv) and web_fetch hosts.\n";

/// The approvals file as it reads: `allow = ["git status", "cargo test"]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RulesFile {
    #[serde(default)]
    pub(super) allow: Vec<String>,
    /// Hosts `web_fetch` may reach without asking (`p` on a web request).
    #[serde(default)]
    pub(super) hosts: Vec<String>,
    /// MCP tools approved with "always", by full name (`mcp__fs__write_file`).
    #[serde(default)]
    pub(super) mcp: Vec<String>,
    /// When each grant was added, per list; a grant missing here was added
    /// before dates were kept.
    #[serde(default)]
    added: Added,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Added {
    #[serde(default)]
    allow: BTreeMap<String, String>,
    #[serde(default)]
    hosts: BTreeMap<String, String>,
    #[serde(default)]
    mcp: BTreeMap<String, String>,
}

impl RulesFile {
    pub(super) fn list(&self, kind: GrantKind) -> &Vec<String> {
        match kind {
            GrantKind::ExecRule => &self.allow,
            GrantKind::Host => &self.hosts,
            GrantKind::McpTool => &self.mcp,
        }
    }

    /// When `grant` of `kind` was added (RFC 3339), if the file says.
    pub(super) fn added(&self, kind: GrantKind, grant: &str) -> Option<String> {
        let dates = match kind {
            GrantKind::ExecRule => &self.added.allow,
            GrantKind::Host => &self.added.hosts,
            GrantKind::McpTool => &self.added.mcp,
        };
        dates.get(grant).cloned()
    }
}

/// The list's key in the file.
fn key(kind: GrantKind) -> &'static str {
    match kind {
        GrantKind::ExecRule => "allow",
        GrantKind::Host => "hosts",
        GrantKind::McpTool => "mcp",
    }
}

/// The whole approvals file (every kind of grant); missing: empty.
pub(super) fn read(path: &Path) -> Result<RulesFile, String> {
    let text = read_text(path)?;
    toml::from_str(&text).map_err(|e| invalid(path, &text, &e))
}

/// One line for an unreadable file: where and why, without the quoted
/// source and caret that `toml`'s own text spreads over several lines.
fn invalid(path: &Path, text: &str, e: &toml::de::Error) -> String {
    let message: Vec<&str> = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let message = message.join("; ");
    match e.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!(
                "{} is not valid (line {line}, column {column}): {message}",
                path.display()
            )
        }
        None => format!("{} is not valid: {message}", path.display()),
    }
}

fn read_text(path: &Path) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Adds `grant` to the list of `kind`, dated `added`, unless it is there
/// already (another egirl may have saved it since we read the file).
pub(super) fn add(path: &Path, kind: GrantKind, grant: &str, added: &str) -> Result<(), String> {
    edit(path, "could not save the approval", |doc| {
        let list = array(doc, key(kind))?;
        if !list.iter().any(|v| v.as_str() == Some(grant)) {
            list.push(grant);
            dates(doc, kind)?.insert(grant, toml_edit::value(added));
        }
        Ok(true)
    })
    .map(|_| ())
}

/// Removes `grant` from the list of `kind` (and its date); false when the
/// file did not hold it (then the file is not rewritten).
pub(super) fn remove(path: &Path, kind: GrantKind, grant: &str) -> Result<bool, String> {
    edit(path, "could not revoke the approval", |doc| {
        let list = array(doc, key(kind))?;
        let before = list.len();
        list.retain(|v| v.as_str() != Some(grant));
        if list.len() == before {
            return Ok(false);
        }
        dates(doc, kind)?.remove(grant);
        Ok(true)
    })
}

/// Runs `change` on the file as it is on disk, under its lock, and writes
/// the result atomically when `change` says it changed something.
fn edit(
    path: &Path,
    what: &str,
    change: impl FnOnce(&mut toml_edit::DocumentMut) -> Result<bool, String>,
) -> Result<bool, String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{what}: cannot create {}: {e}", dir.display()))?;
    }
    let _lock = crate::fsutil::lockfile::FileLock::acquire(&path.with_extension("lock"))
        .map_err(|e| format!("{what}: {e:#}"))?;
    let text = read_text(path)?;
    // Checked as the checks read it first: an invalid file is never
    // rewritten (the user's text would be lost).
    read(path)?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| format!("{} is not valid: {e}", path.display()))?;
    if !change(&mut doc).map_err(|e| format!("{what}: {e}"))? {
        return Ok(false);
    }
    let mut body = doc.to_string();
    if text.trim().is_empty() {
        body = format!("{HEADER}{body}");
    }
    crate::fsutil::atomic::write_atomic(path, body.as_bytes())
        .map_err(|e| format!("{what} to {}: {e}", path.display()))?;
    Ok(true)
}

/// The array under `key`, created when missing.
fn array<'d>(
    doc: &'d mut toml_edit::DocumentMut,
    key: &str,
) -> Result<&'d mut toml_edit::Array, String> {
    if !doc.contains_key(key) {
        // Printed before the `[added]` tables: toml_edit writes the root's
        // values first.
        doc.insert(key, toml_edit::value(toml_edit::Array::new()));
    }
    doc.get_mut(key)
        .and_then(|item| item.as_array_mut())
        .ok_or_else(|| format!("`{key}` is not a list"))
}

/// The `[added.<kind>]` table, created when missing.
fn dates(
    doc: &mut toml_edit::DocumentMut,
    kind: GrantKind,
) -> Result<&mut toml_edit::Table, String> {
    let added = doc
        .entry("added")
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        })
        .as_table_mut()
        .ok_or("`added` is not a table")?;
    added
        .entry(key(kind))
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_mut()
        .ok_or_else(|| format!("`added.{}` is not a table", key(kind)))
}
