//! Scripted replies: what the fake model says and how its stream ends.

use std::time::Duration;

/// One scripted answer to a chat request. Build with the constructors, adjust
/// with the `with_*` / modifier methods.
#[derive(Clone, Debug)]
pub struct Reply {
    pub(super) body: ReplyBody,
    pub(super) finish_reason: Option<String>,
    pub(super) end: StreamEnd,
    pub(super) frame_delay: Option<Duration>,
}

#[derive(Clone, Debug)]
pub(super) enum ReplyBody {
    Stream(Vec<Piece>),
    Status {
        status: u16,
        body: String,
    },
    ContextOverflow,
    Hang,
    RawSse(String),
    /// This content delta, again and again, never finishing (a server
    /// ignoring max_tokens), up to this many bytes of frames; then the
    /// connection closes without a finish_reason.
    Endless {
        piece: String,
        up_to: usize,
    },
}

#[derive(Clone, Debug)]
pub(super) enum Piece {
    Content(String),
    Reasoning(String),
    /// A native tool call: the first frame carries id and name, the
    /// arguments string follows in the given fragments.
    Call {
        index: usize,
        id: String,
        name: String,
        fragments: Vec<String>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StreamEnd {
    /// finish_reason, timings, usage, `[DONE]`.
    Done,
    /// The connection closes after the content: no finish_reason, no `[DONE]`.
    Truncated,
    /// The content, then nothing more, connection held open.
    Stall,
}

impl Reply {
    fn stream(pieces: Vec<Piece>) -> Self {
        Self {
            body: ReplyBody::Stream(pieces),
            finish_reason: None,
            end: StreamEnd::Done,
            frame_delay: None,
        }
    }

    /// Content streamed a word at a time (each delta a word plus the whitespace after it).
    pub fn text(text: &str) -> Self {
        Self::stream(split_words(text).into_iter().map(Piece::Content).collect())
    }

    /// Content streamed as exactly these deltas.
    pub fn chunks<S: AsRef<str>>(deltas: &[S]) -> Self {
        Self::stream(
            deltas
                .iter()
                .map(|d| Piece::Content(d.as_ref().to_string()))
                .collect(),
        )
    }

    /// Native (`--jinja`) tool calls, `(name, arguments JSON text)`, each
    /// arguments string split across frames 5 characters at a time. Ids are
    /// `fake_call_<n>`, numbered over the fake's lifetime (unique, as
    /// llama-server's random ids are); finish_reason is "tool_calls".
    pub fn tool_calls(calls: &[(&str, &str)]) -> Self {
        let pieces = calls
            .iter()
            .enumerate()
            .map(|(index, (name, arguments))| Piece::Call {
                index,
                id: String::new(), // assigned when sent
                name: name.to_string(),
                fragments: split_chars(arguments, 5),
            })
            .collect();
        Self::stream(pieces).finish_reason("tool_calls")
    }

    /// An HTTP error answer with this body (sent as is).
    pub fn status(status: u16, body: &str) -> Self {
        Self {
            body: ReplyBody::Status {
                status,
                body: body.to_string(),
            },
            ..Self::stream(Vec::new())
        }
    }

    /// llama-server's 400 `exceed_context_size_error`, whatever the prompt size.
    pub fn context_overflow() -> Self {
        Self {
            body: ReplyBody::ContextOverflow,
            ..Self::stream(Vec::new())
        }
    }

    /// Never answers (not even headers): for timeouts and interrupts.
    pub fn hang() -> Self {
        Self {
            body: ReplyBody::Hang,
            ..Self::stream(Vec::new())
        }
    }

    /// This exact text as the `text/event-stream` body.
    pub fn raw_sse(body: &str) -> Self {
        Self {
            body: ReplyBody::RawSse(body.to_string()),
            ..Self::stream(Vec::new())
        }
    }

    /// Streams `piece` as content over and over, never finishing, for up
    /// to `up_to` bytes of frames (then closes, as a truncated stream).
    pub fn endless(piece: &str, up_to: usize) -> Self {
        Self {
            body: ReplyBody::Endless {
                piece: piece.to_string(),
                up_to,
            },
            ..Self::stream(Vec::new())
        }
    }

    /// `reasoning_content` deltas (word by word) before everything else.
    pub fn with_reasoning(mut self, reasoning: &str) -> Self {
        if let ReplyBody::Stream(pieces) = &mut self.body {
            let words = split_words(reasoning).into_iter().map(Piece::Reasoning);
            pieces.splice(0..0, words);
        }
        self
    }

    /// Content (word by word) before the tool calls of a `tool_calls` reply.
    pub fn with_text(mut self, text: &str) -> Self {
        if let ReplyBody::Stream(pieces) = &mut self.body {
            let at = pieces
                .iter()
                .position(|p| matches!(p, Piece::Call { .. }))
                .unwrap_or(pieces.len());
            pieces.splice(at..at, split_words(text).into_iter().map(Piece::Content));
        }
        self
    }

    /// Default "stop" ("tool_calls" for native calls); "length" for max_tokens.
    pub fn finish_reason(mut self, reason: &str) -> Self {
        self.finish_reason = Some(reason.to_string());
        self
    }

    /// Close the connection after the content: no finish_reason, no `[DONE]`.
    pub fn truncated(mut self) -> Self {
        self.end = StreamEnd::Truncated;
        self
    }

    /// Send the content, then stall with the connection open.
    pub fn stall(mut self) -> Self {
        self.end = StreamEnd::Stall;
        self
    }

    /// Wait this long before each frame (a slow model).
    pub fn frame_delay(mut self, delay: Duration) -> Self {
        self.frame_delay = Some(delay);
        self
    }

    /// The content the model "generates", as llama-server's cache holds it.
    /// Numbers the calls of this reply from `next_id` on.
    pub(super) fn assign_call_ids(&mut self, next_id: &mut u64) {
        let ReplyBody::Stream(pieces) = &mut self.body else {
            return;
        };
        for piece in pieces {
            if let Piece::Call { id, .. } = piece {
                *id = format!("fake_call_{next_id}");
                *next_id += 1;
            }
        }
    }

    pub(super) fn generated_text(&self) -> String {
        let ReplyBody::Stream(pieces) = &self.body else {
            return String::new();
        };
        let mut text = String::new();
        for piece in pieces {
            match piece {
                Piece::Content(c) => text.push_str(c),
                Piece::Reasoning(r) => text.push_str(r),
                Piece::Call {
                    name, fragments, ..
                } => {
                    text.push_str(name);
                    text.push_str(&fragments.concat());
                }
            }
        }
        text
    }
}

/// Words with the whitespace after each, so the deltas join back to `text`.
fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if !c.is_whitespace() && current.ends_with(char::is_whitespace) {
            words.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

fn split_chars(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}
