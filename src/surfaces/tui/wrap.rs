//! Wrapping styled text to a width, by display cells (unicode-width).
//!
//! Rendered lines are cached per width, so wrapping happens here once per
//! message and width rather than in ratatui's `Paragraph` on every frame;
//! it also lets the conversation know its exact height for scrolling.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Display width of a string in terminal cells.
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

fn char_width(c: char) -> usize {
    UnicodeWidthChar::width(c).unwrap_or(0)
}

/// Styled pieces of one logical line, in order.
pub type Pieces = Vec<(Style, String)>;

/// Word-wraps one logical line (no `\n` inside) to `width` cells; words
/// longer than a line are broken by character. Always returns at least one
/// (possibly empty) line.
pub fn wrap(pieces: &[(Style, String)], width: usize) -> Vec<Pieces> {
    let width = width.max(1);
    let mut lines: Vec<Pieces> = Vec::new();
    let mut line: Pieces = Vec::new();
    let mut line_w = 0;
    // Whitespace seen since the last word: kept only if a word follows on
    // the same line (no trailing or leading blanks on wrapped lines).
    let mut gap: Pieces = Vec::new();
    let mut gap_w = 0;
    for token in tokens(pieces) {
        if token.space {
            gap.extend(token.pieces);
            gap_w += token.width;
            continue;
        }
        if line_w + gap_w + token.width <= width {
            if line_w > 0 || lines.is_empty() {
                // Leading whitespace of the first line is indentation: keep it.
                push_all(&mut line, gap.drain(..));
                line_w += gap_w;
            }
            gap.clear();
            gap_w = 0;
            push_all(&mut line, token.pieces);
            line_w += token.width;
            continue;
        }
        if token.width <= width {
            gap.clear();
            gap_w = 0;
            if line_w > 0 {
                lines.push(std::mem::take(&mut line));
            }
            push_all(&mut line, token.pieces);
            line_w = token.width;
            continue;
        }
        // A word wider than the line fills the current line, then breaks.
        // The blank before it stays when it fits: without it a URL copied
        // from the screen merges with the word before it.
        if line_w > 0 && line_w + gap_w < width {
            push_all(&mut line, gap.drain(..));
            line_w += gap_w;
        } else if line_w > 0 {
            lines.push(std::mem::take(&mut line));
            line_w = 0;
        }
        gap.clear();
        gap_w = 0;
        for (style, text) in token.pieces {
            for c in text.chars() {
                let w = char_width(c);
                if line_w + w > width && line_w > 0 {
                    lines.push(std::mem::take(&mut line));
                    line_w = 0;
                }
                push(&mut line, style, c);
                line_w += w;
            }
        }
    }
    if line_w > 0 || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Breaks a line at exactly `width` cells, keeping every character (code).
pub fn wrap_hard(pieces: &[(Style, String)], width: usize) -> Vec<Pieces> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line: Pieces = Vec::new();
    let mut line_w = 0;
    for (style, text) in pieces {
        for c in text.chars() {
            let w = char_width(c);
            if line_w + w > width && line_w > 0 {
                lines.push(std::mem::take(&mut line));
                line_w = 0;
            }
            push(&mut line, *style, c);
            line_w += w;
        }
    }
    lines.push(line);
    lines
}

/// Cuts to `width` cells with an ellipsis when something was cut.
pub fn truncate(s: &str, width: usize) -> String {
    if self::width(s) <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if w + cw + 1 > width {
            break;
        }
        out.push(c);
        w += cw;
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// The first line of `s`, cut to `width`, with `…` when anything was left out.
pub fn one_line(s: &str, width: usize) -> String {
    let mut lines = s.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("").trim_end();
    if lines.next().is_some() && self::width(first) < width {
        return truncate(&format!("{first} …"), width);
    }
    truncate(first, width)
}

/// Prefixes each wrapped line (first line gets `first`, the rest `rest`)
/// and turns them into ratatui lines.
pub fn into_lines(
    wrapped: Vec<Pieces>,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    wrapped
        .into_iter()
        .enumerate()
        .map(|(i, pieces)| {
            let mut spans: Vec<Span<'static>> = if i == 0 { first } else { rest }.to_vec();
            spans.extend(
                pieces
                    .into_iter()
                    .map(|(style, text)| Span::styled(text, style)),
            );
            Line::from(spans)
        })
        .collect()
}

pub fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| width(&s.content)).sum()
}

struct Token {
    space: bool,
    width: usize,
    pieces: Pieces,
}

fn tokens(pieces: &[(Style, String)]) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    for (style, text) in pieces {
        for c in text.chars() {
            let space = c == ' ' || c == '\t';
            let c = if c == '\t' { ' ' } else { c };
            match out.last_mut() {
                Some(t) if t.space == space => {
                    push(&mut t.pieces, *style, c);
                    t.width += char_width(c);
                }
                _ => out.push(Token {
                    space,
                    width: char_width(c),
                    pieces: vec![(*style, c.to_string())],
                }),
            }
        }
    }
    out
}

fn push(line: &mut Pieces, style: Style, c: char) {
    match line.last_mut() {
        Some((s, text)) if *s == style => text.push(c),
        _ => line.push((style, c.to_string())),
    }
}

fn push_all(line: &mut Pieces, pieces: impl IntoIterator<Item = (Style, String)>) {
    for (style, text) in pieces {
        match line.last_mut() {
            Some((s, t)) if *s == style => t.push_str(&text),
            _ => line.push((style, text)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> Pieces {
        vec![(Style::default(), s.to_string())]
    }

    fn texts(lines: Vec<Pieces>) -> Vec<String> {
        lines
            .into_iter()
            .map(|l| l.into_iter().map(|(_, t)| t).collect())
            .collect()
    }

    #[test]
    fn wraps_at_words_without_trailing_blanks() {
        let out = texts(wrap(&plain("the quick brown fox jumps"), 10));
        assert_eq!(out, ["the quick", "brown fox", "jumps"]);
    }

    #[test]
    fn breaks_long_words_and_keeps_indentation() {
        assert_eq!(texts(wrap(&plain("abcdefghij"), 4)), ["abcd", "efgh", "ij"]);
        assert_eq!(texts(wrap(&plain("  indented"), 20)), ["  indented"]);
        assert_eq!(texts(wrap(&plain(""), 5)), [""]);
    }

    #[test]
    fn a_long_word_keeps_the_blank_before_it() {
        assert_eq!(
            texts(wrap(&plain("see: abcdefghijkl"), 10)),
            ["see: abcde", "fghijkl"]
        );
        // No room for the blank and a character: the word starts a line.
        assert_eq!(
            texts(wrap(&plain("abcdefghi abcdefghijkl"), 10)),
            ["abcdefghi", "abcdefghij", "kl"]
        );
    }

    #[test]
    fn keeps_styles_across_a_wrap() {
        let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let pieces = vec![
            (Style::default(), "aa ".to_string()),
            (bold, "bb".to_string()),
        ];
        let out = wrap(&pieces, 3);
        assert_eq!(out[1], vec![(bold, "bb".to_string())]);
    }

    #[test]
    fn wide_characters_count_two_cells() {
        assert_eq!(width("日本"), 4);
        assert_eq!(texts(wrap_hard(&plain("日本語"), 4)), ["日本", "語"]);
        assert_eq!(truncate("日本語です", 5), "日本…");
        assert_eq!(one_line("first\nsecond", 20), "first …");
    }
}
