//! Attacks on the page's listener through the real binary (the red team
//! of issue 27): each test is a defect that was found, kept so it stays
//! fixed.

use std::time::Duration;

use futures_util::SinkExt;
use reqwest::StatusCode;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

use super::http::Page;
use crate::gateway::tcp::{Daemon, next, open};
use crate::support::fake_llama::FakeLlama;

/// Longer than any bound the listener sets on a connection.
const HELD_AT_MOST: Duration = Duration::from_secs(60);
/// The connections one peer may hold at once (`tcp_accept::MAX_PER_PEER`).
const PEER_SHARE: usize = 16;

/// Every one of `held` ends (the server closed it) within
/// [`HELD_AT_MOST`]; else `who` still holds the listener.
async fn assert_released(held: Vec<tokio::task::JoinHandle<()>>, who: &str) {
    let released = tokio::time::timeout(HELD_AT_MOST, async {
        for task in held {
            task.await.unwrap();
        }
    })
    .await;
    assert!(
        released.is_ok(),
        "{who} still holds its connections after {HELD_AT_MOST:?}: the listener is its"
    );
}

/// Sends `head`, then `drop` every 2 s, never ending the request;
/// returns once the server answers or closes the connection.
async fn drip(mut socket: TcpStream, head: String, drop: &'static [u8]) {
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let mut buf = [0u8; 256];
    loop {
        tokio::select! {
            _ = socket.read(&mut buf) => return,
            () = tokio::time::sleep(Duration::from_secs(2)) => {
                if socket.write_all(drop).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// A request head sent a line at a time, never ended.
async fn dribble(socket: TcpStream, host: String) {
    let head = format!("GET / HTTP/1.1\r\nHost: {host}\r\n");
    drip(socket, head, b"X-Slow: 1\r\n").await;
}

/// A pairing request whose body (said to be 1000 bytes) comes a byte
/// every 2 s.
async fn trickle_body(socket: TcpStream, host: String) {
    let head = format!(
        "POST /api/pair HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"
    );
    drip(socket, head, b" ").await;
}

/// One whole request, then silence on the kept-alive connection; returns
/// once the server closes it.
async fn idle_after_one_request(mut socket: TcpStream, host: String) {
    let request = format!("GET /assets/app.css HTTP/1.1\r\nHost: {host}\r\n\r\n");
    if socket.write_all(request.as_bytes()).await.is_err() {
        return;
    }
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Slowloris: on a loopback listener every client is one peer, so a local
/// process that holds the peer's share of connections (sending a header
/// line now and then, or idling after one request) locked the owner's
/// browser out for as long as it liked. A request head must now arrive
/// within a bound, an idle kept-alive connection is closed.
#[tokio::test]
async fn a_peer_dribbling_request_heads_cannot_hold_the_listener() {
    let llama = FakeLlama::start().await;
    let page = Page::start(&llama).await;
    let host = page.base.trim_start_matches("http://").to_string();
    let mut held = Vec::new();
    for n in 0..PEER_SHARE {
        let socket = TcpStream::connect(&host).await.unwrap();
        held.push(if n == 0 {
            tokio::spawn(idle_after_one_request(socket, host.clone()))
        } else {
            tokio::spawn(dribble(socket, host.clone()))
        });
    }
    assert_released(held, "a slow peer").await;
    assert_eq!(page.get("/", &[]).await.status(), StatusCode::OK);
    page.daemon.stop().await;
}

/// The same with the body of `/api/pair`: its head in time, its body a
/// byte now and then, read without a bound.
#[tokio::test]
async fn a_peer_trickling_a_pairing_body_cannot_hold_the_listener() {
    let llama = FakeLlama::start().await;
    let page = Page::start(&llama).await;
    let host = page.base.trim_start_matches("http://").to_string();
    let mut held = Vec::new();
    for _ in 0..PEER_SHARE {
        let socket = TcpStream::connect(&host).await.unwrap();
        held.push(tokio::spawn(trickle_body(socket, host.clone())));
    }
    assert_released(held, "a slow body").await;
    assert_eq!(page.get("/", &[]).await.status(), StatusCode::OK);
    page.daemon.stop().await;
}

/// A transcript line that does not parse is answered `failed` with the
/// parser's words, and those quote the value they did not expect: a
/// secret there reached the page unredacted (every other transcript read
/// is redacted).
#[tokio::test]
async fn a_transcript_that_does_not_parse_is_redacted_in_the_failure_too() {
    const SECRET: &str = "sk-redteam-secret-5c1e9a";
    let llama = FakeLlama::start().await;
    let env = [("REDTEAM_TEST_TOKEN", SECRET)];
    let page = Page::with(Daemon::start_with(&llama, "", &env).await);
    let sessions = page.daemon.dir.path().join("ws/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let lines = [
        json!({"ts": "2026-11-20T10:01:00Z", "origin": "cli", "role": SECRET, "content": "hi"}),
        json!({"ts": "2026-11-20T10:02:00Z", "origin": "cli", "role": "user", "content": "hi"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(sessions.join("broken.jsonl"), text).unwrap();
    let (_, token) = page.sign_in().await;
    let mut socket = page.said_hello(&token).await;
    let ask = json!({"frame": "query", "id": "t1",
        "ask": {"kind": "transcript", "session": "broken"}});
    socket.send(Message::Text(ask.to_string())).await.unwrap();
    let answer = loop {
        let frame = next(&mut socket).await.expect("the answer");
        if frame["frame"] == "answer" {
            break frame;
        }
    };
    assert_eq!(answer["reply"]["kind"], "failed", "{answer}");
    assert!(
        !answer.to_string().contains(SECRET),
        "the secret reached the page: {answer}"
    );
    page.daemon.stop().await;
}

/// Cookie tossing: a page of the same site (any other port of this host,
/// say a dev server the model started) cannot read or replace the
/// HttpOnly cookie, but it can set `egirl_device=junk; Path=/ws`, which
/// the browser sends first (longer path). Only the first was tried: the
/// page's socket was refused for as long as the junk stayed.
#[tokio::test]
async fn a_tossed_cookie_beside_the_real_one_does_not_lock_the_page_out() {
    let llama = FakeLlama::start().await;
    let page = Page::start(&llama).await;
    let (_, token) = page.sign_in().await;
    let both = format!("egirl_device=egd_tossed; egirl_device={token}");
    let headers = [("origin", page.base.as_str()), ("cookie", both.as_str())];
    let socket = open(&page.daemon.url, &headers).await;
    assert!(socket.is_ok(), "refused: {:?}", socket.err());
    let response = page.get("/", &[("cookie", &both)]).await;
    assert!(response.headers().get("set-cookie").is_none());
    let index = include_str!("../../src/surfaces/gateway/web/assets/index.html");
    assert_eq!(response.text().await.unwrap(), index);
    // Junk alone is still refused, and cleared.
    let junk = [
        ("origin", page.base.as_str()),
        ("cookie", "egirl_device=egd_tossed"),
    ];
    assert_eq!(open(&page.daemon.url, &junk).await.err(), Some(401));
    page.daemon.stop().await;
}

/// Slow read: requests pipelined by the thousand and no response read.
/// Once the buffers fill, the listener's write waits on the peer for
/// ever, no head is awaited (so no head timeout runs), and the peer's
/// share of connections is held again. The owner must get in once the
/// listener gives up on such writes.
#[tokio::test]
async fn a_peer_that_reads_nothing_cannot_hold_the_listener() {
    let llama = FakeLlama::start().await;
    let page = Page::start(&llama).await;
    let host = page.base.trim_start_matches("http://").to_string();
    let request = format!("GET /assets/app.css HTTP/1.1\r\nHost: {host}\r\n\r\n");
    let pipelined = request.repeat(40_000).into_bytes();
    let mut held = Vec::new();
    for _ in 0..PEER_SHARE {
        let mut socket = TcpStream::connect(&host).await.unwrap();
        // Until the listener stops reading (its responses unread).
        let _ = tokio::time::timeout(Duration::from_secs(3), socket.write_all(&pipelined)).await;
        held.push(socket);
    }
    let owner = reqwest::Client::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    let mut answered = false;
    while !answered && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let got = owner.get(format!("{}/", page.base)).send().await;
        answered = got.is_ok_and(|r| r.status() == StatusCode::OK);
    }
    assert!(
        answered,
        "peers that read nothing still hold the listener after 90 s"
    );
    drop(held);
    page.daemon.stop().await;
}

/// An MCP server that dies printing its key: the status frame's
/// `last_error` carries the server's stderr, and a status frame is no
/// event, so the bus's redaction never saw it.
#[tokio::test]
async fn a_crashing_mcp_servers_key_in_its_stderr_is_redacted_in_the_status() {
    const KEY: &str = "mcp-status-key-7d41c09e5b";
    let llama = FakeLlama::start().await;
    let crash = "[mcp.servers.crash]\ncommand = \"sh\"\n\
                 args = [\"-c\", \"echo auth failed for key=$CRASH_KEY >&2; exit 3\"]\n\
                 env = { CRASH_KEY = \"${WEBUI_MCP_KEY}\" }\n";
    let page = Page::with(Daemon::start_with(&llama, crash, &[("WEBUI_MCP_KEY", KEY)]).await);
    let (_, token) = page.sign_in().await;
    let mut socket = page.said_hello(&token).await;
    let failed = loop {
        let frame = tokio::time::timeout(Duration::from_secs(60), next(&mut socket))
            .await
            .expect("a status frame with the failed server within 60 s")
            .expect("the socket open");
        assert!(
            !frame.to_string().contains(KEY),
            "the page got the key: {frame}"
        );
        let servers = frame["mcp"].as_array().cloned().unwrap_or_default();
        // The stderr tail is in the error once the server's output was
        // read before it was seen to fail (it is retried until it is).
        let with_stderr = |s: &&serde_json::Value| {
            s["state"] == "failed"
                && s["last_error"]
                    .as_str()
                    .is_some_and(|e| e.contains("auth failed"))
        };
        if frame["frame"] == "status"
            && let Some(server) = servers.iter().find(with_stderr)
        {
            break server.clone();
        }
    };
    let error = failed["last_error"].as_str().unwrap_or_default();
    assert!(error.contains("auth failed for key=[redacted"), "{failed}");
    page.daemon.stop().await;
}
