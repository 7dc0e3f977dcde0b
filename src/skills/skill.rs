//! One skill file read into what egirl uses: the OpenClaw frontmatter keys
//! (`name`, `description`, `user-invocable`, `disable-model-invocation`,
//! `homepage`, `metadata.openclaw` or its legacy names `clawdbot`, `clawdis`,
//! `moltbot`), egirl's own `metadata.egirl.complexity`, and LocalBot's
//! `triggers`.
//!
//! What other agents load loads here too (Claude Code's rules): without
//! frontmatter, or without `description`, the description is `summary`
//! or else the body's first paragraph, and the name is the folder's.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::author::MAX_DESCRIPTION;
use super::frontmatter::{self, Frontmatter, ParseError};
use super::gating::{self, Host, Requirements};
use crate::routing::SkillComplexity;

/// Where the gating metadata may live, newest name first.
const METADATA_KEYS: [&str; 4] = ["openclaw", "clawdbot", "clawdis", "moltbot"];

#[derive(Clone, Debug)]
pub struct Skill {
    pub name: String,
    /// One line (whitespace collapsed).
    pub description: String,
    /// The SKILL.md (or single `<name>.md`) file.
    pub path: PathBuf,
    /// What `{baseDir}` in the file stands for: the skill's folder.
    pub base_dir: PathBuf,
    /// The path as the model and the user see it: workspace-relative,
    /// `~/...`, or absolute.
    pub location: String,
    /// Offered as a slash command (`user-invocable`, default true).
    pub user_invocable: bool,
    /// Listed to the model (`disable-model-invocation: true` turns it off).
    pub model_invocable: bool,
    pub homepage: Option<String>,
    pub emoji: Option<String>,
    pub triggers: Vec<String>,
    pub complexity: SkillComplexity,
    pub requirements: Requirements,
    /// Why it cannot be used on this machine; `None`: available.
    pub unavailable: Option<String>,
    /// The frontmatter was not valid YAML and was read key by key.
    pub warning: Option<String>,
}

impl Skill {
    pub fn available(&self) -> bool {
        self.unavailable.is_none()
    }
}

/// A skill file that could not be loaded, with what and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokenSkill {
    /// The folder (or file) name: the name it would have had.
    pub name: String,
    pub path: PathBuf,
    pub location: String,
    pub line: usize,
    pub error: String,
}

impl BrokenSkill {
    /// `location:line: error`, as compilers print it.
    pub fn message(&self) -> String {
        format!("{}:{}: {}", self.location, self.line, self.error)
    }
}

/// What the loader knows about a file before reading it.
pub struct Candidate {
    pub file: PathBuf,
    pub base_dir: PathBuf,
    /// Used when the frontmatter has no `name`.
    pub fallback_name: String,
    pub location: String,
}

pub fn load(candidate: &Candidate, host: &Host) -> Result<Skill, BrokenSkill> {
    let broken = |error: ParseError| BrokenSkill {
        name: candidate.fallback_name.clone(),
        path: candidate.file.clone(),
        location: candidate.location.clone(),
        line: error.line,
        error: error.message,
    };
    let text = crate::fsutil::regular_file::read(&candidate.file)
        .map_err(|e| broken(ParseError::new(1, format!("cannot read: {e}"))))?;
    let text = String::from_utf8(text).map_err(|_| broken(ParseError::new(1, "not UTF-8 text")))?;
    let parsed = frontmatter::parse(&text).map_err(broken)?;
    from_frontmatter(&parsed, candidate, host).map_err(broken)
}

fn from_frontmatter(
    parsed: &Frontmatter,
    candidate: &Candidate,
    host: &Host,
) -> Result<Skill, ParseError> {
    let fields = &parsed.fields;
    let line_of = |key: &str| parsed.key_lines.get(key).copied().unwrap_or(1);
    let description = match fields.get("description").map(text) {
        Some(Some(d)) if !d.trim().is_empty() => one_line(&d),
        Some(_) => {
            return Err(ParseError::new(
                line_of("description"),
                "`description` is empty",
            ));
        }
        None => match fields.get("summary").and_then(text) {
            Some(summary) if !summary.trim().is_empty() => one_line(&summary),
            // The YAML error is the cause when the key-by-key reading lost it.
            _ => match (&parsed.lenient, first_paragraph(&parsed.body)) {
                (Some(error), _) => return Err(error.clone()),
                (None, Some(paragraph)) => paragraph,
                (None, None) => {
                    // Nor a `summary` or a paragraph to stand in.
                    return Err(ParseError::new(
                        1,
                        "missing `description` (OpenClaw requires it)",
                    ));
                }
            },
        },
    };
    let name = match fields.get("name").and_then(text) {
        // One line: a block scalar's newlines would break the prompt list.
        Some(n) if n.trim().contains('\n') => {
            return Err(ParseError::new(line_of("name"), "`name` must be one line"));
        }
        Some(n) if !n.trim().is_empty() => one_line(&n),
        _ => candidate.fallback_name.clone(),
    };
    let metadata = metadata(fields).map_err(|e| ParseError::new(line_of("metadata"), e))?;
    let openclaw = METADATA_KEYS
        .iter()
        .map(|k| &metadata[*k])
        .find(|v| v.is_object())
        .cloned()
        .unwrap_or(Value::Null);
    let egirl = &metadata["egirl"];
    let requirements = Requirements::from_metadata(&openclaw);
    let mut triggers = gating::strings(fields.get("triggers").unwrap_or(&Value::Null));
    triggers.extend(gating::strings(&egirl["triggers"]));
    Ok(Skill {
        unavailable: gating::check(&requirements, host),
        requirements,
        name,
        description,
        path: candidate.file.clone(),
        base_dir: candidate.base_dir.clone(),
        location: candidate.location.clone(),
        user_invocable: flag(fields.get("user-invocable"), true),
        model_invocable: !flag(fields.get("disable-model-invocation"), false),
        homepage: fields
            .get("homepage")
            .or(openclaw.get("homepage"))
            .and_then(text),
        emoji: openclaw.get("emoji").and_then(text),
        triggers,
        complexity: egirl["complexity"]
            .as_str()
            .map_or(SkillComplexity::Auto, SkillComplexity::parse),
        warning: parsed
            .lenient
            .as_ref()
            .map(|e| format!("line {}: {}; read key by key", e.line, e.message)),
    })
}

/// `metadata` as an object: a YAML mapping, or a JSON object in a string
/// (OpenClaw's own parser wants it on one line, and some quote it).
fn metadata(fields: &Map<String, Value>) -> Result<Value, String> {
    match fields.get("metadata") {
        None | Some(Value::Null) => Ok(Value::Null),
        Some(Value::Object(_)) => Ok(fields["metadata"].clone()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v) if v.is_object() => Ok(v),
            Ok(_) => Err("`metadata` must be an object".into()),
            Err(e) => Err(format!("`metadata` is not a JSON object: {e}")),
        },
        Some(_) => Err("`metadata` must be a mapping or a JSON object".into()),
    }
}

/// A scalar as text (`name: 2048` is a name too).
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn flag(value: Option<&Value>, default: bool) -> bool {
    match value {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" => true,
            "false" | "no" => false,
            _ => default,
        },
        _ => default,
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The body's first paragraph of prose, on one line: headings, rules,
/// HTML comments and code fences before it are passed over. None: the body
/// has none.
fn first_paragraph(body: &str) -> Option<String> {
    let mut paragraph: Vec<&str> = Vec::new();
    let mut in_fence = false;
    let mut in_comment = false;
    for line in body.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            if !paragraph.is_empty() {
                break;
            }
            continue;
        }
        if in_fence {
            continue;
        }
        if in_comment || t.starts_with("<!--") {
            in_comment = !t.contains("-->");
            continue;
        }
        let passed_over = t.starts_with('#') || matches!(t, "---" | "***" | "___");
        if t.is_empty() || passed_over {
            if !paragraph.is_empty() {
                break;
            }
            continue;
        }
        paragraph.push(t);
    }
    let text = one_line(&paragraph.join(" "));
    if text.is_empty() {
        return None;
    }
    Some(match text.char_indices().nth(MAX_DESCRIPTION) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    })
}

/// The file as the model reads it: `{baseDir}` replaced by the folder.
pub fn expand_base_dir(text: &str, base_dir: &Path) -> String {
    text.replace("{baseDir}", &base_dir.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> Host {
        Host {
            os: "linux".into(),
            path: Vec::new(),
            env_is_set: Box::new(|_| false),
        }
    }

    fn load_text(text: &str) -> Result<Skill, BrokenSkill> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("SKILL.md");
        std::fs::write(&file, text).unwrap();
        let candidate = Candidate {
            file,
            base_dir: dir.path().to_path_buf(),
            fallback_name: "folder-name".into(),
            location: "skills/folder-name/SKILL.md".into(),
        };
        load(&candidate, &host())
    }

    #[test]
    fn keys_and_defaults() {
        let s = load_text(
            "---\nname: weather\ndescription: >\n  Forecasts\n  by city.\nhomepage: https://wttr.in\ntriggers: [forecast, \"will it rain\"]\nmetadata: {\"clawdbot\": {\"emoji\": \"\u{2614}\"}, \"egirl\": {\"complexity\": \"local\"}}\n---\nbody",
        )
        .unwrap();
        assert_eq!(s.name, "weather");
        assert_eq!(s.description, "Forecasts by city.");
        assert!(s.user_invocable && s.model_invocable && s.available());
        assert_eq!(s.homepage.as_deref(), Some("https://wttr.in"));
        assert_eq!(s.emoji.as_deref(), Some("\u{2614}"));
        assert_eq!(s.triggers, ["forecast", "will it rain"]);
        assert_eq!(s.complexity, SkillComplexity::Local);
    }

    #[test]
    fn missing_name_falls_back_and_missing_description_is_broken() {
        let s = load_text(
            "---\ndescription: d\ndisable-model-invocation: true\nuser-invocable: \"false\"\n---\n",
        )
        .unwrap();
        assert_eq!(s.name, "folder-name");
        assert!(!s.model_invocable && !s.user_invocable);
        let b = load_text("---\nname: x\n---\n").unwrap_err();
        assert_eq!(b.line, 1);
        assert!(b.error.contains("description"), "{b:?}");
        assert_eq!(b.name, "folder-name");
        assert!(b.message().starts_with("skills/folder-name/SKILL.md:1: "));
    }

    #[test]
    fn peers_shapes_load() {
        let plain = load_text("# Deploy\n\nShips the site\nto production.\n\nMore.").unwrap();
        assert_eq!(
            (plain.name.as_str(), plain.description.as_str()),
            ("folder-name", "Ships the site to production.")
        );
        let summary = load_text("---\nname: s\nsummary: Short one.\n---\n").unwrap();
        assert_eq!(summary.description, "Short one.");
        let body =
            load_text("---\nname: b\n---\n<!-- note -->\n```\ncode\n```\nFrom the body.").unwrap();
        assert_eq!(body.description, "From the body.");
        let blank = load_text("\n\n---\nname: blank\ndescription: d\n---\n").unwrap();
        assert_eq!(blank.name, "blank");
    }

    #[test]
    fn a_name_on_two_lines_is_broken() {
        let b = load_text("---\ndescription: d\nname: |\n  two\n  lines\n---\n").unwrap_err();
        assert_eq!(b.line, 3, "{b:?}");
        assert!(b.error.contains("one line"), "{b:?}");
        let empty = load_text("").unwrap_err();
        assert!(
            empty.error.starts_with("missing `description`"),
            "{empty:?}"
        );
    }

    #[test]
    fn bad_metadata_names_its_line() {
        let b = load_text("---\nname: x\ndescription: d\nmetadata: '{\"openclaw\": '\n---\n")
            .unwrap_err();
        assert_eq!(b.line, 4, "{b:?}");
        assert!(b.error.contains("metadata"), "{b:?}");
    }

    #[test]
    fn gating_applies_at_load() {
        let s = load_text(
            "---\nname: x\ndescription: d\nmetadata:\n  moltbot:\n    requires:\n      env: [X_TOKEN]\n---\n",
        )
        .unwrap();
        assert_eq!(
            s.unavailable.as_deref(),
            Some("environment variable not set: X_TOKEN")
        );
    }

    #[test]
    fn base_dir_expands() {
        let out = expand_base_dir("run {baseDir}/scripts/go.sh", Path::new("/s/k"));
        assert_eq!(out, "run /s/k/scripts/go.sh");
    }
}
