//! How much of one model reply egirl will hold. A server is trusted to
//! stop at `max_tokens`; one that does not (a bug, a proxy, a hostile
//! endpoint) must not be able to grow egirl without end or make it
//! allocate what an index says. Every stream reader (chat completions for
//! llama.cpp, OpenAI and Azure; Anthropic's Messages stream) applies these.

/// Bytes of one reply kept: visible text, reasoning, tool names, ids and
/// arguments together. 4 MiB is about a million tokens, far past any
/// `max_tokens` a server honours (a 64k-token reply is ~256 KB); past it
/// the stream is dropped and the reply goes on as if cut at `max_tokens`.
pub const MAX_REPLY_BYTES: usize = 4 << 20;

/// Tool calls in one reply. A stream names each call by an `index` that
/// egirl stores calls under; an index at or past this is an error for that
/// reply (never an allocation of that many calls). No model asks for 64
/// tools at once; the agent runs them all concurrently.
pub const MAX_TOOL_CALLS: usize = 64;

/// Content blocks of one Anthropic reply (text, thinking and tool_use
/// blocks together): the tool calls plus room for the text between them.
pub const MAX_CONTENT_BLOCKS: usize = 4 * MAX_TOOL_CALLS;

/// Bytes of one server-sent event before its blank line. A single event
/// can carry at most the whole reply (plus the JSON around it); a line
/// that never ends is cut here instead of buffered forever.
pub const MAX_EVENT_BYTES: usize = MAX_REPLY_BYTES + (64 << 10);

/// Raw bytes of one streamed body. llama-server spends ~400 bytes of JSON
/// on each token, so this is ~600k tokens: a server streaming frames that
/// carry nothing (empty deltas, usage only) is still cut here.
pub const MAX_STREAM_BYTES: usize = 256 << 20;

/// A whole (not streamed) JSON answer: embeddings of a large batch, a
/// token count, `/props`. Past it the answer is refused as a bad reply.
pub const MAX_ANSWER_BYTES: usize = 64 << 20;

/// An error answer's body: only its first line of message is ever shown.
pub const MAX_ERROR_BODY_BYTES: usize = 64 << 10;

/// A body read whole, at most `cap` bytes of it (`response.text()` reads
/// whatever a server sends, forever if it never stops).
pub struct Body {
    pub text: String,
    /// The server sent more than `cap`: `text` holds the first `cap` bytes.
    pub cut: bool,
}

pub async fn read_body(mut response: reqwest::Response, cap: usize) -> reqwest::Result<Body> {
    let mut bytes = Vec::new();
    let mut cut = false;
    while let Some(chunk) = response.chunk().await? {
        let room = cap - bytes.len();
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            cut = true;
            break;
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Body {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        cut,
    })
}

/// The error for a whole answer past [`MAX_ANSWER_BYTES`].
pub fn answer_too_large(endpoint: &str) -> super::ProviderError {
    super::ProviderError::BadReply {
        endpoint: endpoint.to_string(),
        detail: format!("the answer is larger than {} MiB", MAX_ANSWER_BYTES >> 20),
    }
}

/// The notice for a reply cut at a cap.
pub fn cut_notice(endpoint: &str) -> String {
    format!(
        "{endpoint} kept streaming past the reply cap ({} MiB, far past max_tokens): egirl dropped the stream there and went on with what had arrived",
        MAX_REPLY_BYTES >> 20
    )
}

/// Keeps count of one reply's bytes against [`MAX_REPLY_BYTES`].
#[derive(Debug, Default)]
pub struct ReplyBudget {
    used: usize,
    /// The cap was reached: nothing more is taken from this reply.
    pub cut: bool,
}

impl ReplyBudget {
    /// Whether `n` more bytes fit; once one piece does not, the reply is
    /// cut and every later piece is refused too (so the kept text is a
    /// prefix of what was sent, never a text with holes).
    pub fn take(&mut self, n: usize) -> bool {
        if self.cut || self.used.saturating_add(n) > MAX_REPLY_BYTES {
            self.cut = true;
            return false;
        }
        self.used += n;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_refuses_everything_after_the_first_piece_past_the_cap() {
        let mut budget = ReplyBudget::default();
        assert!(budget.take(MAX_REPLY_BYTES - 1));
        assert!(!budget.take(2));
        assert!(budget.cut);
        assert!(!budget.take(1), "no holes: a cut reply takes nothing more");
    }

    #[tokio::test]
    async fn a_body_that_never_ends_is_read_to_the_cap() {
        use futures_util::{StreamExt, stream};
        let endless = || async {
            let chunks = stream::repeat(vec![b'x'; 8192]).map(Ok::<_, std::io::Error>);
            axum::body::Body::from_stream(chunks)
        };
        let app = axum::Router::new().route("/", axum::routing::get(endless));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        let response = reqwest::get(format!("http://{addr}/")).await.unwrap();
        let body = read_body(response, 1 << 20).await.unwrap();
        assert!(body.cut);
        assert_eq!(body.text.len(), 1 << 20);
        server.abort();
    }
}
