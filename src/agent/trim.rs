//! Trimming the tool outputs of the current turn when the turn alone does
//! not fit the window (older turns already left out): each output keeps
//! its head and tail around a marker saying how much was left out, so the
//! turn goes on instead of failing.
//!
//! Which outputs shrink: the oldest step's first, then the next; within
//! one step the largest first (all are cut to one common size). The newest
//! outputs are what the model is about to read, so they shrink last.
//! Outputs are trimmed in the session's history (not per request), so the
//! prompt prefix stays byte-identical over the following steps (docs/design.md §7)
//! until the window is full again; the transcript keeps them whole.

use crate::chat::ChatMessage;
use crate::protocol::Role;

/// No output is cut below this many bytes (head and tail together).
pub const FLOOR_BYTES: usize = 1024;

/// What the marker itself costs, in tokens (a generous estimate).
const MARKER_TOKENS: u64 = 40;

/// A tool output of the current turn, as the plan sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// Index in the history.
    pub index: usize,
    /// Which model reply it answers (outputs of one reply share it).
    pub step: usize,
    /// Its size now, in bytes and tokens.
    pub bytes: usize,
    pub tokens: u64,
}

impl Output {
    /// Tokens saved by cutting it to `keep` bytes (0 if it is not larger).
    fn saved(&self, keep: usize) -> u64 {
        if self.bytes <= keep || self.bytes == 0 {
            return 0;
        }
        let cut = (self.bytes - keep) as u64 * self.tokens / self.bytes as u64;
        cut.saturating_sub(MARKER_TOKENS)
    }
}

/// The tool outputs of `history[from..]`, each with the reply it answers.
pub fn outputs(history: &[ChatMessage], from: usize, tokens: &[Option<u64>]) -> Vec<Output> {
    let mut step = from;
    let mut found = Vec::new();
    for (i, message) in history.iter().enumerate().skip(from) {
        match message.role {
            Role::Assistant => step = i,
            Role::Tool => found.push(Output {
                index: i,
                step,
                bytes: message.content.len(),
                tokens: tokens[i].unwrap_or((message.content.len() as u64).div_ceil(4)),
            }),
            _ => {}
        }
    }
    found
}

/// How many bytes each output keeps so that at least `need` tokens go:
/// `(history index, bytes kept)` for every output that shrinks, or `None`
/// when even every output at [`FLOOR_BYTES`] is not enough.
pub fn plan(outputs: &[Output], need: u64) -> Option<Vec<(usize, usize)>> {
    let mut steps: Vec<usize> = outputs.iter().map(|o| o.step).collect();
    steps.dedup();
    let mut cuts = Vec::new();
    let mut need = need;
    for step in steps {
        if need == 0 {
            break;
        }
        let group: Vec<&Output> = outputs.iter().filter(|o| o.step == step).collect();
        let saved_at = |keep: usize| group.iter().map(|o| o.saved(keep)).sum::<u64>();
        let keep = if saved_at(FLOOR_BYTES) <= need {
            FLOOR_BYTES
        } else {
            // The largest common size that still saves enough.
            let (mut low, mut high) = (FLOOR_BYTES, group.iter().map(|o| o.bytes).max()?);
            while low < high {
                let mid = low + (high - low).div_ceil(2);
                if saved_at(mid) >= need {
                    low = mid;
                } else {
                    high = mid - 1;
                }
            }
            low
        };
        need = need.saturating_sub(saved_at(keep));
        cuts.extend(
            group
                .iter()
                .filter(|o| o.saved(keep) > 0)
                .map(|o| (o.index, keep)),
        );
    }
    (need == 0).then_some(cuts)
}

/// `text` cut to about `keep` bytes: two thirds head, one third tail, at
/// line ends where there are any, with a marker between saying how many
/// lines and bytes were left out.
pub fn head_tail(text: &str, keep: usize) -> String {
    if text.len() <= keep {
        return text.to_string();
    }
    let head_end = line_end_before(text, floor_char(text, keep * 2 / 3));
    let tail_from = line_start_after(text, ceil_char(text, text.len() - (keep - keep * 2 / 3)));
    let tail_from = tail_from.max(head_end);
    let left_out = &text[head_end..tail_from];
    let lines = left_out.matches('\n').count();
    format!(
        "{}\n[... {lines} lines ({} bytes) of this output left out to fit the context window; ask for a narrower part to see them ...]\n{}",
        text[..head_end].trim_end_matches('\n'),
        left_out.len(),
        &text[tail_from..]
    )
}

/// Just after the last newline at or before `at`, when that keeps at
/// least half of it; else `at`.
fn line_end_before(text: &str, at: usize) -> usize {
    match text[..at].rfind('\n') {
        Some(nl) if nl + 1 >= at / 2 => nl + 1,
        _ => at,
    }
}

/// Just after the first newline at or after `at`, when that keeps at
/// least half of the tail; else `at`.
fn line_start_after(text: &str, at: usize) -> usize {
    let tail = text.len() - at;
    match text[at..].find('\n') {
        Some(nl) if nl < tail / 2 => at + nl + 1,
        _ => at,
    }
}

fn floor_char(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_char(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(index: usize, step: usize, bytes: usize) -> Output {
        Output {
            index,
            step,
            bytes,
            tokens: bytes as u64 / 4,
        }
    }

    #[test]
    fn the_oldest_step_shrinks_first_and_the_newest_only_if_needed() {
        let outputs = [out(2, 1, 40_000), out(4, 3, 40_000)];
        // 5,000 tokens: the first step's output alone gives them.
        let cuts = plan(&outputs, 5_000).unwrap();
        assert_eq!(cuts.len(), 1);
        assert_eq!(cuts[0].0, 2);
        assert!(cuts[0].1 < 40_000 - 19_000 && cuts[0].1 > 40_000 - 21_000);
        // 12,000 tokens: the first to the floor, then the newest.
        let cuts = plan(&outputs, 12_000).unwrap();
        assert_eq!(cuts[0], (2, FLOOR_BYTES));
        assert_eq!(cuts[1].0, 4);
        assert!(cuts[1].1 > FLOOR_BYTES);
    }

    #[test]
    fn within_one_step_the_largest_shrink_to_a_common_size() {
        let outputs = [out(2, 1, 30_000), out(3, 1, 2_000), out(4, 1, 30_000)];
        let cuts = plan(&outputs, 6_000).unwrap();
        let kept: Vec<usize> = cuts.iter().map(|c| c.0).collect();
        assert_eq!(kept, [2, 4], "the small one is left whole");
        assert_eq!(cuts[0].1, cuts[1].1);
        let saved: u64 = [&outputs[0], &outputs[2]]
            .iter()
            .map(|o| o.saved(cuts[0].1))
            .sum();
        assert!((6_000..6_100).contains(&saved), "{saved}");
    }

    #[test]
    fn too_little_to_shed_is_none() {
        assert_eq!(plan(&[out(2, 1, 8_000)], 5_000), None);
        assert_eq!(plan(&[], 1), None);
        assert_eq!(plan(&[], 0), Some(vec![]));
    }

    #[test]
    fn head_and_tail_at_line_ends_with_a_marker_that_counts() {
        let text: String = (1..=1000).map(|n| format!("line {n:04}\n")).collect();
        let trimmed = head_tail(&text, 3_000);
        assert!(trimmed.len() < 3_200, "{}", trimmed.len());
        assert!(trimmed.starts_with("line 0001\n"));
        assert!(trimmed.ends_with("line 1000\n"));
        let marker = trimmed
            .lines()
            .find(|l| l.starts_with("[... "))
            .expect("a marker");
        let lines_kept = trimmed.lines().filter(|l| l.starts_with("line ")).count();
        assert!(
            marker.contains(&format!("{} lines", 1000 - lines_kept)),
            "{marker}"
        );
        let bytes_out = text.len() - lines_kept * 10;
        assert!(marker.contains(&format!("({bytes_out} bytes)")), "{marker}");
    }

    #[test]
    fn one_long_line_and_multibyte_text_are_cut_at_char_boundaries() {
        let text = "é".repeat(5_000);
        let trimmed = head_tail(&text, 1_001);
        assert!(trimmed.contains("0 lines"));
        assert!(trimmed.len() < 1_200);
        assert_eq!(head_tail("short", 1_000), "short");
    }
}
