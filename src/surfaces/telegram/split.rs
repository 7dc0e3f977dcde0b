//! Splits an answer into Telegram messages: each one's visible text stays
//! within 4,096 UTF-16 units (what the Bot API counts after parsing the
//! HTML). Cuts fall between paragraphs and code blocks; a block too long
//! for one message is cut between lines (a code block is closed at the
//! cut and reopened with its language after it), a line too long at a
//! word, else anywhere. Each piece is markdown rendered on its own, so
//! every message is valid HTML.

use super::html;
use crate::surfaces::utf16::{self, width};

/// The Bot API's limit for a message's text.
pub const TELEGRAM_LIMIT: usize = 4096;

/// Whether `markdown` fits one message once rendered. The source is never
/// shorter than what it renders to but for a few corner cases, so its
/// length answers first.
fn fits(markdown: &str, limit: usize) -> bool {
    width(markdown) <= limit || width(&html::visible(&html::render(markdown))) <= limit
}

/// `answer` as Telegram HTML messages, none empty, each within `limit`
/// visible units (at least 64).
pub fn split(answer: &str, limit: usize) -> Vec<String> {
    markdown_chunks(answer, limit.max(64))
        .iter()
        .map(|chunk| html::render(chunk))
        .filter(|html| !html.trim().is_empty())
        .collect()
}

/// The markdown pieces each message renders.
pub fn markdown_chunks(answer: &str, limit: usize) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut current = String::new();
    for block in blocks(answer) {
        if current.is_empty() && fits(&block, limit) {
            current = block;
            continue;
        }
        let joined = format!("{current}\n\n{block}");
        if !current.is_empty() && fits(&joined, limit) {
            current = joined;
            continue;
        }
        if !current.is_empty() {
            chunks.push(std::mem::take(&mut current));
        }
        if fits(&block, limit) {
            current = block;
            continue;
        }
        let mut pieces = cut_block(&block, limit);
        current = pieces.pop().unwrap_or_default();
        chunks.extend(pieces);
    }
    if !current.trim().is_empty() {
        chunks.push(current);
    }
    chunks
}

/// Paragraphs (runs of non-blank lines) and fenced code blocks, in order.
fn blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut in_code = false;
    for line in text.trim_end().lines() {
        let fence = is_fence(line);
        if in_code {
            current.push(line);
            if fence {
                in_code = false;
                out.push(current.join("\n"));
                current.clear();
            }
        } else if fence {
            if !current.is_empty() {
                out.push(current.join("\n"));
                current.clear();
            }
            current.push(line);
            in_code = true;
        } else if line.trim().is_empty() {
            if !current.is_empty() {
                out.push(current.join("\n"));
                current.clear();
            }
        } else {
            current.push(line);
        }
    }
    if !current.is_empty() {
        out.push(current.join("\n"));
    }
    out
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// One block too long for a message, cut into pieces that each fit.
fn cut_block(block: &str, limit: usize) -> Vec<String> {
    let lines: Vec<&str> = block.lines().collect();
    let (open, body, close) = match lines.as_slice() {
        [first, rest @ ..] if is_fence(first) => {
            let fence = first.trim_start();
            let marker = &fence[..fence.len() - fence.trim_start_matches(['`', '~']).len()];
            let body = match rest {
                [body @ .., last] if is_fence(last) => body,
                body => body,
            };
            (Some(fence.to_string()), body.to_vec(), marker.to_string())
        }
        _ => (None, lines, String::new()),
    };
    // What a piece of the block costs besides its lines.
    let wrap = |inner: &str| match &open {
        Some(open) => format!("{open}\n{inner}\n{close}"),
        None => inner.to_string(),
    };
    let overhead = open.as_ref().map_or(0, |o| width(o) + width(&close) + 2);
    let room = limit.saturating_sub(overhead).max(16);
    let mut pieces = Vec::new();
    let mut current = String::new();
    for line in body {
        for part in utf16::pieces(line, room) {
            let joined = if current.is_empty() {
                part.to_string()
            } else {
                format!("{current}\n{part}")
            };
            if current.is_empty() || fits(&wrap(&joined), limit) {
                current = joined;
            } else {
                pieces.push(wrap(&current));
                current = part.to_string();
            }
        }
    }
    if !current.is_empty() || pieces.is_empty() {
        pieces.push(wrap(&current));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visible_width(html: &str) -> usize {
        width(&html::visible(html))
    }

    #[test]
    fn short_answer_is_one_message() {
        assert_eq!(
            split("hello\n\nworld", TELEGRAM_LIMIT),
            vec!["hello\n\nworld"]
        );
        assert!(split(" \n\n", TELEGRAM_LIMIT).is_empty());
    }

    #[test]
    fn cuts_fall_between_paragraphs() {
        let para = "word ".repeat(150).trim_end().to_string(); // 749 units
        let text = vec![para.as_str(); 14].join("\n\n");
        let chunks = markdown_chunks(&text, TELEGRAM_LIMIT);
        assert_eq!(chunks.len(), 3);
        for chunk in &chunks {
            assert!(width(chunk) <= TELEGRAM_LIMIT);
            assert!(
                chunk.split("\n\n").all(|p| p == para),
                "a paragraph was cut"
            );
        }
    }

    #[test]
    fn a_long_code_block_is_closed_and_reopened() {
        let body: Vec<String> = (0..400).map(|i| format!("let x{i} = a < b;")).collect();
        let text = format!("Here:\n\n```rust\n{}\n```\n\nDone.", body.join("\n"));
        let messages = split(&text, TELEGRAM_LIMIT);
        assert!(messages.len() >= 2, "{}", messages.len());
        for m in &messages {
            assert!(visible_width(m) <= TELEGRAM_LIMIT);
            assert_eq!(
                m.matches("<pre>").count(),
                m.matches("</pre>").count(),
                "{m}"
            );
        }
        assert!(messages[1].starts_with("<pre><code class=\"language-rust\">"));
        assert!(messages.last().unwrap().ends_with("Done."));
        let code: Vec<String> = messages
            .iter()
            .flat_map(|m| {
                html::visible(m)
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .filter(|l| l.starts_with("let "))
            .collect();
        let expected: Vec<String> = body.iter().map(|l| l.replace("&lt;", "<")).collect();
        assert_eq!(code, expected, "nothing lost or repeated");
    }

    #[test]
    fn a_long_line_is_cut_at_words_then_anywhere() {
        let words = "alpha beta gamma delta ".repeat(400);
        let chunks = markdown_chunks(&words, 500);
        assert!(chunks.iter().all(|c| width(c) <= 500));
        let joined: Vec<&str> = chunks.iter().flat_map(|c| c.split_whitespace()).collect();
        assert_eq!(joined.join(" "), words.trim_end());
        let blob = "y".repeat(1200);
        let chunks = markdown_chunks(&blob, 500);
        assert!(chunks.iter().all(|c| width(c) <= 500));
        assert_eq!(chunks.concat(), blob);
    }

    #[test]
    fn counts_utf16_units() {
        let emoji = "😀".repeat(3000); // 6,000 units
        let messages = split(&emoji, TELEGRAM_LIMIT);
        assert_eq!(messages.len(), 2);
        assert!(messages.iter().all(|m| width(m) <= TELEGRAM_LIMIT));
    }
}
