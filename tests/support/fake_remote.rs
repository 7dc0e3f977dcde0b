//! The HTTP core of the fake remote APIs ([`super::fake_anthropic`],
//! [`super::fake_openai`]): 127.0.0.1 port 0, any POST path, answers taken
//! from a script in order, every request recorded with its path, query,
//! headers and JSON body. An empty script answers 418 so a test that
//! sends more requests than it scripted fails loudly.

#![allow(dead_code)] // each suite uses a different part

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt, stream};
use serde_json::Value;
use tokio::task::JoinHandle;

/// A request the fake received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// Lower-case names.
    pub headers: BTreeMap<String, String>,
    /// `Value::Null` when the body is not JSON.
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// How a streamed answer ends after its frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The connection closes.
    Close,
    /// Nothing more is sent; the connection stays open.
    Stall,
}

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Answer {
    /// `text/event-stream`, each frame sent as its own body chunk.
    Sse { frames: Vec<String>, end: End },
    /// Any status with these headers and this body.
    Plain {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Never answers, not even headers.
    Hang,
}

struct State {
    script: VecDeque<Answer>,
    recorded: Vec<Recorded>,
}

type Shared = Arc<Mutex<State>>;

pub struct FakeRemote {
    url: String,
    state: Shared,
    task: JoinHandle<()>,
}

impl Drop for FakeRemote {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeRemote {
    pub async fn start() -> FakeRemote {
        let state: Shared = Arc::new(Mutex::new(State {
            script: VecDeque::new(),
            recorded: Vec::new(),
        }));
        let app = Router::new().fallback(answer).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeRemote {
            url: format!("http://{addr}"),
            state,
            task,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    pub fn push(&self, answer: Answer) {
        self.lock().script.push_back(answer);
    }

    /// Every request, oldest first.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.lock().recorded.clone()
    }

    /// JSON bodies of every request, oldest first.
    pub fn bodies(&self) -> Vec<Value> {
        self.recorded().into_iter().map(|r| r.body).collect()
    }

    pub fn hits(&self) -> usize {
        self.lock().recorded.len()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("fake state")
    }
}

async fn answer(
    axum::extract::State(state): axum::extract::State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let recorded = Recorded {
        method: method.to_string(),
        path: uri.path().to_string(),
        query: uri.query().map(String::from),
        headers: headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_ascii_lowercase(), value)
            })
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let next = {
        let mut state = state.lock().expect("fake state");
        state.recorded.push(recorded);
        state.script.pop_front()
    };
    match next {
        None => (StatusCode::IM_A_TEAPOT, "no scripted answer left").into_response(),
        Some(Answer::Hang) => std::future::pending().await,
        Some(Answer::Plain {
            status,
            headers,
            body,
        }) => {
            let mut response = Response::builder()
                .status(status)
                .header(header::CONTENT_TYPE, "application/json");
            for (name, value) in headers {
                response = response.header(name, value);
            }
            response
                .body(Body::from(body))
                .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
        }
        Some(Answer::Sse { frames, end }) => {
            type Frames = Pin<Box<dyn Stream<Item = Result<Bytes, Infallible>> + Send>>;
            let mut body: Frames =
                Box::pin(stream::iter(frames.into_iter().map(|f| Ok(Bytes::from(f)))));
            if end == End::Stall {
                body = Box::pin(body.chain(stream::pending()));
            }
            Response::builder()
                .header(header::CONTENT_TYPE, "text/event-stream")
                .header(header::CACHE_CONTROL, "no-cache")
                .body(Body::from_stream(body))
                .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
        }
    }
}
