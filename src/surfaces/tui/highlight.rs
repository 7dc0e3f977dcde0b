//! Fenced code highlighting with syntect (pure-Rust fancy-regex backend)
//! and two-face's syntaxes and themes (bat's set: TOML, TypeScript,
//! Dockerfile and friends beyond syntect's defaults).
//!
//! Both sets are loaded on first use, not at start-up: deserializing the
//! syntax dump costs tens of milliseconds and a few MiB of resident memory,
//! and a conversation without code never pays either. In the TUI
//! (`load_when_needed`) the first code block starts the load on a thread of
//! its own, so no frame waits for it: until the sets are in, code shows
//! plain, and the TUI renders it again when they are.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use ratatui::style::{Color, Modifier, Style};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;
use two_face::theme::LazyThemeSet;

use super::wrap::Pieces;

static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
static THEMES: OnceLock<LazyThemeSet> = OnceLock::new();
/// A background load was started: show code plain rather than wait.
static LOADING: AtomicBool = AtomicBool::new(false);
/// Set by the TUI: loads go to a thread, and this is called once one is
/// in (the TUI draws the code again). Without it (tests, other callers)
/// the first use loads in place.
type OnLoaded = Box<dyn Fn() + Send>;
static ON_LOADED: Mutex<Option<OnLoaded>> = Mutex::new(None);

fn syntaxes() -> Option<&'static SyntaxSet> {
    if let Some(set) = SYNTAXES.get() {
        return Some(set);
    }
    let in_background = ON_LOADED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .is_some();
    if !in_background {
        return Some(SYNTAXES.get_or_init(two_face::syntax::extra_newlines));
    }
    if !LOADING.swap(true, Ordering::AcqRel) {
        start_loading();
    }
    None
}

fn themes() -> &'static LazyThemeSet {
    THEMES.get_or_init(|| LazyThemeSet::from(two_face::theme::extra()))
}

/// From now on the first code block loads the syntax and theme sets on a
/// thread of their own and `loaded` is called once they are in; until
/// then `highlight` returns `None` instead of blocking on them.
pub fn load_when_needed(loaded: impl Fn() + Send + 'static) {
    *ON_LOADED.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(loaded));
}

fn start_loading() {
    let spawned = std::thread::Builder::new()
        .name("egirl-syntaxes".into())
        .spawn(|| {
            SYNTAXES.get_or_init(two_face::syntax::extra_newlines);
            themes();
            if let Some(loaded) = &*ON_LOADED.lock().unwrap_or_else(PoisonError::into_inner) {
                loaded();
            }
        });
    // No thread: load in place, as without a TUI.
    if spawned.is_err() {
        SYNTAXES.get_or_init(two_face::syntax::extra_newlines);
    }
}

/// Code longer than this is shown plain: highlighting is a regex engine
/// per line, and a pasted log must not stall a frame.
const MAX_HIGHLIGHT_BYTES: usize = 64 * 1024;

/// Highlights `code` as `lang` (a fence info string: `rust`, `py`,
/// `toml`...) with the two-face theme `theme`. `None` when the language or
/// theme is unknown or the grammar fails; the caller shows the code plain.
pub fn highlight(code: &str, lang: &str, theme: &str) -> Option<Vec<Pieces>> {
    if code.len() > MAX_HIGHLIGHT_BYTES {
        return None;
    }
    let set = syntaxes()?;
    let syntax = find_syntax(set, lang)?;
    let theme = themes().get(theme)?;
    highlight_with(code, set, syntax, theme)
}

/// Whether `name` is a code theme two-face ships.
pub fn has_theme(name: &str) -> bool {
    themes().get(name).is_some()
}

fn find_syntax<'s>(set: &'s SyntaxSet, lang: &str) -> Option<&'s SyntaxReference> {
    // The info string may carry attributes: ```rust,ignore or ```py title=x
    let token = lang
        .split(|c: char| c == ',' || c.is_whitespace())
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if token.is_empty() {
        return None;
    }
    let token = match token.as_str() {
        "shell" | "console" | "zsh" | "sh" => "bash",
        "py" | "python3" => "python",
        "ts" => "typescript",
        "js" => "javascript",
        "yml" => "yaml",
        "rs" => "rust",
        "docker" => "dockerfile",
        other => other,
    };
    set.find_syntax_by_token(token)
        .or_else(|| set.find_syntax_by_name(token))
        .or_else(|| {
            set.syntaxes()
                .iter()
                .find(|s| s.name.eq_ignore_ascii_case(token))
        })
}

fn highlight_with(
    code: &str,
    set: &SyntaxSet,
    syntax: &SyntaxReference,
    theme: &Theme,
) -> Option<Vec<Pieces>> {
    let mut h = HighlightLines::new(syntax, theme);
    let mut out = Vec::new();
    for line in LinesWithEndings::from(code) {
        // A grammar the fancy-regex engine cannot run fails here: fall back.
        let ranges = h.highlight_line(line, set).ok()?;
        let pieces: Pieces = ranges
            .into_iter()
            .map(|(style, text)| {
                let text = text.trim_end_matches(['\n', '\r']).replace('\t', "    ");
                (convert(style), text)
            })
            .filter(|(_, text)| !text.is_empty())
            .collect();
        out.push(pieces);
    }
    Some(out)
}

/// syntect style to ratatui: foreground and font style only, so code sits
/// on the terminal's own background in every theme.
fn convert(style: syntect::highlighting::Style) -> Style {
    let mut out = Style::default().fg(color(style.foreground));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

/// bat's `ansi` theme encodes terminal palette colors in the alpha
/// channel: alpha 0 means "ANSI color number r", alpha 1 the default.
fn color(c: syntect::highlighting::Color) -> Color {
    match c.a {
        0 => Color::Indexed(c.r),
        1 => Color::Reset,
        _ => Color::Rgb(c.r, c.g, c.b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_rust_toml_typescript_and_dockerfile() {
        for (lang, code) in [
            ("rust", "fn main() { let x = 1; }\n"),
            ("toml", "[ui]\ntheme = \"light\"\n"),
            ("ts", "const x: number = 1;\n"),
            ("dockerfile", "FROM debian\nRUN ls\n"),
        ] {
            let lines = highlight(code, lang, "OneHalfDark")
                .unwrap_or_else(|| panic!("{lang} is not highlighted"));
            let styles: std::collections::HashSet<_> =
                lines.iter().flatten().map(|(s, _)| *s).collect();
            assert!(styles.len() > 1, "{lang}: one style only");
            let text: String = lines[0].iter().map(|(_, t)| t.as_str()).collect();
            assert_eq!(text, code.lines().next().unwrap());
        }
    }

    #[test]
    fn unknown_languages_and_themes_fall_back() {
        assert!(highlight("x", "no-such-language", "OneHalfDark").is_none());
        assert!(highlight("fn x() {}", "rust", "no-such-theme").is_none());
        assert!(highlight("x", "", "OneHalfDark").is_none());
        assert!(has_theme("ansi") && has_theme("OneHalfLight"));
    }
}
