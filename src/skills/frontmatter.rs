//! The frontmatter of a SKILL.md: the YAML block between the `---` lines at
//! the top, read into JSON values (the metadata may be nested YAML or a JSON
//! object, and JSON is what the rest of egirl speaks).
//!
//! Real files carry a byte-order mark, blank lines before the opening
//! `---`, CRLF line endings, quoted and folded/literal scalars, unicode,
//! sometimes no frontmatter at all (a plain markdown page, which Claude Code
//! loads too), and sometimes YAML that is not YAML at all (an unquoted `: `
//! inside a description). That last kind is read again key by key, so one
//! bad value costs that value, not the whole skill.

use std::collections::HashMap;

use serde_json::{Map, Value};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;
use yaml_rust2::{Yaml, YamlLoader};

/// A SKILL.md split into its frontmatter keys and its body.
#[derive(Debug)]
pub struct Frontmatter {
    pub fields: Map<String, Value>,
    /// File line (1-based) of each top-level key, for error messages.
    pub key_lines: HashMap<String, usize>,
    /// The Markdown after the closing `---`.
    pub body: String,
    /// Set when the block was not valid YAML and was read key by key: the
    /// YAML error, with its file line.
    pub lenient: Option<ParseError>,
}

/// What is wrong with a SKILL.md and on which line of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl ParseError {
    pub fn new(line: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }
}

/// Whether `text` opens with a frontmatter fence (after a byte-order mark
/// and blank lines).
pub fn has_frontmatter(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim_end() == "---")
}

/// The frontmatter and body of a SKILL.md. A file whose first line with
/// text is not `---` has no frontmatter: all of it is the body.
pub fn parse(text: &str) -> Result<Frontmatter, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let all: Vec<&str> = text.split('\n').collect();
    // Blank lines before the fence are skipped; line numbers stay the file's.
    let skipped = all.iter().take_while(|l| l.trim().is_empty()).count();
    let lines = &all[skipped.min(all.len())..];
    if lines.first().is_none_or(|l| l.trim_end() != "---") {
        return Ok(Frontmatter {
            fields: Map::new(),
            key_lines: HashMap::new(),
            body: text.clone(),
            lenient: None,
        });
    }
    let opened = skipped + 1;
    let Some(close) = lines
        .iter()
        .skip(1)
        .position(|l| matches!(l.trim_end(), "---" | "..."))
        .map(|i| i + 1)
    else {
        return Err(ParseError::new(
            opened,
            format!("the frontmatter opened on line {opened} is never closed with `---`"),
        ));
    };
    let block = &lines[1..close];
    let body = lines[close + 1..].join("\n");
    // The block's first line is the file's line `opened + 1`.
    let key_lines = top_level_keys(block)
        .into_iter()
        .map(|(key, index)| (key, index + opened + 1))
        .collect();
    let to_file_line = |mut e: ParseError| {
        e.line += skipped;
        e
    };
    match read_yaml(&block.join("\n")) {
        Ok(fields) => Ok(Frontmatter {
            fields,
            key_lines,
            body,
            lenient: None,
        }),
        Err(error) => Ok(Frontmatter {
            fields: read_key_by_key(block),
            key_lines,
            body,
            lenient: Some(to_file_line(error)),
        }),
    }
}

/// Frontmatter is a few keys; a bigger block is not a skill's.
const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Refuses what would make the loader blow up: a huge block, or aliases
/// (`*name`), which the loader expands by copying: a few hundred bytes of
/// nested aliases become gigabytes, and skills come from third parties.
fn check_safe(block: &str) -> Result<(), ParseError> {
    struct Aliases(Option<usize>);
    impl MarkedEventReceiver for Aliases {
        fn on_event(&mut self, ev: Event, mark: Marker) {
            if matches!(ev, Event::Alias(_)) && self.0.is_none() {
                self.0 = Some(mark.line());
            }
        }
    }
    if block.len() > MAX_FRONTMATTER_BYTES {
        return Err(ParseError::new(
            2,
            format!(
                "the frontmatter is over {} KiB",
                MAX_FRONTMATTER_BYTES / 1024
            ),
        ));
    }
    let mut aliases = Aliases(None);
    // A syntax error is reported by the loader itself, with its line.
    let _ = Parser::new_from_str(block).load(&mut aliases, false);
    match aliases.0 {
        Some(line) => Err(ParseError::new(
            line + 1,
            "YAML aliases (`*name`) are not supported in skill frontmatter",
        )),
        None => Ok(()),
    }
}

/// The block as YAML; an error's line is the file's (the block starts on line 2).
fn read_yaml(block: &str) -> Result<Map<String, Value>, ParseError> {
    check_safe(block)?;
    let docs = YamlLoader::load_from_str(block).map_err(|e| {
        ParseError::new(e.marker().line() + 1, format!("invalid YAML: {}", e.info()))
    })?;
    match docs.into_iter().next() {
        None | Some(Yaml::Null) => Ok(Map::new()),
        Some(doc) => match to_json(&doc) {
            Value::Object(map) => Ok(map),
            _ => Err(ParseError::new(
                2,
                "the frontmatter is not a list of `key: value` lines",
            )),
        },
    }
}

/// YAML as JSON: mapping keys become strings, anchors and bad values null.
pub fn to_json(yaml: &Yaml) -> Value {
    match yaml {
        Yaml::Real(s) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Value::String(s.clone()), Value::Number),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        Yaml::Hash(hash) => Value::Object(
            hash.iter()
                .map(|(k, v)| (scalar_text(k), to_json(v)))
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

fn scalar_text(key: &Yaml) -> String {
    match to_json(key) {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// Top-level `key:` lines of the block: (key, index in the block).
fn top_level_keys(block: &[&str]) -> Vec<(String, usize)> {
    block
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let (key, _) = line.split_once(':')?;
            let plain = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            plain.then(|| (key.to_string(), i))
        })
        .collect()
}

/// The first characters of a YAML value that opens a structure (a flow
/// collection, a quoted or block scalar, an anchor, alias or tag).
const OPENS_STRUCTURE: [char; 9] = ['[', '{', '"', '\'', '|', '>', '&', '*', '!'];

/// The fallback for a block that is not valid YAML: each top-level key
/// with its indented continuation is parsed on its own; a value that is
/// still not YAML is kept as the plain text on its line, unless it opens a
/// structure (`[`, `{`, a quote) that a raw read would only get wrong.
fn read_key_by_key(block: &[&str]) -> Map<String, Value> {
    let keys = top_level_keys(block);
    let mut fields = Map::new();
    for (n, (key, start)) in keys.iter().enumerate() {
        let end = keys.get(n + 1).map_or(block.len(), |(_, next)| *next);
        let entry = block[*start..end].join("\n");
        if let Ok(mut one) = read_yaml(&entry)
            && let Some(value) = one.remove(key)
        {
            fields.insert(key.clone(), value);
            continue;
        }
        let first = block[*start]
            .split_once(':')
            .map_or("", |(_, rest)| rest.trim());
        let opens_structure = first.starts_with(OPENS_STRUCTURE);
        if !first.is_empty() && !opens_structure {
            fields.insert(key.clone(), Value::String(first.to_string()));
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(fm: &Frontmatter, key: &str) -> String {
        fm.fields[key].as_str().unwrap_or_default().to_string()
    }

    #[test]
    fn bom_and_crlf_are_tolerated() {
        let fm = parse("\u{feff}---\r\nname: a\r\ndescription: b c\r\n---\r\n# Body\r\nline\r\n")
            .unwrap();
        assert_eq!(text(&fm, "name"), "a");
        assert_eq!(text(&fm, "description"), "b c");
        assert_eq!(fm.body, "# Body\nline\n");
        assert!(fm.lenient.is_none());
        assert_eq!(fm.key_lines["description"], 3);
    }

    #[test]
    fn quoted_folded_and_literal_scalars() {
        let fm = parse(
            "---\nname: 'it''s'\ndescription: >\n  folded\n  onto one line\nnotes: |\n  kept\n  as is\nemoji: \"\\u2615 caf\u{e9}\"\n---\n",
        )
        .unwrap();
        assert_eq!(text(&fm, "name"), "it's");
        assert_eq!(text(&fm, "description"), "folded onto one line\n");
        assert_eq!(text(&fm, "notes"), "kept\nas is\n");
        assert_eq!(text(&fm, "emoji"), "\u{2615} caf\u{e9}");
    }

    #[test]
    fn nested_and_one_line_json_metadata_read_the_same() {
        let nested = parse(
            "---\nname: a\ndescription: b\nmetadata:\n  openclaw:\n    requires:\n      bins: [gh]\n---\n",
        )
        .unwrap();
        let json = parse(
            "---\nname: a\ndescription: b\nmetadata: {\"openclaw\": {\"requires\": {\"bins\": [\"gh\"]}}}\n---\n",
        )
        .unwrap();
        assert_eq!(nested.fields["metadata"], json.fields["metadata"]);
        assert_eq!(
            json.fields["metadata"]["openclaw"]["requires"]["bins"][0],
            "gh"
        );
    }

    #[test]
    fn invalid_yaml_is_read_key_by_key() {
        let fm = parse(
            "---\nname: notes\ndescription: Notes: quick capture: fast\nmetadata:\n  egirl:\n    complexity: local\n---\nbody",
        )
        .unwrap();
        let error = fm.lenient.as_ref().unwrap();
        assert_eq!(error.line, 3, "{error:?}");
        assert_eq!(text(&fm, "description"), "Notes: quick capture: fast");
        assert_eq!(fm.fields["metadata"]["egirl"]["complexity"], "local");
    }

    #[test]
    fn a_broken_structure_is_dropped_not_guessed() {
        let fm = parse("---\nname: x\ndescription: [never closed\n---\n").unwrap();
        assert!(fm.lenient.is_some());
        assert!(!fm.fields.contains_key("description"));
    }

    #[test]
    fn no_frontmatter_is_all_body_and_an_unclosed_one_is_an_error() {
        let plain = parse("# Just markdown\n\nA page.").unwrap();
        assert!(plain.fields.is_empty() && plain.key_lines.is_empty());
        assert_eq!(plain.body, "# Just markdown\n\nA page.");
        let e = parse("---\nname: x\n").unwrap_err();
        assert!(e.message.contains("never closed"), "{e:?}");
        assert_eq!(e.line, 1);
        assert!(has_frontmatter("\u{feff}---\r\nname: x"));
        assert!(has_frontmatter("\n  \n---\nname: x"));
        assert!(!has_frontmatter("# Title\n---"));
    }

    #[test]
    fn blank_lines_before_the_fence_keep_file_line_numbers() {
        let fm = parse("\u{feff}\n\n---\nname: a\ndescription: b\n---\nbody").unwrap();
        assert!(fm.lenient.is_none());
        assert_eq!(text(&fm, "description"), "b");
        assert_eq!(fm.key_lines["name"], 4);
        assert_eq!(fm.body, "body");
        let block = "---\nname: a\nmetadata:\n  x: [open\n   y: 1\n---\n";
        let at_top = parse(block).unwrap().lenient.expect("not YAML").line;
        let lower = parse(&format!("\n\n{block}"))
            .unwrap()
            .lenient
            .map(|e| e.line);
        assert_eq!(lower, Some(at_top + 2));
    }
}

#[cfg(test)]
mod alias_tests {
    use super::*;

    #[test]
    fn an_alias_bomb_is_refused_not_expanded() {
        let mut fm =
            String::from("---\nname: bomb\ndescription: boom\nl0: &l0 [x,x,x,x,x,x,x,x,x,x]\n");
        for i in 1..12 {
            let refs = vec![format!("*l{}", i - 1); 10].join(",");
            fm.push_str(&format!("l{i}: &l{i} [{refs}]\n"));
        }
        fm.push_str("---\nbody\n");
        let parsed = parse(&fm).expect("read key by key");
        let error = parsed.lenient.expect("reported");
        assert!(error.message.contains("aliases"), "{}", error.message);
        assert_eq!(error.line, 5, "the first alias is on line 5");
        assert_eq!(parsed.fields["name"], "bomb");
        assert!(parsed.fields.get("l11").is_none_or(|v| v.is_null()));
    }

    #[test]
    fn a_huge_block_is_refused() {
        let fm = format!(
            "---\nname: big\ndescription: \"{}\"\n---\n",
            "x".repeat(70_000)
        );
        let parsed = parse(&fm).expect("read key by key");
        assert!(parsed.lenient.is_some());
    }
}
