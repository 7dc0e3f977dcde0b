//! Themes: colors per role, read from `themes/<name>.toml`.
//!
//! The three shipped themes are embedded with `include_str!` so the binary
//! works from any directory; a file of the same name in the workspace or
//! the working directory overrides one (a user can tweak a built-in without
//! rebuilding). Keys a file leaves out keep the values of the built-in of
//! the same name (else of the default), so a two-line file that only
//! changes `user` is a valid theme.

use std::path::{Path, PathBuf};

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

const DEFAULT_TOML: &str = include_str!("../../../themes/default.toml");
const LIGHT_TOML: &str = include_str!("../../../themes/light.toml");
const HIGH_CONTRAST_TOML: &str = include_str!("../../../themes/high-contrast.toml");

/// The themes compiled into the binary, by name.
pub const BUILT_IN: [&str; 3] = ["default", "light", "high-contrast"];

#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    pub name: String,
    /// A two-face (bat) theme name for fenced code blocks.
    pub syntax: String,
    pub text: Color,
    pub muted: Color,
    pub user: Color,
    pub assistant: Color,
    pub tool: Color,
    pub routing_local: Color,
    pub routing_remote: Color,
    pub warning: Color,
    pub error: Color,
    pub border: Color,
    pub focus: Color,
    pub heading: Color,
    pub code: Color,
    pub link: Color,
    /// File diffs under write_file/edit_file calls.
    pub diff_added: Color,
    pub diff_removed: Color,
    pub diff_hunk: Color,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    syntax: Option<String>,
    #[serde(default)]
    colors: ColorsFile,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ColorsFile {
    text: Option<String>,
    muted: Option<String>,
    user: Option<String>,
    assistant: Option<String>,
    tool: Option<String>,
    routing_local: Option<String>,
    routing_remote: Option<String>,
    warning: Option<String>,
    error: Option<String>,
    border: Option<String>,
    focus: Option<String>,
    heading: Option<String>,
    code: Option<String>,
    link: Option<String>,
    diff_added: Option<String>,
    diff_removed: Option<String>,
    diff_hunk: Option<String>,
}

impl Default for Theme {
    fn default() -> Self {
        // The embedded default is checked by a unit test, so this cannot
        // fail in a released binary; the fallback keeps it total anyway.
        parse("default", DEFAULT_TOML, &fallback()).unwrap_or_else(|_| fallback())
    }
}

/// Plain terminal colors: the base every theme file is laid over.
fn fallback() -> Theme {
    Theme {
        name: "default".into(),
        syntax: "OneHalfDark".into(),
        text: Color::Reset,
        muted: Color::DarkGray,
        user: Color::LightBlue,
        assistant: Color::LightMagenta,
        tool: Color::Yellow,
        routing_local: Color::Green,
        routing_remote: Color::LightRed,
        warning: Color::Yellow,
        error: Color::Red,
        border: Color::DarkGray,
        focus: Color::LightBlue,
        heading: Color::LightBlue,
        code: Color::Green,
        link: Color::Cyan,
        diff_added: Color::Green,
        diff_removed: Color::Red,
        diff_hunk: Color::Cyan,
    }
}

impl Theme {
    /// The color of the agent in `slot` (its place in the config's list):
    /// the theme's own distinct colors in turn, so each theme gives agents
    /// colors that suit it.
    pub fn agent_color(&self, slot: usize) -> Color {
        let colors = [
            self.assistant,
            self.user,
            self.routing_local,
            self.tool,
            self.link,
            self.routing_remote,
            self.error,
        ];
        colors[slot % colors.len()]
    }

    /// Finds `name`: `themes/<name>.toml` under each of `dirs` first (the
    /// workspace, then the working directory), then the built-ins.
    pub fn load(name: &str, dirs: &[PathBuf]) -> Result<Theme, String> {
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(format!(
                "invalid theme name `{name}`: use letters, digits, `-` and `_`"
            ));
        }
        // An override of a built-in lays over that built-in; any other file
        // over the default.
        let base = match built_in(name) {
            Some(text) => parse(name, text, &Theme::default())?,
            None => Theme::default(),
        };
        for dir in dirs {
            let path = dir.join("themes").join(format!("{name}.toml"));
            if path.is_file() {
                return load_file(name, &path, &base);
            }
        }
        match built_in(name) {
            Some(_) => Ok(base),
            None => Err(format!(
                "unknown theme `{name}` (built in: {}; or add themes/{name}.toml to the workspace)",
                BUILT_IN.join(", ")
            )),
        }
    }

    pub fn muted(&self) -> Style {
        Style::default().fg(self.muted)
    }

    pub fn border(&self, focused: bool) -> Style {
        if focused {
            Style::default().fg(self.focus).add_modifier(Modifier::BOLD)
        } else {
            Style::default().fg(self.border)
        }
    }
}

fn built_in(name: &str) -> Option<&'static str> {
    match name {
        "default" | "dark" => Some(DEFAULT_TOML),
        "light" => Some(LIGHT_TOML),
        "high-contrast" => Some(HIGH_CONTRAST_TOML),
        _ => None,
    }
}

fn load_file(name: &str, path: &Path, base: &Theme) -> Result<Theme, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read theme {}: {e}", path.display()))?;
    parse(name, &text, base).map_err(|e| format!("{}: {e}", path.display()))
}

/// Lays a theme file over `base`.
pub fn parse(name: &str, text: &str, base: &Theme) -> Result<Theme, String> {
    let file: ThemeFile = toml::from_str(text).map_err(|e| format!("bad theme `{name}`: {e}"))?;
    let mut theme = base.clone();
    theme.name = name.to_string();
    if let Some(syntax) = file.syntax {
        theme.syntax = syntax;
    }
    let c = file.colors;
    let slots: [(&str, Option<String>, &mut Color); 17] = [
        ("text", c.text, &mut theme.text),
        ("muted", c.muted, &mut theme.muted),
        ("user", c.user, &mut theme.user),
        ("assistant", c.assistant, &mut theme.assistant),
        ("tool", c.tool, &mut theme.tool),
        ("routing_local", c.routing_local, &mut theme.routing_local),
        (
            "routing_remote",
            c.routing_remote,
            &mut theme.routing_remote,
        ),
        ("warning", c.warning, &mut theme.warning),
        ("error", c.error, &mut theme.error),
        ("border", c.border, &mut theme.border),
        ("focus", c.focus, &mut theme.focus),
        ("heading", c.heading, &mut theme.heading),
        ("code", c.code, &mut theme.code),
        ("link", c.link, &mut theme.link),
        ("diff_added", c.diff_added, &mut theme.diff_added),
        ("diff_removed", c.diff_removed, &mut theme.diff_removed),
        ("diff_hunk", c.diff_hunk, &mut theme.diff_hunk),
    ];
    for (key, value, slot) in slots {
        if let Some(value) = value {
            *slot = value.parse().map_err(|_| {
                format!(
                    "bad theme `{name}`: colors.{key} = \"{value}\" is not a color (a name, \"#rrggbb\" or 0-255)"
                )
            })?;
        }
    }
    Ok(theme)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_parses_and_differs() {
        let themes: Vec<Theme> = BUILT_IN
            .iter()
            .map(|n| Theme::load(n, &[]).expect("built-in theme"))
            .collect();
        assert_eq!(themes[0], Theme::default());
        assert_ne!(themes[0].user, themes[1].user);
        assert_ne!(themes[1].user, themes[2].user);
        assert_eq!(themes[2].name, "high-contrast");
    }

    #[test]
    fn a_partial_file_keeps_the_defaults() {
        let t = parse("mine", "[colors]\nuser = \"#010203\"\n", &Theme::default()).unwrap();
        assert_eq!(t.user, Color::Rgb(1, 2, 3));
        assert_eq!(t.error, Theme::default().error);
        // A file written before the diff colors existed still loads, with
        // the built-in's diff colors.
        assert_eq!(t.diff_added, Theme::default().diff_added);
        assert_ne!(t.diff_added, t.diff_removed);
    }

    #[test]
    fn bad_colors_and_keys_are_named() {
        let e = parse("x", "[colors]\nuser = \"blurple\"\n", &Theme::default()).unwrap_err();
        assert!(e.contains("colors.user"), "{e}");
        let e = parse("x", "[colors]\nusr = \"red\"\n", &Theme::default()).unwrap_err();
        assert!(e.contains("usr"), "{e}");
    }

    #[test]
    fn files_override_built_ins_and_names_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("themes")).unwrap();
        std::fs::write(
            dir.path().join("themes/light.toml"),
            "[colors]\nuser = \"red\"\n",
        )
        .unwrap();
        let t = Theme::load("light", &[dir.path().to_path_buf()]).unwrap();
        assert_eq!(t.user, Color::Red);
        assert_eq!(t.error, Theme::load("light", &[]).unwrap().error);
        assert!(Theme::load("../etc/passwd", &[]).is_err());
        assert!(
            Theme::load("nope", &[])
                .unwrap_err()
                .contains("unknown theme")
        );
    }
}
