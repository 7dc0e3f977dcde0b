//! Splits an answer into Discord messages (2,000 characters each).
//!
//! Cuts fall on line boundaries; a line longer than a message is cut at a
//! word boundary, else anywhere. A code block cut in two is closed at the end
//! of one chunk and reopened (same info string) at the start of the next, so
//! every chunk renders on its own.

use crate::surfaces::utf16::{pieces, width};

/// Discord's limit for a message's content.
pub const DISCORD_LIMIT: usize = 2000;

const CLOSE_FENCE: &str = "```";
/// A reopened fence longer than this is reopened bare (the info string is
/// only a language hint).
const MAX_REOPEN: usize = 40;

/// The text of `answer` in chunks of at most `limit` UTF-16 units (at least
/// 64), none empty.
pub fn split(answer: &str, limit: usize) -> Vec<String> {
    let limit = limit.max(64);
    let mut out = Chunks {
        limit,
        chunks: Vec::new(),
        current: String::new(),
        fence: None,
    };
    for line in answer.trim_end().lines() {
        out.push_line(line);
    }
    out.flush(false);
    out.chunks
}

struct Chunks {
    limit: usize,
    chunks: Vec<String>,
    current: String,
    /// The line that opened the code block we are inside, if any.
    fence: Option<String>,
}

impl Chunks {
    fn push_line(&mut self, line: &str) {
        let toggles = is_fence(line);
        // Room a single piece may take in a fresh chunk: the reopened fence
        // before it and a closing fence after it.
        let reopen = self.fence.as_deref().map_or(0, |f| width(f) + 1);
        let room = self.limit - reopen - (1 + CLOSE_FENCE.len());
        // A chunk that ends inside a block needs room to close it.
        let open_after = self.fence.is_some() != toggles;
        let close_cost = if open_after { 1 + CLOSE_FENCE.len() } else { 0 };
        for piece in pieces(line, room) {
            let sep = usize::from(!self.current.is_empty());
            if width(&self.current) + sep + width(piece) + close_cost > self.limit {
                if toggles && self.fence.is_some() {
                    // The closing fence itself does not fit: the flush
                    // closes the block, and nothing needs reopening.
                    self.flush(false);
                    self.fence = None;
                    return;
                }
                self.flush(true);
            }
            if !self.current.is_empty() {
                self.current.push('\n');
            }
            self.current.push_str(piece);
        }
        if toggles {
            self.fence = match self.fence {
                Some(_) => None,
                None => Some(reopen_line(line)),
            };
        }
    }

    /// Ends the current chunk; `more` means another one follows, which
    /// reopens the code block this one closes.
    fn flush(&mut self, more: bool) {
        if self.fence.is_some() && !self.current.trim().is_empty() {
            self.current.push('\n');
            self.current.push_str(CLOSE_FENCE);
        }
        let done = std::mem::take(&mut self.current);
        if !done.trim().is_empty() && !is_empty_block(&done) {
            self.chunks.push(done);
        }
        if let (true, Some(fence)) = (more, &self.fence) {
            self.current.push_str(fence);
        }
    }
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

fn reopen_line(line: &str) -> String {
    let t = line.trim();
    if width(t) > MAX_REOPEN {
        t[..3].to_string()
    } else {
        t.to_string()
    }
}

/// A chunk that is only an opening and a closing fence (a block cut right
/// after its opening line reopened in the next chunk).
fn is_empty_block(chunk: &str) -> bool {
    let mut lines = chunk.lines().filter(|l| !l.trim().is_empty());
    matches!(
        (lines.next(), lines.next(), lines.next()),
        (Some(a), Some(b), None) if is_fence(a) && is_fence(b)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fences_balanced(chunk: &str) -> bool {
        chunk.lines().filter(|l| is_fence(l)).count() % 2 == 0
    }

    #[test]
    fn short_answer_is_one_chunk() {
        assert_eq!(split("hello\nworld\n", DISCORD_LIMIT), vec!["hello\nworld"]);
    }

    #[test]
    fn cuts_fall_on_line_boundaries() {
        let line = "x".repeat(30);
        let text = [line.as_str(); 10].join("\n");
        let chunks = split(&text, 100);
        assert!(chunks.iter().all(|c| width(c) <= 100));
        assert!(chunks.iter().all(|c| c.lines().all(|l| l == line)));
        assert_eq!(chunks.concat().replace('\n', ""), text.replace('\n', ""));
    }

    #[test]
    fn long_line_cuts_at_a_word_then_anywhere() {
        let words = "alpha beta gamma delta ".repeat(20);
        let chunks = split(&words, 64);
        assert!(chunks.iter().all(|c| width(c) <= 64));
        assert!(
            chunks
                .iter()
                .all(|c| !c.starts_with(' ') && !c.ends_with("alph"))
        );
        let joined: Vec<&str> = chunks.iter().flat_map(|c| c.split(' ')).collect();
        assert_eq!(joined.join(" "), words.trim_end());

        let blob = "y".repeat(300);
        let chunks = split(&blob, 64);
        assert!(chunks.iter().all(|c| width(c) <= 64));
        assert_eq!(chunks.concat(), blob);
    }

    #[test]
    fn code_block_is_closed_and_reopened() {
        let body: Vec<String> = (0..200).map(|i| format!("let x{i} = {i};")).collect();
        let text = format!("Here:\n```rust\n{}\n```\nDone.", body.join("\n"));
        let chunks = split(&text, 500);
        assert!(chunks.len() > 3);
        for chunk in &chunks {
            assert!(width(chunk) <= 500, "{} units", width(chunk));
            assert!(fences_balanced(chunk), "unbalanced:\n{chunk}");
        }
        assert!(chunks[1].starts_with("```rust\n"));
        assert!(chunks.last().unwrap().ends_with("Done."));
        // Nothing lost or duplicated besides the added fences.
        let code: Vec<&str> = chunks
            .iter()
            .flat_map(|c| c.lines())
            .filter(|l| l.starts_with("let "))
            .collect();
        assert_eq!(code, body.iter().map(String::as_str).collect::<Vec<_>>());
    }

    #[test]
    fn counts_utf16_units() {
        let emoji = "😀".repeat(100); // 200 units, 100 chars
        let chunks = split(&emoji, 64);
        assert!(chunks.iter().all(|c| width(c) <= 64));
        assert_eq!(chunks.concat(), emoji);
    }

    #[test]
    fn blank_answer_sends_nothing() {
        assert!(split("  \n\n", DISCORD_LIMIT).is_empty());
    }
}
