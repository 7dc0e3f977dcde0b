//! The lines of a hit that answer. A chunk is about 1,600 characters and a
//! hit shows [`SNIPPET_CHARS`] of it, so a hit shows the chunk's
//! best-matching line and as many of its neighbours as fit, with the file
//! lines they span; the first 500 characters of a chunk often end before
//! the line that matched.
//!
//! Lines are scored by the query terms FTS5 marked in them (its own
//! `highlight()`, so the tokenizer decides what matched, diacritics and
//! case as the search saw them), each term weighted by how few of the
//! chunk's lines hold it: in a list of "My favorite …" facts, "favorite"
//! matches everywhere and "editor" tells. A hit found by meaning alone
//! has no marked terms; the caller scores its lines by vector instead
//! ([`around_line`]), or shows its first lines ([`head`]).

use crate::protocol::MemoryHit;

/// Characters of chunk text in a hit.
pub const SNIPPET_CHARS: usize = 500;

/// What FTS5 puts around a matched token (control characters a memory
/// file does not hold; any that do are removed from the snippet anyway).
pub const OPEN: char = '\u{2}';
pub const CLOSE: char = '\u{3}';

/// The lines shown for a hit.
#[derive(Clone, Debug, PartialEq)]
pub struct Snippet {
    pub text: String,
    /// File lines the text spans.
    pub start_line: usize,
    pub end_line: usize,
    /// The file line that matched best.
    pub best_line: usize,
}

impl Snippet {
    /// Writes the snippet into the hit.
    pub fn apply(self, hit: &mut MemoryHit) {
        hit.snippet = self.text;
        hit.snippet_start_line = self.start_line;
        hit.snippet_end_line = self.end_line;
        hit.best_line = self.best_line;
    }
}

/// A chunk's lines with the file line each comes from. A chunk holds the
/// lines `start..=end`; a piece of a line too long for one chunk has no
/// newline and all of it is line `start`.
pub fn numbered(text: &str, start: usize, end: usize) -> Vec<(usize, &str)> {
    text.split('\n')
        .enumerate()
        .map(|(i, line)| ((start + i).min(end.max(start)), line))
        .collect()
}

/// The snippet for a chunk as FTS5's `highlight()` returned it.
pub fn from_highlight(marked: &str, start: usize, end: usize) -> Snippet {
    let parsed: Vec<MarkedLine> = marked.split('\n').map(MarkedLine::parse).collect();
    let clean: String = parsed
        .iter()
        .map(|l| l.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let scores = term_scores(&parsed);
    let best = best_index(&scores);
    let Some(best) = best else {
        return head(&clean, start, end);
    };
    let focus = parsed[best].first_mark.unwrap_or(0);
    window(&numbered(&clean, start, end), &scores, best, focus)
}

/// The snippet around line `best` (an index into [`numbered`]'s lines):
/// the line a vector search liked best.
pub fn around_line(text: &str, start: usize, end: usize, best: usize) -> Snippet {
    let lines = numbered(text, start, end);
    let mut scores = vec![0.0; lines.len()];
    let best = best.min(lines.len().saturating_sub(1));
    if let Some(s) = scores.get_mut(best) {
        *s = 1.0;
    }
    window(&lines, &scores, best, 0)
}

/// The first lines with content: what a hit shows when nothing says
/// which of its lines matched.
pub fn head(text: &str, start: usize, end: usize) -> Snippet {
    let lines = numbered(text, start, end);
    let first = lines
        .iter()
        .position(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .or_else(|| lines.iter().position(|(_, l)| !l.trim().is_empty()))
        .unwrap_or(0);
    // Forward from there: a heading just above is context, what follows
    // is the content.
    let mut scores: Vec<f64> = (0..lines.len())
        .map(|i| if i >= first { 1.0 } else { 0.0 })
        .collect();
    if let Some(s) = scores.get_mut(first) {
        *s = 2.0;
    }
    window(&lines, &scores, first, 0)
}

/// Lines worth scoring by vector: index and text, blank ones and
/// fences left out.
pub fn content_lines(text: &str) -> Vec<(usize, &str)> {
    text.split('\n')
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with("```")
        })
        .collect()
}

struct MarkedLine {
    text: String,
    /// The distinct matched terms, lowercased.
    terms: Vec<String>,
    /// Character offset of the first matched term in `text`.
    first_mark: Option<usize>,
}

impl MarkedLine {
    fn parse(marked: &str) -> Self {
        let mut text = String::with_capacity(marked.len());
        let mut terms: Vec<String> = Vec::new();
        let mut first_mark = None;
        let mut current: Option<String> = None;
        let mut chars = 0;
        for c in marked.chars() {
            match c {
                OPEN => {
                    first_mark.get_or_insert(chars);
                    current = Some(String::new());
                }
                CLOSE => {
                    if let Some(term) = current.take().map(|t| t.to_lowercase())
                        && !term.is_empty()
                        && !terms.contains(&term)
                    {
                        terms.push(term);
                    }
                }
                c => {
                    if let Some(term) = current.as_mut() {
                        term.push(c);
                    }
                    text.push(c);
                    chars += 1;
                }
            }
        }
        Self {
            text,
            terms,
            first_mark,
        }
    }
}

/// Each line's score: the sum, over the distinct terms it holds, of
/// `ln(1 + lines / lines holding the term)`: rare terms weigh more.
fn term_scores(lines: &[MarkedLine]) -> Vec<f64> {
    let n = lines.len().max(1) as f64;
    let holding = |term: &String| lines.iter().filter(|l| l.terms.contains(term)).count();
    lines
        .iter()
        .map(|line| {
            line.terms
                .iter()
                .map(|t| (1.0 + n / holding(t).max(1) as f64).ln())
                .sum()
        })
        .collect()
}

/// The highest-scoring line (the first of equals); None when none scored.
fn best_index(scores: &[f64]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, s) in scores.iter().enumerate() {
        if *s > 0.0 && best.is_none_or(|b| *s > scores[b]) {
            best = Some(i);
        }
    }
    best
}

/// Line `best` and the neighbours that fit in [`SNIPPET_CHARS`], the
/// better-scoring side first (above and below in turn when equal). A line
/// too long on its own is cut around `focus` (a character offset).
fn window(lines: &[(usize, &str)], scores: &[f64], best: usize, focus: usize) -> Snippet {
    let Some(&(best_line, text)) = lines.get(best) else {
        return Snippet {
            text: String::new(),
            start_line: 0,
            end_line: 0,
            best_line: 0,
        };
    };
    let len = |i: usize| lines[i].1.chars().count();
    if len(best) > SNIPPET_CHARS {
        return Snippet {
            text: cut_around(text, focus),
            start_line: best_line,
            end_line: best_line,
            best_line,
        };
    }
    let (mut lo, mut hi) = (best, best);
    let mut size = len(best);
    let (mut above, mut below) = (0usize, 0usize);
    loop {
        let up = (lo > 0 && size + len(lo - 1) < SNIPPET_CHARS).then(|| lo - 1);
        let down = (hi + 1 < lines.len() && size + len(hi + 1) < SNIPPET_CHARS).then_some(hi + 1);
        let take_up = match (up, down) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(u), Some(d)) => {
                scores[u] > scores[d] || (scores[u] == scores[d] && above <= below)
            }
        };
        if take_up {
            lo -= 1;
            above += 1;
            size += len(lo) + 1;
        } else {
            hi += 1;
            below += 1;
            size += len(hi) + 1;
        }
    }
    // Blank lines at the edges say nothing.
    while lo < best && lines[lo].1.trim().is_empty() {
        lo += 1;
    }
    while hi > best && lines[hi].1.trim().is_empty() {
        hi -= 1;
    }
    let text: Vec<&str> = lines[lo..=hi].iter().map(|(_, l)| *l).collect();
    Snippet {
        text: text.join("\n"),
        start_line: lines[lo].0,
        end_line: lines[hi].0,
        best_line,
    }
}

/// [`SNIPPET_CHARS`] of one long line, starting a little before `focus`,
/// with `…` where it was cut.
fn cut_around(line: &str, focus: usize) -> String {
    let total = line.chars().count();
    let room = SNIPPET_CHARS - 2;
    let start = focus
        .saturating_sub(room / 4)
        .min(total.saturating_sub(room));
    let end = (start + room).min(total);
    let piece: String = line.chars().skip(start).take(end - start).collect();
    let mut out = String::with_capacity(piece.len() + 6);
    if start > 0 {
        out.push('…');
    }
    out.push_str(&piece);
    if end < total {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(word: &str) -> String {
        format!("{OPEN}{word}{CLOSE}")
    }

    #[test]
    fn the_rare_terms_line_wins_and_its_neighbours_fill_the_budget() {
        let mut lines: Vec<String> = (1..=40)
            .map(|i| format!("My {} color number {i} is blue.", mark("favorite")))
            .collect();
        lines.push(format!(
            "My {} {} {} is Helix.",
            mark("favorite"),
            mark("text"),
            mark("editor")
        ));
        let s = from_highlight(&lines.join("\n"), 3, 43);
        assert_eq!(s.best_line, 43);
        assert_eq!(s.end_line, 43, "the match is the chunk's last line");
        assert!(s.text.ends_with("My favorite text editor is Helix."));
        assert!(s.text.chars().count() <= SNIPPET_CHARS);
        assert!(s.start_line > 3 && s.start_line < 43);
        assert_eq!(s.text.lines().count(), 43 - s.start_line + 1);
        assert!(!s.text.contains(OPEN) && !s.text.contains(CLOSE));
    }

    #[test]
    fn a_long_line_is_cut_around_its_match() {
        let line = format!("{} {} {}", "x".repeat(900), mark("needle"), "y".repeat(900));
        let s = from_highlight(&line, 7, 7);
        assert!(s.text.contains("needle"), "{}", s.text);
        assert!(s.text.starts_with('…') && s.text.ends_with('…'));
        assert_eq!(s.text.chars().count(), SNIPPET_CHARS);
        assert_eq!((s.start_line, s.end_line, s.best_line), (7, 7, 7));
    }

    #[test]
    fn unmarked_text_shows_its_first_content_lines() {
        let s = head("### 18:02 · user · tui\n\nGave Ana the key.\nMore.", 10, 13);
        assert_eq!(s.best_line, 12);
        assert!(s.text.starts_with("### 18:02"), "{}", s.text);
        assert!(s.text.ends_with("More."));
        assert_eq!((s.start_line, s.end_line), (10, 13));
    }

    #[test]
    fn a_vector_line_is_the_centre() {
        let text: Vec<String> = (0..60)
            .map(|i| format!("line {i} of filler text"))
            .collect();
        let s = around_line(&text.join("\n"), 100, 159, 59);
        assert_eq!((s.best_line, s.end_line), (159, 159));
        assert!(s.text.ends_with("line 59 of filler text"));
        assert!(s.start_line > 100);
    }

    #[test]
    fn pieces_of_a_split_line_share_its_number() {
        assert_eq!(numbered("abc", 5, 5), [(5, "abc")]);
        assert_eq!(numbered("a\nb", 5, 6), [(5, "a"), (6, "b")]);
    }
}
