//! A fake Anthropic Messages API: `POST /v1/messages` answered with the
//! event stream the real API sends (`message_start`, `content_block_*`,
//! `message_delta`, `message_stop`, with `ping`s between), from scripted
//! [`Reply`]s. Requests are recorded (see [`FakeRemote`]).

#![allow(dead_code)] // each test uses a different part

use serde_json::{Value, json};

use super::fake_remote::{Answer, End, FakeRemote, Recorded};

pub const MODEL: &str = "claude-sonnet-4-5-20250929";

pub struct FakeAnthropic {
    remote: FakeRemote,
}

impl FakeAnthropic {
    pub async fn start() -> FakeAnthropic {
        FakeAnthropic {
            remote: FakeRemote::start().await,
        }
    }

    /// For `[remote.anthropic] base_url`.
    pub fn url(&self) -> String {
        self.remote.url()
    }

    pub fn push(&self, reply: Reply) {
        self.remote.push(reply.answer());
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.remote.recorded()
    }

    pub fn hits(&self) -> usize {
        self.remote.hits()
    }
}

#[derive(Clone, Debug)]
enum Block {
    Text(Vec<String>),
    Thinking(Vec<String>),
    /// `input_json_delta` pieces after the start.
    ToolUse {
        id: String,
        name: String,
        pieces: Vec<String>,
    },
}

/// One scripted reply.
#[derive(Clone, Debug)]
pub struct Reply {
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Stream {
        blocks: Vec<Block>,
        stop_reason: Option<String>,
        /// input, output, cache read, cache write.
        usage: (u64, u64, u64, u64),
        end: StreamEnd,
    },
    Raw(Answer),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StreamEnd {
    Complete,
    /// The connection closes before `message_stop`.
    Truncated,
    /// The blocks, then silence.
    Stall,
    /// An `error` event (overloaded) after the blocks.
    Overloaded,
}

impl Reply {
    fn stream(blocks: Vec<Block>) -> Self {
        Self {
            kind: Kind::Stream {
                blocks,
                stop_reason: None,
                usage: (10, 5, 0, 0),
                end: StreamEnd::Complete,
            },
        }
    }

    /// One text block streamed as exactly these deltas.
    pub fn text(deltas: &[&str]) -> Self {
        Self::stream(vec![Block::Text(strings(deltas))])
    }

    /// A tool_use block whose input arrives in these `partial_json` pieces.
    pub fn tool_use(id: &str, name: &str, pieces: &[&str]) -> Self {
        Self::stream(Vec::new()).and_tool_use(id, name, pieces)
    }

    pub fn and_text(self, deltas: &[&str]) -> Self {
        self.with_block(Block::Text(strings(deltas)))
    }

    pub fn and_tool_use(self, id: &str, name: &str, pieces: &[&str]) -> Self {
        self.with_block(Block::ToolUse {
            id: id.into(),
            name: name.into(),
            pieces: strings(pieces),
        })
    }

    /// A thinking block first.
    pub fn with_thinking(mut self, deltas: &[&str]) -> Self {
        if let Kind::Stream { blocks, .. } = &mut self.kind {
            blocks.insert(0, Block::Thinking(strings(deltas)));
        }
        self
    }

    /// Input tokens (uncached), output, cache read, cache write.
    pub fn usage(mut self, input: u64, output: u64, read: u64, write: u64) -> Self {
        if let Kind::Stream { usage, .. } = &mut self.kind {
            *usage = (input, output, read, write);
        }
        self
    }

    pub fn stop_reason(mut self, reason: &str) -> Self {
        if let Kind::Stream { stop_reason, .. } = &mut self.kind {
            *stop_reason = Some(reason.into());
        }
        self
    }

    pub fn truncated(self) -> Self {
        self.ending(StreamEnd::Truncated)
    }

    pub fn stall(self) -> Self {
        self.ending(StreamEnd::Stall)
    }

    /// An `overloaded_error` event in place of the end.
    pub fn overloaded(self) -> Self {
        self.ending(StreamEnd::Overloaded)
    }

    /// An HTTP error in the API's shape: `{"type":"error","error":{type, message}}`.
    pub fn error(status: u16, error_type: &str, message: &str) -> Self {
        let body = json!({ "type": "error", "error": { "type": error_type, "message": message } });
        Self::raw(Answer::Plain {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        })
    }

    /// Adds a response header (to an error reply).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        if let Kind::Raw(Answer::Plain { headers, .. }) = &mut self.kind {
            headers.push((name.into(), value.into()));
        }
        self
    }

    pub fn hang() -> Self {
        Self::raw(Answer::Hang)
    }

    fn raw(answer: Answer) -> Self {
        Self {
            kind: Kind::Raw(answer),
        }
    }

    fn with_block(mut self, block: Block) -> Self {
        if let Kind::Stream { blocks, .. } = &mut self.kind {
            blocks.push(block);
        }
        self
    }

    fn ending(mut self, new_end: StreamEnd) -> Self {
        if let Kind::Stream { end, .. } = &mut self.kind {
            *end = new_end;
        }
        self
    }

    fn answer(self) -> Answer {
        let (blocks, stop_reason, usage, end) = match self.kind {
            Kind::Raw(answer) => return answer,
            Kind::Stream {
                blocks,
                stop_reason,
                usage,
                end,
            } => (blocks, stop_reason, usage, end),
        };
        let (input, output, read, write) = usage;
        let mut frames = vec![event(
            "message_start",
            json!({ "type": "message_start", "message": {
                "id": "msg_fake", "type": "message", "role": "assistant", "model": MODEL,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": { "input_tokens": input, "output_tokens": 1,
                    "cache_read_input_tokens": read, "cache_creation_input_tokens": write },
            }}),
        )];
        frames.push(event("ping", json!({ "type": "ping" })));
        let has_tools = blocks.iter().any(|b| matches!(b, Block::ToolUse { .. }));
        for (index, block) in blocks.into_iter().enumerate() {
            frames.extend(block_frames(index, block));
        }
        match end {
            StreamEnd::Truncated => {
                return Answer::Sse {
                    frames,
                    end: End::Close,
                };
            }
            StreamEnd::Stall => {
                return Answer::Sse {
                    frames,
                    end: End::Stall,
                };
            }
            StreamEnd::Overloaded => {
                frames.push(event(
                    "error",
                    json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } }),
                ));
                return Answer::Sse {
                    frames,
                    end: End::Close,
                };
            }
            StreamEnd::Complete => {}
        }
        let stop_reason = stop_reason
            .unwrap_or_else(|| if has_tools { "tool_use" } else { "end_turn" }.to_string());
        frames.push(event(
            "message_delta",
            json!({ "type": "message_delta",
                "delta": { "stop_reason": stop_reason, "stop_sequence": null },
                "usage": { "output_tokens": output } }),
        ));
        frames.push(event("message_stop", json!({ "type": "message_stop" })));
        Answer::Sse {
            frames,
            end: End::Close,
        }
    }
}

fn block_frames(index: usize, block: Block) -> Vec<String> {
    let start = |content_block: Value| {
        event(
            "content_block_start",
            json!({ "type": "content_block_start", "index": index, "content_block": content_block }),
        )
    };
    let delta = |delta: Value| {
        event(
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": index, "delta": delta }),
        )
    };
    let mut frames = Vec::new();
    match block {
        Block::Text(deltas) => {
            frames.push(start(json!({ "type": "text", "text": "" })));
            for text in deltas {
                frames.push(delta(json!({ "type": "text_delta", "text": text })));
            }
        }
        Block::Thinking(deltas) => {
            frames.push(start(json!({ "type": "thinking", "thinking": "" })));
            for thinking in deltas {
                frames.push(delta(
                    json!({ "type": "thinking_delta", "thinking": thinking }),
                ));
            }
            frames.push(delta(
                json!({ "type": "signature_delta", "signature": "sig" }),
            ));
        }
        Block::ToolUse { id, name, pieces } => {
            frames.push(start(
                json!({ "type": "tool_use", "id": id, "name": name, "input": {} }),
            ));
            for piece in pieces {
                frames.push(delta(
                    json!({ "type": "input_json_delta", "partial_json": piece }),
                ));
            }
        }
    }
    frames.push(event(
        "content_block_stop",
        json!({ "type": "content_block_stop", "index": index }),
    ));
    frames
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}
