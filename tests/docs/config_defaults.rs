//! The defaults docs/configuration.md and the repo's egirl.toml write are
//! the built-in ones, and the keys the reference marks *required* are
//! exactly those the config types require.
//!
//! A default is checked by what it means: setting the key to the value
//! written changes nothing (the parsed config's `Debug` is the same as
//! without the key). Keys go in as dotted keys at the root of the text
//! (`local.server.args = []`), so a section absent by default comes into
//! being with them; its required keys are added first, found the way the
//! user would find them: from the "missing field" errors.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use egirl::config::{Config, parse};

use super::config_reference::{WILDCARD, table_fields, type_keys};

/// What a map's key (`<name>`, `<model>`) is called in the texts built here.
const MAP_NAME: &str = "x";
/// A value for a required key: a string every such key accepts (an http
/// URL passes the URL checks); numbers are retried as 1.0.
const PLACEHOLDER: &str = "\"http://127.0.0.1:1\"";

/// `a.*.b` as written in TOML (`a."x".b`).
fn written(dotted: &str) -> String {
    dotted
        .split('.')
        .map(|p| match p {
            WILDCARD => format!("\"{MAP_NAME}\""),
            p if p.contains('"') => p.to_string(),
            p => format!("\"{p}\""),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// A config text as tables of `key = value` lines (a table with no lines
/// still exists: its header is written).
#[derive(Clone, Default)]
struct Tables(BTreeMap<String, Vec<String>>);

impl Tables {
    /// Sets dotted `key` (its last part under the table the rest names).
    fn set(&mut self, key: &str, value: &str) {
        let (table, leaf) = key.rsplit_once('.').unwrap_or(("", key));
        self.table(table).push(format!("{leaf} = {value}"));
    }

    fn table(&mut self, table: &str) -> &mut Vec<String> {
        let table = match table {
            "" => String::new(),
            t => written(t),
        };
        self.0.entry(table).or_default()
    }

    fn text(&self) -> String {
        let mut out = String::new();
        for (table, lines) in &self.0 {
            if !table.is_empty() {
                out.push_str(&format!("[{table}]\n"));
            }
            for line in lines {
                out.push_str(&format!("{line}\n"));
            }
        }
        out
    }
}

/// The tables with the required keys their sections need added (each as
/// `key = placeholder`), and those keys; or the error no placeholder cures.
fn with_required(tables: &Tables) -> Result<(Tables, BTreeSet<String>), String> {
    let mut tables = tables.clone();
    let mut required = BTreeSet::new();
    for _ in 0..16 {
        let text = tables.text();
        let err = match parse(&text, Path::new("t.toml")) {
            Ok(_) => return Ok((tables, required)),
            Err(err) => err,
        };
        let table = err.key.clone().unwrap_or_default();
        let field = match err.message.strip_prefix("missing field `") {
            Some(rest) => rest.split('`').next().unwrap_or_default().to_string(),
            // An MCP server needs `command` or `url`: neither is required.
            None if err.message.starts_with("set `command`") => {
                tables.table(&table).push("command = \"x\"".into());
                continue;
            }
            // The placeholder is of the wrong kind: a number, or the
            // first of the values an enum takes.
            None if err.message.contains("invalid type: string")
                || err.message.contains("unknown variant") =>
            {
                let value = match err.message.split_once("expected `") {
                    Some((_, rest)) if err.message.contains("unknown variant") => {
                        format!("\"{}\"", rest.split('`').next().unwrap_or_default())
                    }
                    _ => "1.0".to_string(),
                };
                let (t, leaf) = table.rsplit_once('.').unwrap_or(("", &table));
                for line in tables.table(t).iter_mut() {
                    if line.starts_with(&format!("{leaf} = ")) {
                        *line = format!("{leaf} = {value}");
                    }
                }
                continue;
            }
            None => return Err(format!("{err}\n{text}")),
        };
        let key = match table.is_empty() {
            true => field,
            false => format!("{table}.{field}"),
        };
        tables.set(&key, PLACEHOLDER);
        required.insert(key);
    }
    Err(format!("no end to required keys:\n{}", tables.text()))
}

/// The config parsed, as `Debug` shows it (what "changes nothing" compares).
fn shown(text: &str) -> Result<String, String> {
    parse(text, Path::new("t.toml"))
        .map(|c| format!("{c:#?}"))
        .map_err(|e| format!("{e}\n{text}"))
}

/// Whether setting `key` to `value` leaves the config as its default
/// (with the required keys of its section, when it is absent by default).
fn is_default(key: &str, value: &str) -> Result<(), String> {
    let mut without = Tables::default();
    let (table, _) = key.rsplit_once('.').unwrap_or(("", key));
    without.table(table);
    let (without, _) = with_required(&without)?;
    let mut with = without.clone();
    with.set(key, value);
    let (a, b) = (shown(&without.text())?, shown(&with.text())?);
    if a == b {
        Ok(())
    } else {
        Err(format!(
            "`{key} = {value}` is not the default:\n{}",
            with.text()
        ))
    }
}

/// One cell of the default column for one key.
#[derive(Debug)]
enum Written {
    Required,
    Literal(String),
    /// Words (`none`, `local`'s, the workspace): nothing to compare.
    Prose,
}

/// The cell split per key: `a, b` at the top level (not inside backticks
/// or parentheses); one part for a row of several keys applies to each.
fn cell_parts(cell: &str) -> Vec<Written> {
    let mut parts = Vec::new();
    let (mut depth, mut in_code, mut start) = (0i32, false, 0);
    let bytes = cell.as_bytes();
    for (i, c) in cell.char_indices() {
        match c {
            '`' => in_code = !in_code,
            '(' if !in_code => depth += 1,
            ')' if !in_code => depth -= 1,
            ',' if !in_code && depth == 0 && bytes.get(i + 1) == Some(&b' ') => {
                parts.push(&cell[start..i]);
                start = i + 2;
            }
            _ => {}
        }
    }
    parts.push(&cell[start..]);
    parts
        .into_iter()
        .map(|p| {
            let p = p.trim();
            if p.starts_with("required") {
                return Written::Required;
            }
            let literal = p.strip_prefix('`').and_then(|rest| {
                let (value, after) = rest.split_once('`')?;
                (after.is_empty() || after.starts_with(' ')).then(|| value.to_string())
            });
            literal.map_or(Written::Prose, Written::Literal)
        })
        .collect()
}

/// Each documented key with what its default cell says.
fn documented_defaults() -> Vec<(String, Written)> {
    let text = super::read("docs/configuration.md");
    let mut out = Vec::new();
    let mut in_key_table = false;
    for (_, line) in super::prose_lines(&text) {
        let Some(row) = line.trim().strip_prefix('|') else {
            in_key_table = false;
            continue;
        };
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        if cells[0] == "key" {
            in_key_table = cells.get(1) == Some(&"default");
            continue;
        }
        if !in_key_table || cells[0].starts_with("---") {
            continue;
        }
        let mut names: Vec<String> = Vec::new();
        for name in cells[0].split('`').skip(1).step_by(2) {
            let parts: Vec<String> = name
                .trim_start_matches('.')
                .split('.')
                .map(|p| match p.starts_with('<') {
                    true => WILDCARD.to_string(),
                    false => p.to_string(),
                })
                .collect();
            let full = match (name.starts_with('.'), names.last()) {
                (true, Some(previous)) => {
                    let previous: Vec<&str> = previous.split('.').collect();
                    let mut full: Vec<String> = previous[..previous.len() - parts.len()]
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                    full.extend(parts);
                    full
                }
                _ => parts,
            };
            names.push(full.join("."));
        }
        let mut parts = cell_parts(cells.get(1).copied().unwrap_or_default());
        assert!(
            parts.len() == names.len() || parts.len() == 1,
            "configuration.md: {} defaults for {names:?}",
            parts.len()
        );
        if parts.len() == 1 && names.len() > 1 {
            let only = parts.remove(0);
            for name in names {
                let again = match &only {
                    Written::Required => Written::Required,
                    Written::Literal(v) => Written::Literal(v.clone()),
                    Written::Prose => Written::Prose,
                };
                out.push((name, again));
            }
        } else {
            out.extend(names.into_iter().zip(parts));
        }
    }
    out
}

#[test]
fn configuration_md_writes_the_built_in_defaults() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (key, default) in documented_defaults() {
        if let Written::Literal(value) = default {
            checked += 1;
            if let Err(e) = is_default(&key, &value) {
                wrong.push(e);
            }
        }
    }
    assert!(checked > 80, "only {checked} defaults read");
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// The keys the types require: in every table, those a section written
/// empty (`a.b = {}`) is refused without.
fn required_by_types() -> BTreeSet<String> {
    let mut tables = BTreeSet::new();
    for key in type_keys() {
        let parts: Vec<&str> = key.split('.').collect();
        for end in 1..parts.len() {
            let path: Vec<String> = parts[..end]
                .iter()
                .map(|p| match *p {
                    WILDCARD => "__key__".to_string(),
                    p => p.to_string(),
                })
                .collect();
            if table_fields(&path).is_some() {
                tables.insert(parts[..end].join("."));
            }
        }
    }
    let mut required = BTreeSet::new();
    for table in tables {
        let mut empty = Tables::default();
        empty.table(&table);
        let (_, found) = with_required(&empty).unwrap_or_else(|e| panic!("{table}: {e}"));
        required.extend(
            found
                .into_iter()
                .map(|k| k.replace(&format!(".{MAP_NAME}."), &format!(".{WILDCARD}."))),
        );
    }
    required
}

#[test]
fn the_keys_marked_required_are_the_ones_the_types_require() {
    let documented: BTreeSet<String> = documented_defaults()
        .into_iter()
        .filter(|(_, d)| matches!(d, Written::Required))
        .map(|(k, _)| k)
        .collect();
    let types = required_by_types();
    assert!(types.contains("local.server.binary"), "{types:#?}");
    assert_eq!(
        documented, types,
        "docs/configuration.md's required keys (left) against the types' (right)"
    );
}

/// The repo's egirl.toml claims every key with its default unless marked
/// "example": what it sets parses to the built-in defaults, and each
/// commented `# key = value` outside an example (a line or a section
/// header saying "example") is the default too.
#[test]
fn egirl_toml_shows_every_key_at_its_default() {
    let text = super::read("egirl.toml");
    let set = shown(&text).unwrap_or_else(|e| panic!("{e}"));
    let defaults = format!("{:#?}", Config::default());
    assert!(
        set == defaults,
        "egirl.toml sets values other than the defaults:\n{}",
        first_difference(&set, &defaults)
    );
    let mut section = String::new();
    let mut example_section = false;
    let mut wrong = Vec::new();
    for line in text.lines() {
        let Some(commented) = line.strip_prefix("# ") else {
            if let Some(header) = line.strip_prefix('[') {
                section = header.split(']').next().unwrap_or_default().to_string();
                example_section = false;
            }
            continue;
        };
        if let Some(header) = commented.strip_prefix('[') {
            let name = header.split(']').next().unwrap_or_default().to_string();
            // A section inside an example (`[local.fast.server]` under
            // `[local.fast]`) is part of it.
            let inside = example_section && name.starts_with(&format!("{section}."));
            example_section = inside || commented.contains("example");
            section = name;
            continue;
        }
        let Some((key, value)) = commented.split_once(" = ") else {
            continue;
        };
        let is_key = key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
        if !is_key || example_section || value.contains("# example") {
            continue;
        }
        let value = value.split(" # ").next().unwrap_or(value).trim();
        let full = format!("{section}.{key}");
        let line = format!("{full} = {value}\n");
        match shown(&line) {
            Ok(shown) if shown == defaults => {}
            Ok(_) => wrong.push(format!("`# {key} = {value}` in [{section}]")),
            Err(e) => wrong.push(e),
        }
    }
    assert!(
        wrong.is_empty(),
        "commented keys in egirl.toml that are not the default (mark an example `# example`):\n{}",
        wrong.join("\n")
    );
}

fn first_difference(a: &str, b: &str) -> String {
    a.lines()
        .zip(b.lines())
        .enumerate()
        .find(|(_, (x, y))| x != y)
        .map_or("(lengths differ)".into(), |(n, (x, y))| {
            format!("line {n}: egirl.toml {x} / default {y}")
        })
}

#[test]
fn make_runs_config_loads() {
    let text = super::read("scripts/make-run.toml");
    let config = parse(&text, Path::new("scripts/make-run.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert!(config.local.server.is_some(), "make run starts its server");
}
