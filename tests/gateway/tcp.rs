//! The TCP + WebSocket listener through the real binary: `egirl serve` with
//! `[gateway] listen = "127.0.0.1:0"` prints where it listens; a client
//! without the token, with a wrong one or from a foreign page is refused,
//! one with the token is served; the token shows in no log, transcript or
//! output; auth cannot be switched off for another machine.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use egirl::protocol::wire::{ClientFrame, ClientHello, PairRequest, WIRE_VERSION};
use egirl::protocol::{Op, Origin, Submission, SubmissionId};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::support::fake_llama::{FakeLlama, Reply};

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

const WAIT: Duration = Duration::from_secs(30);

/// `egirl serve` with the gateway on a free port, its config dir (the
/// token, the devices) in the temp dir.
pub struct Daemon {
    pub dir: tempfile::TempDir,
    child: tokio::process::Child,
    /// `ws://127.0.0.1:PORT/ws`.
    pub url: String,
    stderr: Arc<Mutex<String>>,
    /// Reads stderr to its end: the lines written just before the exit
    /// are read after `wait` returns.
    reader: tokio::task::JoinHandle<()>,
}

impl Daemon {
    pub async fn start(llama: &FakeLlama) -> Daemon {
        Self::start_with(llama, "", &[]).await
    }

    /// With `gateway` appended to its `[gateway]` section and `env` in
    /// its environment.
    pub async fn start_with(llama: &FakeLlama, gateway: &str, env: &[(&str, &str)]) -> Daemon {
        let dir = tempfile::tempdir().unwrap();
        let config = format!(
            "[workspace]\npath = \"ws\"\n[log]\ndir = \"{logs}\"\n[local]\nendpoint = \"{llama}\"\nmodel = \"fake\"\n\
             [gateway]\nlisten = \"127.0.0.1:0\"\n{gateway}\n",
            logs = dir.path().join("logs").display(),
            llama = llama.url(),
        );
        std::fs::write(dir.path().join("egirl.toml"), config).unwrap();
        let mut child = egirl(dir.path())
            .arg("serve")
            .envs(env.iter().copied())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (url_tx, url_rx) = tokio::sync::oneshot::channel();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let kept = stderr.clone();
        let reader = tokio::spawn(async move {
            let mut url_tx = Some(url_tx);
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(port) = line.strip_prefix("egirl: listening on ws://")
                    && let Some(tx) = url_tx.take()
                {
                    let _ = tx.send(format!("ws://{}", port.trim()));
                }
                kept.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        let url = tokio::time::timeout(WAIT, url_rx)
            .await
            .unwrap_or_else(|_| panic!("no listening line: {}", stderr.lock().unwrap()))
            .unwrap_or_else(|_| panic!("serve ended: {}", stderr.lock().unwrap()));
        assert!(
            url.starts_with("ws://127.0.0.1:") && url.ends_with("/ws"),
            "{url}"
        );
        Daemon {
            dir,
            child,
            url,
            stderr,
            reader,
        }
    }

    pub fn config_dir(&self) -> PathBuf {
        self.dir.path().join("config/egirl")
    }

    pub fn token(&self) -> String {
        std::fs::read_to_string(self.config_dir().join("gateway/token"))
            .unwrap()
            .trim()
            .to_string()
    }

    /// `egirl ARGS` with this daemon's config and config dir.
    pub async fn run(&self, args: &[&str]) -> std::process::Output {
        egirl(self.dir.path()).args(args).output().await.unwrap()
    }

    /// Stops the daemon; what it wrote on stderr.
    pub async fn stop(mut self) -> (tempfile::TempDir, String) {
        let pid = self.child.id().unwrap() as i32;
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let _ = tokio::time::timeout(WAIT, self.child.wait()).await;
        let _ = tokio::time::timeout(WAIT, &mut self.reader).await;
        let stderr = self.stderr.lock().unwrap().clone();
        (self.dir, stderr)
    }
}

/// The binary with `dir`'s config, `HOME` and config dir.
fn egirl(dir: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"));
    cmd.arg("--config")
        .arg(dir.join("egirl.toml"))
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env_remove("EGIRL_CONFIG")
        .env_remove("EGIRL_GATEWAY_NO_AUTH")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Opens the WebSocket with these headers; Err(status) when the upgrade
/// is refused.
pub async fn open(url: &str, headers: &[(&str, &str)]) -> Result<Socket, u16> {
    let mut request = url.into_client_request().unwrap();
    for (name, value) in headers {
        let name: tokio_tungstenite::tungstenite::http::HeaderName = name.parse().unwrap();
        request.headers_mut().insert(name, value.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((socket, _)) => Ok(socket),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            Err(response.status().as_u16())
        }
        Err(e) => panic!("connecting to {url}: {e}"),
    }
}

pub async fn send(socket: &mut Socket, frame: &ClientFrame) {
    let text = serde_json::to_string(frame).unwrap();
    socket.send(Message::Text(text)).await.unwrap();
}

/// The next frame; None when the server closed the connection.
pub async fn next(socket: &mut Socket) -> Option<Value> {
    loop {
        let message = tokio::time::timeout(WAIT, socket.next())
            .await
            .expect("a frame within 30 s");
        match message {
            Some(Ok(Message::Text(text))) => return Some(serde_json::from_str(&text).unwrap()),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
            Some(Ok(other)) => panic!("not a text frame: {other:?}"),
        }
    }
}

pub fn hello(token: Option<&str>) -> ClientFrame {
    ClientFrame::Hello(ClientHello {
        version: WIRE_VERSION,
        client: "gateway-test".into(),
        token: token.map(str::to_string),
        resume_after: None,
    })
}

pub fn pair(code: &str) -> ClientFrame {
    ClientFrame::Pair(PairRequest {
        code: code.into(),
        device: "phone".into(),
    })
}

pub fn message(id: &str, text: &str) -> ClientFrame {
    ClientFrame::Op(Submission {
        agent: None,
        id: SubmissionId(id.into()),
        op: Op::UserMessage {
            images: Vec::new(),
            session: "gw-test".into(),
            origin: Origin::Cli,
            text: text.into(),
        },
    })
}

/// Sends `hello`; the server's `error` message when it refuses, after
/// which the connection is closed.
pub async fn refused_hello(socket: &mut Socket, token: Option<&str>) -> String {
    send(socket, &hello(token)).await;
    let frame = next(socket).await.expect("an error frame");
    assert_eq!(frame["frame"], "error", "{frame}");
    assert!(next(socket).await.is_none(), "closed after the error");
    frame["message"].as_str().unwrap().to_string()
}

/// Says `hello` with `token`, sends a message and waits for its turn to
/// end; the frames seen.
pub async fn served_turn(socket: &mut Socket, token: Option<&str>, text: &str) -> Vec<Value> {
    send(socket, &hello(token)).await;
    let first = next(socket).await.expect("hello");
    assert_eq!(first["frame"], "hello", "{first}");
    send(socket, &message("op-1", text)).await;
    let mut seen = Vec::new();
    loop {
        let frame = next(socket).await.expect("the turn's events");
        assert_ne!(frame["frame"], "error", "{frame}");
        let ended = frame["frame"] == "event" && frame["event"]["type"] == "turn_ended";
        seen.push(frame);
        if ended {
            return seen;
        }
    }
}

/// Every file under `dir` holding `needle`.
pub fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if std::fs::read(&path)
            .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
        {
            found.push(path);
        }
    }
    found
}

#[tokio::test]
async fn only_the_token_opens_the_gateway_and_it_is_never_shown() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama).await;
    let token = daemon.token();
    let url = daemon.url.clone();

    let mut socket = open(&url, &[]).await.unwrap();
    let why = refused_hello(&mut socket, None).await;
    assert!(why.contains("needs a token"), "{why}");
    let mut socket = open(&url, &[]).await.unwrap();
    let why = refused_hello(&mut socket, Some("egt_wrong")).await;
    assert_eq!(why, "wrong token");
    assert_eq!(
        open(&url, &[("authorization", "Bearer egt_wrong")])
            .await
            .err(),
        Some(401)
    );
    assert_eq!(
        open(&url, &[("origin", "http://evil.example")]).await.err(),
        Some(403)
    );
    let port = url
        .trim_start_matches("ws://127.0.0.1:")
        .trim_end_matches("/ws");
    let wrong_port = format!("http://127.0.0.1:{}", port.parse::<u16>().unwrap() ^ 1);
    assert_eq!(
        open(&url, &[("origin", &wrong_port)]).await.err(),
        Some(403)
    );

    // A page must be of the very host the browser asked for (here
    // 127.0.0.1, not localhost), and a browser needs its device cookie
    // (or a bearer) on the upgrade itself: a token in hello is not enough.
    let localhost = format!("http://localhost:{port}");
    assert_eq!(open(&url, &[("origin", &localhost)]).await.err(), Some(403));
    let own = format!("http://127.0.0.1:{port}");
    assert_eq!(open(&url, &[("origin", &own)]).await.err(), Some(401));

    // The token in hello, from a client that is no browser.
    let mut socket = open(&url, &[]).await.unwrap();
    llama.push_reply(Reply::text("pong over tcp"));
    let frames = served_turn(&mut socket, Some(&token), "ping").await;
    assert!(
        frames
            .iter()
            .any(|f| f.to_string().contains("pong over tcp")),
        "{frames:?}"
    );

    // The token as a bearer header, hello without one, from the page's
    // own origin.
    let bearer = format!("Bearer {token}");
    let headers = [("authorization", bearer.as_str()), ("origin", own.as_str())];
    let mut socket = open(&url, &headers).await.unwrap();
    llama.push_reply(Reply::text("pong by bearer"));
    served_turn(&mut socket, None, "ping again").await;
    drop(socket);

    let (dir, stderr) = daemon.stop().await;
    assert!(!stderr.contains(&token), "{stderr}");
    for place in ["logs", "ws"] {
        let holding = files_holding(&dir.path().join(place), &token);
        assert!(holding.is_empty(), "the token is in {holding:?}");
    }
    let requests = llama
        .requests()
        .iter()
        .map(Value::to_string)
        .collect::<String>();
    assert!(!requests.contains(&token), "the model was sent the token");
}

#[tokio::test]
async fn auth_is_not_switched_off_for_another_machine_and_bad_listens_are_one_line() {
    let llama = FakeLlama::start().await;
    let dir = tempfile::tempdir().unwrap();
    let write = |listen: &str| {
        let config = format!(
            "[workspace]\npath = \"ws\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n[gateway]\nlisten = \"{listen}\"\n",
            llama.url()
        );
        std::fs::write(dir.path().join("egirl.toml"), config).unwrap();
    };
    write("0.0.0.0:0");
    let out = egirl(dir.path())
        .arg("serve")
        .env("EGIRL_GATEWAY_NO_AUTH", "1")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not a loopback address"), "{stderr}");

    write("my laptop");
    let out = egirl(dir.path()).arg("serve").output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("is not an address"), "{stderr}");

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    write(&taken.local_addr().unwrap().to_string());
    let out = egirl(dir.path()).arg("serve").output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("[gateway]"))
        .unwrap_or("");
    assert!(line.contains("cannot listen on"), "{stderr}");
}

#[tokio::test]
async fn the_websocket_link_attaches_with_the_token_only() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama).await;
    let base = daemon.url.trim_end_matches("/ws").to_string();
    let refused = egirl::link::ws::connect(&base, None, "gateway-test").await;
    let why = format!("{:#}", refused.err().expect("refused without a token"));
    assert!(why.contains("needs a token"), "{why}");

    let link = egirl::link::ws::connect(&base, Some(daemon.token()), "gateway-test")
        .await
        .unwrap();
    assert_eq!(link.attached.as_deref(), Some(base.as_str()));
    let mut events = link.subscribe();
    llama.push_reply(Reply::text("over the link"));
    assert!(link.submit(Op::UserMessage {
        images: Vec::new(),
        session: "gw-link".into(),
        origin: Origin::Cli,
        text: "hi".into(),
    }));
    let mut seen = String::new();
    loop {
        let event = tokio::time::timeout(WAIT, events.recv())
            .await
            .expect("events within 30 s")
            .expect("the link stays up");
        seen.push_str(&serde_json::to_string(&event).unwrap());
        if matches!(event.kind, egirl::protocol::EventKind::TurnEnded(_)) {
            break;
        }
    }
    assert!(seen.contains("over the link"), "{seen}");
    daemon.stop().await;
}
