//! The browser tests' local site on 127.0.0.1: a page with a button its
//! script changes, a search form, a page that asks for another host's
//! resources and a redirect to another host; every path it served is kept.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use egirl::tools::ToolContext;
use serde_json::Value;

pub struct Site {
    pub base: String,
    hits: Arc<Mutex<Vec<String>>>,
}

const HOME: &str = r#"<!doctype html><html><head><title>Test site</title></head><body>
<h1>Welcome</h1><p>Some text about the site.</p>
<button id="press" onclick="document.getElementById('out').textContent = 'clicked by script'">Press me</button>
<p id="out">not pressed</p>
<form action="/search" method="get"><input name="q" placeholder="Query"><button type="submit">Go</button></form>
<a href="/other">Other page</a> <a href="/search?q=popup" target="_blank">In a new tab</a>
</body></html>"#;

impl Site {
    pub async fn start() -> Site {
        let hits: Arc<Mutex<Vec<String>>> = Arc::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the test site");
        let port = listener.local_addr().expect("address").port();
        let app = Router::new()
            .route("/", get(|| async { Html(HOME) }))
            .route("/search", get(search))
            .route("/leak", get(move || async move { Html(leak(port)) }))
            .route("/redirect", get(move || async move { redirect(port) }))
            .fallback(|| async { (StatusCode::NOT_FOUND, "not here") })
            .layer(axum::middleware::from_fn_with_state(hits.clone(), record))
            .with_state(());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Site {
            base: format!("http://127.0.0.1:{port}"),
            hits,
        }
    }

    /// The paths served so far (with their queries).
    pub fn hits(&self) -> Vec<String> {
        self.hits.lock().map(|h| h.clone()).unwrap_or_default()
    }
}

async fn record(
    State(hits): State<Arc<Mutex<Vec<String>>>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let uri: &Uri = request.uri();
    if let Ok(mut hits) = hits.lock() {
        hits.push(
            uri.path_and_query()
                .map(|p| p.to_string())
                .unwrap_or_default(),
        );
    }
    next.run(request).await
}

async fn search(Query(query): Query<std::collections::HashMap<String, String>>) -> Html<String> {
    let q = query.get("q").cloned().unwrap_or_default();
    let q: String = q
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ')
        .collect();
    Html(format!(
        "<!doctype html><title>Results</title><h1>Results for {q}</h1><p>3 results</p>"
    ))
}

/// A page on 127.0.0.1 whose image, fetch and WebSocket go to `localhost`.
fn leak(port: u16) -> String {
    format!(
        "<!doctype html><title>Leaky</title><h1>Leaky page</h1>\
         <img src=\"http://localhost:{port}/secret-image.png\" alt=\"secret\">\
         <script>fetch('http://localhost:{port}/secret-fetch').catch(() => {{}});\
         try {{ new WebSocket('ws://localhost:{port}/secret-socket'); }} catch (e) {{}}</script>"
    )
}

fn redirect(port: u16) -> impl IntoResponse {
    (
        StatusCode::FOUND,
        [(
            header::LOCATION,
            format!("http://localhost:{port}/secret-redirect"),
        )],
    )
}

/// Chromium, or why these tests cannot run here (printed, then skipped).
pub fn chromium_or_skip() -> bool {
    match egirl::config::Config::default().tools.browser.chromium() {
        Ok(_) => true,
        Err(why) => {
            eprintln!("skipped: {why} (scripts/install-chromium.sh installs it)");
            false
        }
    }
}

/// A context for `session` with the config `toml` (its `[tools.web]` and
/// `[tools.browser]`), from `origin`.
pub fn context(
    workspace: &std::path::Path,
    session: &str,
    origin: egirl::protocol::Origin,
    toml: &str,
) -> ToolContext {
    let mut ctx = ToolContext::standalone(workspace, Default::default(), session, origin);
    let config = egirl::config::parse(toml, std::path::Path::new("egirl.toml")).expect("config");
    ctx.config = Arc::new(config);
    ctx
}

/// Runs one browser action.
pub async fn browse(ctx: &ToolContext, args: Value) -> egirl::tools::ToolOutput {
    let call = egirl::tools::run("browser", &args, ctx);
    tokio::time::timeout(std::time::Duration::from_secs(120), call)
        .await
        .expect("the browser call finished in time")
}

/// The number of the element `line_start` (`button "Press me"`) in a snapshot.
pub fn reference(snapshot: &str, element: &str) -> u64 {
    for line in snapshot.lines() {
        for piece in line.split('[').skip(1) {
            if let Some((n, rest)) = piece.split_once("] ")
                && rest.starts_with(element)
                && let Ok(n) = n.parse()
            {
                return n;
            }
        }
    }
    panic!("no `{element}` in the snapshot:\n{snapshot}");
}
