//! A fake OpenAI / Azure OpenAI API: any path (the tests assert which one
//! was asked) answered with chat-completion chunks as OpenAI streams them
//! (a role frame, content and `tool_calls` deltas by index, a finish frame,
//! the usage frame of `include_usage`, `[DONE]`), or with embeddings, from
//! scripted [`Reply`]s. Requests are recorded (see [`FakeRemote`]).

#![allow(dead_code)] // each test uses a different part

use serde_json::{Value, json};

use super::fake_remote::{Answer, End, FakeRemote, Recorded};

pub const MODEL: &str = "gpt-4.1-2025-04-14";

pub struct FakeOpenAi {
    remote: FakeRemote,
}

impl FakeOpenAi {
    pub async fn start() -> FakeOpenAi {
        FakeOpenAi {
            remote: FakeRemote::start().await,
        }
    }

    /// `http://127.0.0.1:<port>`: `[remote.openai] base_url` is this plus `/v1`.
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
struct Call {
    id: String,
    name: String,
    fragments: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Reply {
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Stream {
        deltas: Vec<String>,
        calls: Vec<Call>,
        /// prompt, completion, cached.
        usage: (u64, u64, u64),
        model: String,
        /// Azure opens with a frame of `prompt_filter_results` and no choices.
        azure: bool,
        end: StreamEnd,
    },
    Raw(Answer),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StreamEnd {
    Complete,
    Truncated,
    Stall,
}

impl Reply {
    fn stream(deltas: Vec<String>, calls: Vec<Call>) -> Self {
        Self {
            kind: Kind::Stream {
                deltas,
                calls,
                usage: (10, 5, 0),
                model: MODEL.into(),
                azure: false,
                end: StreamEnd::Complete,
            },
        }
    }

    /// Content streamed as exactly these deltas.
    pub fn text(deltas: &[&str]) -> Self {
        Self::stream(strings(deltas), Vec::new())
    }

    /// Tool calls `(id, name, argument fragments)`; the fragments of all
    /// calls are interleaved (call 0's first, call 1's first, ...), so only
    /// their `index` tells them apart.
    pub fn tool_calls(calls: &[(&str, &str, &[&str])]) -> Self {
        let calls = calls
            .iter()
            .map(|(id, name, fragments)| Call {
                id: id.to_string(),
                name: name.to_string(),
                fragments: strings(fragments),
            })
            .collect();
        Self::stream(Vec::new(), calls)
    }

    /// Content deltas before the tool calls.
    pub fn with_text(mut self, text: &[&str]) -> Self {
        if let Kind::Stream { deltas, .. } = &mut self.kind {
            *deltas = strings(text);
        }
        self
    }

    pub fn usage(mut self, prompt: u64, completion: u64, cached: u64) -> Self {
        if let Kind::Stream { usage, .. } = &mut self.kind {
            *usage = (prompt, completion, cached);
        }
        self
    }

    pub fn model(mut self, name: &str) -> Self {
        if let Kind::Stream { model, .. } = &mut self.kind {
            *model = name.into();
        }
        self
    }

    pub fn azure(mut self) -> Self {
        if let Kind::Stream { azure, .. } = &mut self.kind {
            *azure = true;
        }
        self
    }

    pub fn truncated(self) -> Self {
        self.ending(StreamEnd::Truncated)
    }

    pub fn stall(self) -> Self {
        self.ending(StreamEnd::Stall)
    }

    /// An HTTP error in OpenAI's shape `{"error": {message, type, code}}`.
    pub fn error(status: u16, message: &str) -> Self {
        let body = json!({ "error": { "message": message, "type": "invalid_request_error", "code": null } });
        Self::raw(Answer::Plain {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        })
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        if let Kind::Raw(Answer::Plain { headers, .. }) = &mut self.kind {
            headers.push((name.into(), value.into()));
        }
        self
    }

    pub fn hang() -> Self {
        Self::raw(Answer::Hang)
    }

    /// This exact text as the body of a 200 answer (a stream written by hand).
    pub fn raw_sse(body: &str) -> Self {
        Self::raw(Answer::Plain {
            status: 200,
            headers: Vec::new(),
            body: body.to_string(),
        })
    }

    /// An embeddings answer, listed in reverse order (the API gives each an
    /// `index`; the client must put them back in input order).
    pub fn embeddings(vectors: &[&[f32]]) -> Self {
        let data: Vec<Value> = vectors
            .iter()
            .enumerate()
            .rev()
            .map(|(i, v)| json!({ "object": "embedding", "index": i, "embedding": v }))
            .collect();
        let body = json!({ "object": "list", "data": data, "model": "text-embedding-3-small",
            "usage": { "prompt_tokens": 4, "total_tokens": 4 } });
        Self::raw(Answer::Plain {
            status: 200,
            headers: Vec::new(),
            body: body.to_string(),
        })
    }

    fn raw(answer: Answer) -> Self {
        Self {
            kind: Kind::Raw(answer),
        }
    }

    fn ending(mut self, new_end: StreamEnd) -> Self {
        if let Kind::Stream { end, .. } = &mut self.kind {
            *end = new_end;
        }
        self
    }

    fn answer(self) -> Answer {
        let (deltas, calls, usage, model, azure, end) = match self.kind {
            Kind::Raw(answer) => return answer,
            Kind::Stream {
                deltas,
                calls,
                usage,
                model,
                azure,
                end,
            } => (deltas, calls, usage, model, azure, end),
        };
        let chunk = |choices: Value| {
            frame(
                json!({ "id": "chatcmpl-fake", "object": "chat.completion.chunk",
                "created": 1_700_000_000, "model": model, "choices": choices }),
            )
        };
        let delta =
            |delta: Value| chunk(json!([{ "index": 0, "delta": delta, "finish_reason": null }]));
        let mut frames = Vec::new();
        if azure {
            frames.push(frame(json!({ "id": "", "object": "", "created": 0, "model": "",
                "choices": [], "prompt_filter_results": [{ "prompt_index": 0, "content_filter_results": {} }] })));
        }
        frames.push(delta(json!({ "role": "assistant", "content": "" })));
        for text in deltas {
            frames.push(delta(json!({ "content": text })));
        }
        for (index, call) in calls.iter().enumerate() {
            frames.push(delta(
                json!({ "tool_calls": [{ "index": index, "id": call.id,
                "type": "function", "function": { "name": call.name, "arguments": "" } }] }),
            ));
        }
        let longest = calls.iter().map(|c| c.fragments.len()).max().unwrap_or(0);
        for piece in 0..longest {
            for (index, call) in calls.iter().enumerate() {
                if let Some(fragment) = call.fragments.get(piece) {
                    frames.push(delta(json!({ "tool_calls": [{ "index": index,
                        "function": { "arguments": fragment } }] })));
                }
            }
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
            StreamEnd::Complete => {}
        }
        let finish = if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        frames.push(chunk(
            json!([{ "index": 0, "delta": {}, "finish_reason": finish }]),
        ));
        let (prompt, completion, cached) = usage;
        frames.push(frame(
            json!({ "id": "chatcmpl-fake", "object": "chat.completion.chunk",
            "created": 1_700_000_000, "model": model, "choices": [],
            "usage": { "prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": { "cached_tokens": cached } } }),
        ));
        frames.push("data: [DONE]\n\n".into());
        Answer::Sse {
            frames,
            end: End::Close,
        }
    }
}

fn frame(data: Value) -> String {
    format!("data: {data}\n\n")
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}
