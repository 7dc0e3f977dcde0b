//! Splits a streamed reply into visible text, reasoning and tool-call blocks.
//!
//! Fed with content deltas as they arrive. Each delta is scanned once; the
//! only thing carried from one delta to the next is a fragment that might
//! still become a tag (`<tool_c`, at most 12 bytes), so the whole stream is
//! processed in O(n) and a partial tag never reaches the screen.

use crate::providers::StreamChunk;

const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";
const CALL_OPEN: &str = "<tool_call>";
const CALL_CLOSE: &str = "</tool_call>";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Text,
    Think,
    Call,
}

/// The body of one `<tool_call>` block, as the model wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawBlock {
    pub body: String,
    /// False when the reply ended (max_tokens) before `</tool_call>`.
    pub closed: bool,
}

#[derive(Debug)]
pub struct StreamSplitter {
    mode: Mode,
    /// Native mode: `<tool_call>` is ordinary text there.
    detect_calls: bool,
    /// A possible partial tag held back from the previous delta.
    pending: String,
    /// Whitespace is held until visible text follows it, so a reply never
    /// shows blank lines where a tag or block was removed.
    held_ws: String,
    /// Whitespace after the last removed `<tool_call>` block.
    block_ws: String,
    after_block: bool,
    shown_text: bool,
    block: String,
    /// Inside a JSON string of the current block: a `<tool_call>` there is
    /// data (a path, a file body), not a new call.
    in_json_string: bool,
    escaped: bool,
    blocks: Vec<RawBlock>,
    /// Everything except reasoning, tags of tool calls included (the history copy).
    raw: String,
}

enum TagMatch {
    Full(&'static str),
    Partial,
    None,
}

impl StreamSplitter {
    /// `detect_calls`: route `<tool_call>` blocks out of the visible text
    /// (auto and qwen3 formats); `<think>` is always separated.
    pub fn new(detect_calls: bool) -> Self {
        Self {
            mode: Mode::Text,
            detect_calls,
            pending: String::new(),
            held_ws: String::new(),
            block_ws: String::new(),
            after_block: false,
            shown_text: false,
            block: String::new(),
            in_json_string: false,
            escaped: false,
            blocks: Vec::new(),
            raw: String::new(),
        }
    }

    /// For a reply known to open inside reasoning (its template put `<think>`
    /// in the prompt, so only `</think>` appears in the output).
    pub(crate) fn starting_in_think(mut self) -> Self {
        self.mode = Mode::Think;
        self
    }

    /// Feeds one content delta; returns what can be shown now.
    pub fn push(&mut self, delta: &str) -> Vec<StreamChunk> {
        let mut out = Vec::new();
        let mut input = std::mem::take(&mut self.pending);
        input.push_str(delta);
        let mut start = 0;
        let mut scan = 0;
        while let Some(found) = input[scan..].find('<') {
            let at = scan + found;
            match self.match_tag(&input[at..]) {
                TagMatch::Full(tag) => {
                    self.emit(&input[start..at], &mut out);
                    start = at;
                    // Inside a JSON string of the open block it is data: scan on.
                    if tag == CALL_OPEN && self.mode == Mode::Call && self.in_json_string {
                        scan = at + 1;
                        continue;
                    }
                    self.switch(tag);
                    start = at + tag.len();
                    scan = start;
                }
                TagMatch::Partial => {
                    self.emit(&input[start..at], &mut out);
                    self.pending = input[at..].to_string();
                    return coalesce(out);
                }
                TagMatch::None => scan = at + 1,
            }
        }
        self.emit(&input[start..], &mut out);
        coalesce(out)
    }

    /// The reply ended. A fragment that could still have been a tag is
    /// dropped (the reply was cut inside it), as is trailing whitespace.
    /// Returns the tool-call blocks in order; a block the reply ended
    /// inside comes last with `closed: false`.
    pub fn finish(mut self) -> Vec<RawBlock> {
        if self.mode == Mode::Call {
            let body = std::mem::take(&mut self.block);
            self.blocks.push(RawBlock {
                body,
                closed: false,
            });
        }
        self.blocks
    }

    /// The reply minus its reasoning, as pushed so far (only meaningful
    /// after the last push; `finish` may drop a trailing partial tag).
    pub(crate) fn raw_without_reasoning(&self) -> &str {
        &self.raw
    }

    fn tags(&self) -> &'static [&'static str] {
        match (self.mode, self.detect_calls) {
            (Mode::Text, true) => &[THINK_OPEN, CALL_OPEN, THINK_CLOSE],
            (Mode::Text, false) => &[THINK_OPEN, THINK_CLOSE],
            (Mode::Think, _) => &[THINK_CLOSE],
            (Mode::Call, _) => &[CALL_CLOSE, CALL_OPEN],
        }
    }

    fn match_tag(&self, rest: &str) -> TagMatch {
        let mut partial = false;
        for &tag in self.tags() {
            if rest.starts_with(tag) {
                return TagMatch::Full(tag);
            }
            partial |= tag.starts_with(rest);
        }
        if partial {
            TagMatch::Partial
        } else {
            TagMatch::None
        }
    }

    fn switch(&mut self, tag: &'static str) {
        match (self.mode, tag) {
            (Mode::Text, THINK_OPEN) => self.mode = Mode::Think,
            (Mode::Think, THINK_CLOSE) => self.mode = Mode::Text,
            // A `</think>` with no opening: the reasoning before it already
            // went out as text (see `starting_in_think`); just hide the tag.
            (Mode::Text, THINK_CLOSE) => {}
            (Mode::Text, CALL_OPEN) => {
                self.raw.push_str(CALL_OPEN);
                self.block_ws.clear();
                self.mode = Mode::Call;
            }
            (Mode::Call, CALL_CLOSE) => {
                self.raw.push_str(CALL_CLOSE);
                self.close_block(true);
                self.after_block = true;
                self.mode = Mode::Text;
            }
            // The model opened a new call without closing the last one.
            (Mode::Call, CALL_OPEN) => {
                self.raw.push_str(CALL_OPEN);
                self.close_block(false);
            }
            _ => {}
        }
    }

    fn close_block(&mut self, closed: bool) {
        let body = std::mem::take(&mut self.block);
        self.blocks.push(RawBlock { body, closed });
        self.in_json_string = false;
        self.escaped = false;
    }

    fn track_json_strings(&mut self, segment: &str) {
        for byte in segment.bytes() {
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = self.in_json_string;
            } else if byte == b'"' {
                self.in_json_string = !self.in_json_string;
            }
        }
    }

    fn emit(&mut self, segment: &str, out: &mut Vec<StreamChunk>) {
        if segment.is_empty() {
            return;
        }
        match self.mode {
            Mode::Think => out.push(StreamChunk::Reasoning(segment.to_string())),
            Mode::Call => {
                self.raw.push_str(segment);
                self.block.push_str(segment);
                self.track_json_strings(segment);
            }
            Mode::Text => {
                self.raw.push_str(segment);
                self.emit_text(segment, out);
            }
        }
    }

    fn emit_text(&mut self, segment: &str, out: &mut Vec<StreamChunk>) {
        let body = segment.trim_end();
        if body.is_empty() {
            if self.shown_text {
                self.gap_mut().push_str(segment);
            }
            return;
        }
        let text = body.trim_start();
        let lead = &body[..body.len() - text.len()];
        let mut visible = String::new();
        if self.shown_text {
            // One gap where blocks were removed: the whitespace before the
            // first block if there was any, else the whitespace after the last.
            self.gap_mut().push_str(lead);
            if self.after_block && self.held_ws.is_empty() {
                visible.push_str(&self.block_ws);
            } else {
                visible.push_str(&self.held_ws);
            }
        }
        // Nothing shown yet: leading whitespace (after `</think>`) is dropped.
        visible.push_str(text);
        self.held_ws = segment[body.len()..].to_string();
        self.block_ws.clear();
        self.after_block = false;
        self.shown_text = true;
        out.push(StreamChunk::Text(visible));
    }

    fn gap_mut(&mut self) -> &mut String {
        if self.after_block {
            &mut self.block_ws
        } else {
            &mut self.held_ws
        }
    }
}

/// Merges neighbouring chunks of the same kind.
fn coalesce(chunks: Vec<StreamChunk>) -> Vec<StreamChunk> {
    let mut merged: Vec<StreamChunk> = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        match (merged.last_mut(), chunk) {
            (Some(StreamChunk::Text(last)), StreamChunk::Text(next)) => last.push_str(&next),
            (Some(StreamChunk::Reasoning(last)), StreamChunk::Reasoning(next)) => {
                last.push_str(&next)
            }
            (_, chunk) => merged.push(chunk),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPLY: &str = "<think>\nI should read <tool_call>{\"name\": \"no\"}</tool_call> both.\n</think>\n\n\
        Reading a < b and <b>bold</b> files.\n\
        <tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a<tool_call>.txt\"}}\n</tool_call>\n\
        <tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b.txt\"}}\n</tool_call>\n\
        Done.\n";

    fn run(parts: &[&str]) -> (String, String, Vec<RawBlock>) {
        let mut splitter = StreamSplitter::new(true);
        let (mut text, mut reasoning) = (String::new(), String::new());
        for part in parts {
            for chunk in splitter.push(part) {
                match chunk {
                    StreamChunk::Text(t) => {
                        assert!(
                            !is_partial_tag_visible(&t),
                            "partial tag in {t:?} (parts {parts:?})"
                        );
                        text.push_str(&t);
                    }
                    StreamChunk::Reasoning(r) => reasoning.push_str(&r),
                }
            }
        }
        (text, reasoning, splitter.finish())
    }

    /// A chunk of visible text must not hold one of our tags, nor end with
    /// the start of one (the rest would arrive in the next chunk).
    fn is_partial_tag_visible(text: &str) -> bool {
        [THINK_OPEN, THINK_CLOSE, CALL_OPEN, CALL_CLOSE]
            .iter()
            // A lone "<" may be ordinary text ("a < b"); two characters of a tag may not.
            .any(|tag| text.contains(tag) || (2..tag.len()).any(|n| text.ends_with(&tag[..n])))
    }

    #[test]
    fn every_split_point_gives_the_same_result_and_no_partial_tag() {
        let expected_text = "Reading a < b and <b>bold</b> files.\nDone.";
        let expected_reasoning =
            "\nI should read <tool_call>{\"name\": \"no\"}</tool_call> both.\n";
        let (text, reasoning, blocks) = run(&[REPLY]);
        assert_eq!(text, expected_text);
        assert_eq!(reasoning, expected_reasoning);
        assert_eq!(blocks.len(), 2);
        assert!(blocks[0].body.contains("a<tool_call>.txt") && blocks[0].closed);
        let bounds: Vec<usize> = (0..=REPLY.len())
            .filter(|i| REPLY.is_char_boundary(*i))
            .collect();
        for &i in &bounds {
            for &j in bounds.iter().filter(|j| **j >= i) {
                let parts = [&REPLY[..i], &REPLY[i..j], &REPLY[j..]];
                let (t, r, b) = run(&parts);
                assert_eq!(t, expected_text, "split at {i},{j}");
                assert_eq!(r, expected_reasoning, "split at {i},{j}");
                assert_eq!(b, blocks, "split at {i},{j}");
            }
        }
    }

    #[test]
    fn byte_sized_deltas() {
        let parts: Vec<String> = REPLY.chars().map(String::from).collect();
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        let (text, _, blocks) = run(&refs);
        assert_eq!(text, "Reading a < b and <b>bold</b> files.\nDone.");
        assert_eq!(blocks.len(), 2);
    }

    #[test]
    fn unclosed_block_is_returned_open() {
        let (text, _, blocks) =
            run(&["Sure.\n<tool_call>\n{\"name\": \"glob\", \"arguments\": {\"pattern\": \"*\"}}"]);
        assert_eq!(text, "Sure.");
        assert_eq!(blocks.len(), 1);
        assert!(!blocks[0].closed);
    }

    #[test]
    fn native_mode_keeps_tool_call_text_visible() {
        let mut splitter = StreamSplitter::new(false);
        let chunks = splitter.push("<think>hm</think>see <tool_call>x</tool_call>");
        assert_eq!(
            chunks,
            vec![
                StreamChunk::Reasoning("hm".into()),
                StreamChunk::Text("see <tool_call>x</tool_call>".into())
            ]
        );
        assert!(splitter.finish().is_empty());
    }

    #[test]
    fn orphan_think_close_is_hidden() {
        let mut splitter = StreamSplitter::new(true).starting_in_think();
        let chunks = splitter.push("plan</think>\n\nanswer");
        assert_eq!(
            chunks,
            vec![
                StreamChunk::Reasoning("plan".into()),
                StreamChunk::Text("answer".into())
            ]
        );
    }

    #[test]
    fn a_reply_cut_inside_a_tag_drops_the_fragment() {
        let mut splitter = StreamSplitter::new(true);
        assert_eq!(
            splitter.push("ok <tool_c"),
            vec![StreamChunk::Text("ok".into())]
        );
        assert!(splitter.finish().is_empty());
    }
}
