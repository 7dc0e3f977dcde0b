//! The page's HTTP side through the real binary (`egirl serve` with
//! `[gateway] listen`), as a browser would use it but without one: the
//! sign-in page without a cookie, pairing through `/api/pair` into an
//! HttpOnly cookie that opens `/ws`, the Host/Origin rules, the security
//! headers, a revoked device signed out.

use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap};
use serde_json::{Value, json};

use crate::gateway::tcp::{Daemon, Socket, files_holding, hello, next, open, send};
use crate::support::fake_llama::FakeLlama;

const SIGNIN: &str = include_str!("../../src/surfaces/gateway/web/assets/signin.html");
const INDEX: &str = include_str!("../../src/surfaces/gateway/web/assets/index.html");
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

/// A daemon and its page's address.
pub struct Page {
    pub daemon: Daemon,
    /// `http://127.0.0.1:PORT`: the address and the page's own origin.
    pub base: String,
    pub port: u16,
    client: reqwest::Client,
}

impl Page {
    pub async fn start(llama: &FakeLlama) -> Page {
        Self::with(Daemon::start(llama).await)
    }

    pub fn with(daemon: Daemon) -> Page {
        let base = daemon
            .url
            .trim_end_matches("/ws")
            .replace("ws://", "http://");
        let port = base.rsplit(':').next().unwrap().parse().unwrap();
        Page {
            daemon,
            base,
            port,
            client: reqwest::Client::new(),
        }
    }

    /// `GET path` with these headers.
    pub async fn get(&self, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut request = self.client.get(format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap()
    }

    /// `POST path` with `body` as JSON, these headers besides.
    pub async fn post(
        &self,
        path: &str,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut request = self
            .client
            .post(format!("{}{path}", self.base))
            .body(body.to_string());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap()
    }

    /// `POST /api/pair` from the page's own origin.
    pub async fn try_pair(&self, code: &str) -> reqwest::Response {
        let body = json!({"code": code, "device": "Pixel"});
        let headers = [
            ("origin", self.base.as_str()),
            ("content-type", "application/json"),
        ];
        self.post("/api/pair", &body, &headers).await
    }

    /// `egirl pair`'s code.
    pub async fn code(&self) -> String {
        let out = self.daemon.run(&["pair"]).await;
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
            .split_whitespace()
            .find(|w| w.len() == 9 && w.as_bytes()[4] == b'-')
            .unwrap_or_else(|| panic!("no code in {stdout}"))
            .to_string()
    }

    /// Pairs through `/api/pair`: the device id and the cookie's token.
    pub async fn sign_in(&self) -> (String, String) {
        let response = self.try_pair(&self.code().await).await;
        assert_eq!(response.status(), StatusCode::OK);
        let token = cookie_token(response.headers()).expect("the device cookie");
        let body: Value = response.json().await.unwrap();
        (body["device"].as_str().unwrap().to_string(), token)
    }

    /// The WebSocket as the page opens it: its origin and its cookie.
    pub async fn socket(&self, token: &str) -> Result<Socket, u16> {
        let cookie = format!("egirl_device={token}");
        let headers = [("origin", self.base.as_str()), ("cookie", cookie.as_str())];
        open(&self.daemon.url, &headers).await
    }

    /// The page's socket after `hello` (without a token: the cookie
    /// admitted it).
    pub async fn said_hello(&self, token: &str) -> Socket {
        let mut socket = self.socket(token).await.expect("the cookie opens /ws");
        send(&mut socket, &hello(None)).await;
        let first = next(&mut socket).await.expect("hello");
        assert_eq!(first["frame"], "hello", "{first}");
        socket
    }
}

/// The `Set-Cookie` of the response (one at most is sent).
fn set_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::SET_COOKIE)
        .map(|v| v.to_str().unwrap().to_string())
}

/// The token `Set-Cookie` gives `egirl_device`.
fn cookie_token(headers: &HeaderMap) -> Option<String> {
    let cookie = set_cookie(headers)?;
    let value = cookie.strip_prefix("egirl_device=")?.split(';').next()?;
    Some(value.to_string()).filter(|v| !v.is_empty())
}

fn assert_secure_headers(headers: &HeaderMap, what: &str) {
    let get = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_string());
    assert_eq!(
        get("content-security-policy").as_deref(),
        Some(CSP),
        "{what}"
    );
    assert_eq!(
        get("x-content-type-options").as_deref(),
        Some("nosniff"),
        "{what}"
    );
    assert_eq!(
        get("referrer-policy").as_deref(),
        Some("no-referrer"),
        "{what}"
    );
    assert_eq!(get("x-frame-options").as_deref(), Some("DENY"), "{what}");
}

#[tokio::test]
async fn without_a_cookie_the_sign_in_page_and_a_browser_s_socket_is_refused() {
    let llama = FakeLlama::start().await;
    let page = Page::start(&llama).await;
    let response = page.get("/", &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_secure_headers(response.headers(), "/");
    let cache = response.headers().get("cache-control").unwrap().clone();
    assert_eq!(cache, "no-store");
    assert!(set_cookie(response.headers()).is_none());
    let content_type = response.headers().get("content-type").unwrap().clone();
    assert_eq!(content_type, "text/html; charset=utf-8");
    assert_eq!(response.text().await.unwrap(), SIGNIN);

    let own = page.base.clone();
    assert_eq!(
        open(&page.daemon.url, &[("origin", &own)]).await.err(),
        Some(401)
    );
    assert_eq!(page.socket("egd_forged").await.err(), Some(401));

    let script = page.get("/assets/app.js", &[]).await;
    assert_eq!(script.status(), StatusCode::OK);
    assert_secure_headers(script.headers(), "/assets/app.js");
    let content_type = script.headers().get("content-type").unwrap().clone();
    assert_eq!(content_type, "text/javascript; charset=utf-8");
    for missing in [
        "/assets/index.html",
        "/assets/nope.js",
        "/index.html",
        "/assets/%2e%2e%2fCargo.toml",
    ] {
        let response = page.get(missing, &[]).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{missing}");
        assert_secure_headers(response.headers(), missing);
    }
    page.daemon.stop().await;
}

#[tokio::test]
async fn a_wrong_code_is_refused_then_rate_limited_and_only_json_is_taken() {
    let llama = FakeLlama::start().await;
    let page = Page::start(&llama).await;
    let form = [
        ("origin", page.base.as_str()),
        ("content-type", "application/x-www-form-urlencoded"),
    ];
    let body = json!({"code": "1234-5678", "device": "Pixel"});
    let response = page.post("/api/pair", &body, &form).await;
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let bare = [("origin", page.base.as_str())];
    let response = page.post("/api/pair", &body, &bare).await;
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_secure_headers(response.headers(), "/api/pair 415");

    let wrong = page.try_pair("0000-0000").await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert_secure_headers(wrong.headers(), "/api/pair 401");
    assert_eq!(wrong.headers().get("cache-control").unwrap(), "no-store");
    assert!(set_cookie(wrong.headers()).is_none());
    let said: Value = wrong.json().await.unwrap();
    let line = said["error"].as_str().unwrap();
    assert!(!line.is_empty() && !line.contains('\n'), "{said}");
    let mut limited = None;
    for attempt in 0..10 {
        let response = page.try_pair("0000-0000").await;
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(attempt);
            let said: Value = response.json().await.unwrap();
            assert!(
                said["error"].as_str().unwrap().contains("too many"),
                "{said}"
            );
            break;
        }
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    assert!(limited.is_some(), "never rate-limited");
    // Past the limit even the right code is refused.
    let right = page.code().await;
    assert_eq!(
        page.try_pair(&right).await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    page.daemon.stop().await;
}

#[tokio::test]
async fn a_foreign_origin_or_host_is_refused() {
    let llama = FakeLlama::start().await;
    let page = Page::start(&llama).await;
    let body = json!({"code": "1234-5678", "device": "Pixel"});
    let json_type = ("content-type", "application/json");
    for origin in [
        "http://evil.example",
        "null",
        &format!("http://localhost:{}", page.port),
    ] {
        let response = page
            .post("/api/pair", &body, &[("origin", origin), json_type])
            .await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{origin}");
        assert_secure_headers(response.headers(), "403");
        let said: Value = response.json().await.unwrap();
        assert!(
            said["error"].as_str().unwrap().contains("another origin"),
            "{said}"
        );
        let refused = open(&page.daemon.url, &[("origin", origin)]).await;
        assert_eq!(refused.err(), Some(403), "{origin}");
    }
    let response = page.post("/api/pair", &body, &[json_type]).await;
    assert_eq!(
        response.status(),
        StatusCode::FORBIDDEN,
        "a POST without Origin"
    );
    let response = page.post("/api/signout", &json!({}), &[json_type]).await;
    assert_eq!(
        response.status(),
        StatusCode::FORBIDDEN,
        "signout without Origin"
    );

    // DNS rebinding: evil.example resolves here; its page is its own origin.
    let evil_host = format!("evil.example:{}", page.port);
    let evil_origin = format!("http://{evil_host}");
    for path in ["/", "/assets/app.js", "/nope"] {
        let response = page.get(path, &[("host", &evil_host)]).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{path}");
        assert_secure_headers(response.headers(), path);
    }
    let headers = [
        ("host", evil_host.as_str()),
        ("origin", evil_origin.as_str()),
        json_type,
    ];
    let response = page.post("/api/pair", &body, &headers).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let rebound = open(
        &page.daemon.url,
        &[("host", &evil_host), ("origin", &evil_origin)],
    )
    .await;
    assert_eq!(rebound.err(), Some(403));
    page.daemon.stop().await;
}

#[tokio::test]
async fn hosts_of_the_config_are_answered() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start_with(&llama, "hosts = [\"gpu-box\"]", &[]).await;
    let page = Page::with(daemon);
    let host = format!("gpu-box:{}", page.port);
    let response = page.get("/", &[("host", &host)]).await;
    assert_eq!(response.status(), StatusCode::OK);
    let other = format!("other-box:{}", page.port);
    assert_eq!(
        page.get("/", &[("host", &other)]).await.status(),
        StatusCode::FORBIDDEN
    );
    page.daemon.stop().await;
}

#[tokio::test]
async fn pairing_sets_an_http_only_cookie_that_opens_the_socket_until_revoked() {
    let llama = FakeLlama::start().await;
    let page = Page::start(&llama).await;
    let response = page.try_pair(&page.code().await).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_secure_headers(response.headers(), "/api/pair 200");
    assert_eq!(response.headers().get("cache-control").unwrap(), "no-store");
    assert_eq!(response.url().query(), None);
    let cookie = set_cookie(response.headers()).unwrap();
    let token = cookie_token(response.headers()).unwrap();
    assert!(token.starts_with("egd_"), "{cookie}");
    let attributes: Vec<&str> = cookie.split("; ").skip(1).collect();
    assert_eq!(
        attributes,
        ["Path=/", "HttpOnly", "SameSite=Strict", "Max-Age=31536000"]
    );
    let body = response.text().await.unwrap();
    assert!(!body.contains(&token), "the token is in the body: {body}");
    let device = serde_json::from_str::<Value>(&body).unwrap()["device"]
        .as_str()
        .unwrap()
        .to_string();

    let signed_in = format!("egirl_device={token}");
    let response = page.get("/", &[("cookie", &signed_in)]).await;
    assert!(set_cookie(response.headers()).is_none());
    assert_eq!(response.text().await.unwrap(), INDEX);
    let mut socket = page.said_hello(&token).await;

    let revoked = page.daemon.run(&["devices", "revoke", &device]).await;
    assert!(revoked.status.success());
    let response = page.get("/", &[("cookie", &signed_in)]).await;
    let cleared = set_cookie(response.headers()).expect("the cookie is cleared");
    assert!(
        cleared.starts_with("egirl_device=;") && cleared.contains("Max-Age=0"),
        "{cleared}"
    );
    assert_eq!(response.text().await.unwrap(), SIGNIN);
    let error = loop {
        let frame = next(&mut socket)
            .await
            .expect("an error frame before the close");
        if frame["frame"] == "error" {
            break frame;
        }
    };
    assert_eq!(error["message"], "this client is no longer admitted");
    assert_eq!(page.socket(&token).await.err(), Some(401));

    let (dir, stderr) = page.daemon.stop().await;
    assert!(
        !stderr.contains(&token),
        "the token is in the daemon's output"
    );
    for place in ["logs", "ws"] {
        let holding = files_holding(&dir.path().join(place), &token);
        assert!(holding.is_empty(), "the token is in {holding:?}");
    }
}

#[tokio::test]
async fn a_page_over_tls_gets_a_secure_cookie_and_signing_out_revokes_it() {
    let llama = FakeLlama::start().await;
    let page = Page::start(&llama).await;
    let tls = page.base.replace("http://", "https://");
    let body = json!({"code": page.code().await, "device": "Pixel"});
    let headers = [
        ("origin", tls.as_str()),
        ("content-type", "application/json"),
    ];
    let response = page.post("/api/pair", &body, &headers).await;
    assert_eq!(response.status(), StatusCode::OK);
    let cookie = set_cookie(response.headers()).unwrap();
    assert!(cookie.ends_with("; Secure"), "{cookie}");
    let token = cookie_token(response.headers()).unwrap();

    let signed_in = format!("egirl_device={token}");
    let json_type = ("content-type", "application/json");
    let foreign = [
        ("origin", "http://evil.example"),
        ("cookie", signed_in.as_str()),
        json_type,
    ];
    let refused = page.post("/api/signout", &json!({}), &foreign).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let own = [
        ("origin", page.base.as_str()),
        ("cookie", signed_in.as_str()),
        json_type,
    ];
    let out = page.post("/api/signout", &json!({}), &own).await;
    assert_eq!(out.status(), StatusCode::NO_CONTENT);
    assert_secure_headers(out.headers(), "/api/signout");
    let cleared = set_cookie(out.headers()).unwrap();
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    let listed = page.daemon.run(&["devices", "list"]).await;
    assert!(!String::from_utf8_lossy(&listed.stdout).contains("Pixel"));
    assert_eq!(page.socket(&token).await.err(), Some(401));
    let again = page.post("/api/signout", &json!({}), &own).await;
    assert_eq!(again.status(), StatusCode::UNAUTHORIZED);
    page.daemon.stop().await;
}

/// `egirl serve` says where the page is, as a browser opens it.
#[tokio::test]
async fn serve_prints_the_pages_address() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama).await;
    let page = daemon.url.replace("ws://", "http://").replace("/ws", "/");
    let (_dir, stderr) = daemon.stop().await;
    assert!(
        stderr.contains(&format!(
            "egirl: the web UI is at {page} (sign a browser in with `egirl pair`)"
        )),
        "{stderr}"
    );
}
