//! Server-sent events.
//!
//! An incremental parser: network chunks are fed as they arrive, split
//! anywhere (mid-line, mid-`\r\n`, mid-UTF-8 character), and each complete
//! event comes out once its terminating blank line has been seen. Bytes are
//! scanned once; a line is decoded only when it is complete, so a character
//! split across two chunks is never mangled.
//!
//! Bounded: one event past [`MAX_EVENT_BYTES`] (a line that never ends)
//! or a body past [`MAX_STREAM_BYTES`] ends the parse with
//! [`SseEvent::OverCap`]; nothing more is buffered after it.

use super::bounds::{MAX_EVENT_BYTES, MAX_STREAM_BYTES};

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseEvent {
    /// The `data:` payload; several `data:` lines of one event are joined by `\n`.
    Data(String),
    /// The OpenAI end-of-stream sentinel `data: [DONE]`.
    Done,
    /// An `error:` field. Not standard SSE, but llama-server writes stream
    /// errors this way, and dropping them would turn a clear server error
    /// into a confusing "stream ended early".
    Error(String),
    /// The stream went past a byte cap (see the module docs): the reader
    /// stops and keeps what came before, as a reply cut at `max_tokens`.
    OverCap,
}

#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the line being read (not yet terminated).
    line: Vec<u8>,
    /// The last byte seen was `\r`: a `\n` right after it belongs to the same line end.
    after_cr: bool,
    data: String,
    has_data: bool,
    error: Option<String>,
    /// Body bytes fed so far.
    total: usize,
    /// A cap was hit: `OverCap` was returned, everything after is ignored.
    over: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next chunk of the body; returns the events it completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        let mut rest = bytes;
        if rest.is_empty() || self.over {
            return events;
        }
        self.total = self.total.saturating_add(rest.len());
        if self.total > MAX_STREAM_BYTES {
            return self.over_cap();
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..end]);
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut events);
            let mut next = end + 1;
            if rest[end] == b'\r' {
                match rest.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    // The `\n` of a `\r\n` may come with the next chunk.
                    None => self.after_cr = true,
                }
            }
            rest = &rest[next..];
        }
        self.line.extend_from_slice(rest);
        if self.line.len() + self.data.len() > MAX_EVENT_BYTES {
            events.extend(self.over_cap());
        }
        events
    }

    fn over_cap(&mut self) -> Vec<SseEvent> {
        self.over = true;
        self.line = Vec::new();
        self.data = String::new();
        self.has_data = false;
        vec![SseEvent::OverCap]
    }

    /// The body ended: dispatches an event whose blank line never came
    /// (some servers close right after the last `data:` line).
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut events = Vec::new();
        if self.over {
            return events;
        }
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut events);
        }
        self.dispatch(&mut events);
        events
    }

    fn process_line(&mut self, line: &[u8], events: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(events);
            return;
        }
        if line[0] == b':' {
            return; // a comment (keep-alive)
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "error" => self.error = Some(value.to_string()),
            // `event`, `id`, `retry` carry nothing an OpenAI-style stream needs.
            _ => {}
        }
    }

    fn dispatch(&mut self, events: &mut Vec<SseEvent>) {
        if let Some(error) = self.error.take() {
            events.push(SseEvent::Error(error));
        }
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let data = std::mem::take(&mut self.data);
        if data.trim() == "[DONE]" {
            events.push(SseEvent::Done);
        } else {
            events.push(SseEvent::Data(data));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed_all(parts: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for part in parts {
            events.extend(parser.feed(part));
        }
        events.extend(parser.finish());
        events
    }

    fn data(text: &str) -> SseEvent {
        SseEvent::Data(text.to_string())
    }

    #[test]
    fn parses_events_and_done() {
        let body = b"data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n";
        assert_eq!(
            feed_all(&[body]),
            vec![data("{\"a\":1}"), data("{\"b\":2}"), SseEvent::Done]
        );
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let body = "data: héllo 🦀\r\n\r\n: keep-alive\r\ndata: line1\r\ndata: line2\r\n\r\ndata:[DONE]\r\n\r\n";
        let expected = vec![data("héllo 🦀"), data("line1\nline2"), SseEvent::Done];
        let bytes = body.as_bytes();
        for i in 0..=bytes.len() {
            for j in i..=bytes.len() {
                let got = feed_all(&[&bytes[..i], &bytes[i..j], &bytes[j..]]);
                assert_eq!(got, expected, "split at {i} and {j}");
            }
        }
    }

    #[test]
    fn byte_by_byte_with_lone_cr_line_ends() {
        let body = b"data: a\r\rdata: b\r\r";
        let parts: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(feed_all(&parts), vec![data("a"), data("b")]);
    }

    #[test]
    fn comments_and_other_fields_are_ignored() {
        let body = b": ping\n\nevent: message\nid: 7\nretry: 100\ndata: x\n\n";
        assert_eq!(feed_all(&[body]), vec![data("x")]);
    }

    #[test]
    fn data_without_space_and_empty_data() {
        let body = b"data:x\n\ndata\n\n";
        assert_eq!(feed_all(&[body]), vec![data("x"), data("")]);
    }

    #[test]
    fn a_last_event_without_blank_line_is_flushed_at_finish() {
        assert_eq!(feed_all(&[b"data: tail"]), vec![data("tail")]);
    }

    #[test]
    fn a_line_that_never_ends_is_cut_at_the_event_cap() {
        let mut parser = SseParser::new();
        let chunk = vec![b'x'; 1 << 20];
        let mut events = parser.feed(b"data: ");
        for _ in 0..=(MAX_EVENT_BYTES >> 20) {
            events.extend(parser.feed(&chunk));
        }
        assert_eq!(events, vec![SseEvent::OverCap]);
        assert!(parser.line.capacity() <= MAX_EVENT_BYTES, "nothing kept");
        assert!(parser.feed(b"\n\ndata: more\n\n").is_empty());
        assert!(parser.finish().is_empty());
    }

    #[test]
    fn a_body_past_the_stream_cap_ends_the_parse() {
        let mut parser = SseParser::new();
        let mut frame = b"data: ".to_vec();
        frame.resize((1 << 20) - 2, b'x');
        frame.extend_from_slice(b"\n\n");
        let (mut over, mut data) = (0, 0);
        for _ in 0..(MAX_STREAM_BYTES >> 20) + 4 {
            for event in parser.feed(&frame) {
                match event {
                    SseEvent::OverCap => over += 1,
                    _ => data += 1,
                }
            }
        }
        assert_eq!((over, data), (1, MAX_STREAM_BYTES >> 20));
    }

    #[test]
    fn error_field_is_reported() {
        let body = b"error: {\"code\":500}\n\n";
        assert_eq!(
            feed_all(&[body]),
            vec![SseEvent::Error("{\"code\":500}".into())]
        );
    }
}
