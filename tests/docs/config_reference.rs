//! One configuration reference: docs/configuration.md and the repo's
//! egirl.toml name exactly the keys the config types accept, and every
//! secret variable egirl reads.
//!
//! The keys come from the types themselves, through their serde
//! `deny_unknown_fields`: a table holding only an unknown key is rejected
//! with "unknown field `..`, expected one of `a`, `b`", which lists the
//! table's fields. Each field is probed the same way to find out whether it
//! is a table (recurse), a map of tables such as `[mcp.servers.NAME]`
//! (recurse with a wildcard) or a value (a key). Optional tables that are
//! absent by default (`[local.server]`, `[remote.anthropic]`...) are probed
//! like the others, so no list of them is kept by hand, and the test does
//! not care in which module a config type lives.

use std::collections::BTreeSet;
use std::path::Path;

use egirl::config::{BRAVE_KEY_VAR, parse, secrets::SECRET_VARS};

const PROBE: &str = "__probe__";
const MAP_KEY: &str = "__key__";
/// How a map's key (a server's or a model's name) is written in a key path.
pub(super) const WILDCARD: &str = "*";

/// The fields of the table at `path`, or None when `path` is not a table.
pub(super) fn table_fields(path: &[String]) -> Option<Vec<String>> {
    let mut text = String::new();
    if !path.is_empty() {
        let header: Vec<String> = path.iter().map(|s| format!("\"{s}\"")).collect();
        text.push_str(&format!("[{}]\n", header.join(".")));
    }
    text.push_str(&format!("{PROBE} = 1\n"));
    let err = parse(&text, Path::new("probe.toml")).err()?;
    let message = err.message;
    let rest = message
        .strip_prefix(&format!("unknown field `{PROBE}`"))?
        .to_string();
    // "expected one of `a`, `b`", "expected `a`", or "there are no fields".
    Some(
        rest.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect(),
    )
}

/// Tables of the same type as another (an agent's own `[local]`): each is
/// documented as one key, "the keys of `[local]`", rather than key by key
/// (`same_type_tables_have_the_same_fields` holds the claim).
const SAME_AS: [(&str, &str); 4] = [
    ("agents.*.local", "local"),
    ("agents.*.tools.exec", "tools.exec"),
    ("agents.*.heartbeat", "heartbeat"),
    ("agents.*.cron", "cron"),
];

/// Every key the config types accept, as dotted paths (map keys as `*`).
pub(super) fn type_keys() -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    walk(&mut Vec::new(), &mut keys);
    keys
}

fn walk(path: &mut Vec<String>, keys: &mut BTreeSet<String>) {
    let fields = table_fields(path).unwrap_or_else(|| panic!("{path:?} is not a table"));
    for field in fields {
        path.push(field);
        if SAME_AS.iter().any(|(alias, _)| *alias == dotted(path)) {
            keys.insert(dotted(path));
        } else if table_fields(path).is_some() {
            walk(path, keys);
        } else {
            path.push(MAP_KEY.to_string());
            let map_of_tables = table_fields(path).is_some();
            path.pop();
            if map_of_tables {
                path.push(MAP_KEY.to_string());
                walk(path, keys);
                path.pop();
            } else {
                keys.insert(dotted(path));
            }
        }
        path.pop();
    }
}

fn dotted(path: &[String]) -> String {
    path.iter()
        .map(|s| if s == MAP_KEY { WILDCARD } else { s.as_str() })
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether a written key (`pricing.gpt-5.input_per_mtok`) is an instance of
/// a type key (`pricing.*.input_per_mtok`).
fn matches(pattern: &str, key: &str) -> bool {
    let p: Vec<&str> = pattern.split('.').collect();
    let k: Vec<&str> = key.split('.').collect();
    p.len() == k.len() && p.iter().zip(&k).all(|(p, k)| *p == WILDCARD || p == k)
}

/// The keys docs/configuration.md documents: the backticked names in the
/// first column of its `| key | default | meaning |` tables. A name starting
/// with `.` replaces as many trailing parts of the row's previous name
/// (`local.embeddings.endpoint`, `.model`); `<name>` is a map key.
fn doc_keys(text: &str) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut in_key_table = false;
    for (_, line) in super::prose_lines(text) {
        let Some(row) = line.trim().strip_prefix('|') else {
            in_key_table = false;
            continue;
        };
        let first = row.split('|').next().unwrap_or("").trim();
        if first == "key" {
            in_key_table = true;
            continue;
        }
        if !in_key_table || first.starts_with("---") {
            continue;
        }
        let mut previous: Vec<String> = Vec::new();
        for name in first.split('`').skip(1).step_by(2) {
            let parts: Vec<String> = name
                .trim_start_matches('.')
                .split('.')
                .map(|p| {
                    let p = p.trim_matches('"');
                    if p.starts_with('<') && p.ends_with('>') {
                        WILDCARD.to_string()
                    } else {
                        p.to_string()
                    }
                })
                .collect();
            let full = if name.starts_with('.') {
                assert!(
                    previous.len() >= parts.len(),
                    "configuration.md: `{name}` follows no longer key"
                );
                let mut full = previous[..previous.len() - parts.len()].to_vec();
                full.extend(parts);
                full
            } else {
                parts
            };
            keys.insert(full.join("."));
            previous = full;
        }
    }
    keys
}

/// The keys egirl.toml shows, set or commented out (`# key = value` under a
/// `[section]` or `# [section]` header), as written (map keys by name).
fn toml_keys(text: &str) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut section: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = match line.strip_prefix('#') {
            Some(commented) => commented.strip_prefix(' ').unwrap_or(commented),
            None => line,
        };
        if let Some(header) = line.strip_prefix('[') {
            let Some(end) = header.find(']') else {
                continue;
            };
            section = header[..end]
                .split('.')
                .map(|p| p.trim().trim_matches('"').to_string())
                .collect();
            let name = section.join(".");
            if SAME_AS.iter().any(|(alias, _)| matches(alias, &name)) {
                keys.insert(name);
            }
            continue;
        }
        let Some((key, _)) = line.split_once(" = ") else {
            continue;
        };
        let is_key = !key.is_empty()
            && key.starts_with(|c: char| c.is_ascii_lowercase())
            && key
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
        if is_key {
            let mut full = section.clone();
            full.extend(key.split('.').map(str::to_string));
            keys.insert(full.join("."));
        }
    }
    keys
}

/// The comment block at the top of egirl.toml, before its first section.
fn toml_header(text: &str) -> String {
    text.lines()
        .take_while(|l| !l.starts_with('['))
        .collect::<Vec<_>>()
        .join("\n")
}

fn secret_vars() -> Vec<&'static str> {
    let mut vars = SECRET_VARS.to_vec();
    vars.push(BRAVE_KEY_VAR);
    vars
}

#[test]
fn the_probe_finds_tables_maps_and_values() {
    let keys = type_keys();
    for key in [
        "workspace.path",
        "local.server.binary",
        "local.fast.server.args",
        "remote.anthropic.model",
        "tools.web.search.provider",
        "pricing.*.input_per_mtok",
        "mcp.servers.*.tools.deny",
        "mcp.servers.*.env",
    ] {
        assert!(keys.contains(key), "{key} not found in {keys:#?}");
    }
    assert!(!keys.iter().any(|k| k.contains(PROBE)), "{keys:#?}");
}

#[test]
fn same_type_tables_have_the_same_fields() {
    for (alias, original) in SAME_AS {
        let path = |dotted: &str| -> Vec<String> {
            dotted
                .split('.')
                .map(|p| if p == WILDCARD { MAP_KEY } else { p }.to_string())
                .collect()
        };
        let alias_fields = table_fields(&path(alias));
        assert!(alias_fields.is_some(), "{alias} is not a table");
        assert_eq!(
            alias_fields,
            table_fields(&path(original)),
            "{alias} vs {original}"
        );
    }
}

#[test]
fn configuration_md_documents_exactly_the_config_keys() {
    let types = type_keys();
    let doc = doc_keys(&super::read("docs/configuration.md"));
    let undocumented: Vec<&String> = types.iter().filter(|k| !doc.contains(*k)).collect();
    let unknown: Vec<&String> = doc.iter().filter(|k| !types.contains(*k)).collect();
    assert!(
        undocumented.is_empty() && unknown.is_empty(),
        "docs/configuration.md disagrees with the config types.\n\
         keys the types accept but the page does not document: {undocumented:#?}\n\
         keys the page documents but the types do not accept: {unknown:#?}"
    );
}

#[test]
fn egirl_toml_shows_exactly_the_config_keys() {
    let types = type_keys();
    let written = toml_keys(&super::read("egirl.toml"));
    let missing: Vec<&String> = types
        .iter()
        .filter(|t| !written.iter().any(|w| matches(t, w)))
        .collect();
    let unknown: Vec<&String> = written
        .iter()
        .filter(|w| !types.iter().any(|t| matches(t, w)))
        .collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "egirl.toml disagrees with the config types.\n\
         keys it does not show (set or as a `# key = value` comment): {missing:#?}\n\
         keys the types do not accept: {unknown:#?}"
    );
}

#[test]
fn every_secret_variable_is_named_in_egirl_toml_and_the_reference() {
    let toml = super::read("egirl.toml");
    let header = toml_header(&toml);
    let doc = super::read("docs/configuration.md");
    for var in secret_vars() {
        assert!(
            header.contains(var),
            "egirl.toml's header does not name {var}:\n{header}"
        );
        assert!(
            doc.contains(&format!("`{var}`")),
            "docs/configuration.md does not name `{var}`"
        );
    }
}

#[test]
fn egirl_toml_loads() {
    if let Err(err) = parse(&super::read("egirl.toml"), Path::new("egirl.toml")) {
        panic!("{err}");
    }
}
