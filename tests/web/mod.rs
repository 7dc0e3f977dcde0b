//! web_fetch and web_search through the real binary (and the approval of a
//! new host through the core), against a local HTTP server of their own.

mod approval;
mod fetch;
mod guard;
mod search;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use crate::support::cli::{Cli, events, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

/// Bytes `/big` sends: far past any cap.
pub const BIG_BYTES: usize = 20 * 1024 * 1024;

/// What the site saw: each request's path and query, and its headers.
#[derive(Clone, Default)]
pub struct Seen {
    pub requests: Arc<Mutex<Vec<(String, HeaderMap)>>>,
}

impl Seen {
    pub fn paths(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|(p, _)| p.clone())
            .collect()
    }
}

pub struct Site {
    pub addr: SocketAddr,
    pub seen: Seen,
}

impl Site {
    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The same server by name (resolved, so the resolver's guard applies).
    pub fn named(&self, path: &str) -> String {
        format!("http://localhost:{}{path}", self.addr.port())
    }
}

pub async fn site() -> Site {
    site_at("127.0.0.1:0").await
}

/// The site listening on `bind` (`0.0.0.0:0`: every interface).
pub async fn site_at(bind: &str) -> Site {
    let seen = Seen::default();
    let app = Router::new()
        .route("/page", get(page))
        .route("/r/{n}", get(redirect))
        .route("/to-file", get(to_file))
        .route("/big", get(big))
        .route("/slow", get(slow))
        .route("/bin", get(binary))
        .route("/searxng/search", get(searxng))
        .route("/brave/res/v1/web/search", get(brave))
        .layer(axum::middleware::from_fn_with_state(seen.clone(), record))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind(bind).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Site { addr, seen }
}

async fn record(
    State(seen): State<Seen>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let path = request
        .uri()
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    seen.requests
        .lock()
        .unwrap()
        .push((path, request.headers().clone()));
    next.run(request).await
}

pub const PAGE: &str = r#"<!doctype html><html><head><title>Kettle manual</title>
<style>body { color: red }</style></head><body>
<nav><a href="/">Home</a> · <a href="/shop">Shop</a></nav>
<main><h1>Kettle manual</h1><p>Fill to the <strong>MAX</strong> line, then see <a href="/care.html">descaling</a>.</p>
<table><tr><th>Setting</th><th>Temp</th></tr><tr><td>Green tea</td><td>80</td></tr></table></main>
<footer>Copyright Kettle Co</footer><script>track()</script></body></html>"#;

async fn page() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE)
}

/// `/r/N` redirects to `/r/N-1`; `/r/0` to the page.
async fn redirect(Path(n): Path<u32>) -> Response {
    let to = match n {
        0 => "/page".to_string(),
        n => format!("/r/{}", n - 1),
    };
    (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
}

async fn to_file() -> Response {
    (
        StatusCode::FOUND,
        [(header::LOCATION, "file:///etc/passwd")],
    )
        .into_response()
}

/// 20 MB of text, streamed in 64 KB chunks.
async fn big() -> Response {
    let chunk = axum::body::Bytes::from(vec![b'a'; 64 * 1024]);
    let chunks = BIG_BYTES / chunk.len();
    let stream = futures_util::stream::iter(
        (0..chunks).map(move |_| Ok::<_, std::io::Error>(chunk.clone())),
    );
    Response::builder()
        .header(header::CONTENT_TYPE, "text/plain")
        .header(header::CONTENT_LENGTH, BIG_BYTES)
        .body(Body::from_stream(stream))
        .unwrap()
}

async fn slow() -> Response {
    tokio::time::sleep(Duration::from_secs(120)).await;
    "too late".into_response()
}

async fn binary() -> Response {
    (
        [(header::CONTENT_TYPE, "image/png")],
        vec![0x89u8; 5 * 1024],
    )
        .into_response()
}

async fn searxng(Query(q): Query<std::collections::HashMap<String, String>>) -> Response {
    if q.get("format").map(String::as_str) != Some("json") {
        return StatusCode::FORBIDDEN.into_response();
    }
    axum::Json(json!({"query": q.get("q"), "results": [
        {"title": "Descaling a kettle", "url": "https://kettle.example/descale", "content": "Use citric acid, then rinse twice."},
        {"title": "Kettle FAQ", "url": "https://kettle.example/faq", "content": "Why does it click?"},
        {"title": "Third", "url": "https://kettle.example/3", "content": "three"}
    ]}))
    .into_response()
}

pub const BRAVE_KEY: &str = "brave-test-key-5f1c2d9e";

async fn brave(headers: HeaderMap) -> Response {
    if headers
        .get("x-subscription-token")
        .and_then(|v| v.to_str().ok())
        != Some(BRAVE_KEY)
    {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    axum::Json(json!({"type": "search", "web": {"results": [
        {"title": "Kettle <strong>descaling</strong>", "url": "https://brave.example/k", "description": "Vinegar &amp; <strong>water</strong>."}
    ]}}))
    .into_response()
}

/// One `web_*` call through the real binary, then a final answer: the
/// call's (success, output) and the run's events.
pub async fn call(
    tool: &str,
    args: Value,
    config: &str,
    flags: &[&str],
    env: &[(&str, &str)],
) -> ((bool, String), Vec<Value>, FakeLlama) {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[(tool, &args.to_string())]),
        Reply::text("done"),
    ]);
    let cli = Cli::new(&fake, config);
    let mut argv = vec!["-m", "go", "--json"];
    argv.extend_from_slice(flags);
    let out = cli.run_with_env(&argv, env).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let events = events(&out);
    (tool_outcome(&events, "fake_call_0"), events, fake)
}

/// Config for fetching from the tests' own loopback server without asking.
pub const LOOPBACK_ALLOWED: &str = "[tools.web]\nfetch = \"allow\"\nallow_private = true\n";

/// The tool names egirl offered in its first request to the model: those
/// listed whole and those the tool catalog (`more_tools`) names, one
/// `name: purpose` line each after its first line.
pub fn offered_tools(fake: &FakeLlama) -> Vec<String> {
    let requests = fake.requests();
    let mut names = Vec::new();
    for tool in requests[0]["tools"].as_array().into_iter().flatten() {
        let Some(name) = tool["function"]["name"].as_str() else {
            continue;
        };
        names.push(name.to_string());
        if name == "more_tools" {
            let listing = tool["function"]["description"].as_str().unwrap_or_default();
            names.extend(
                listing
                    .lines()
                    .skip(1)
                    .filter_map(|line| line.split_once(": "))
                    .map(|(name, _)| name.to_string()),
            );
        }
    }
    names
}
