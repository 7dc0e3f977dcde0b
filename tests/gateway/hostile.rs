//! The gateway against a hostile peer, through the real binary: a device
//! revoked while it only listens is cut without sending anything; a
//! session id from the wire that is not a file name (`../x`) is rejected
//! before the core sees it; a connection flooding ops that start work is
//! rejected past its budget; foreign `Origin`s that look like ours are
//! refused; a paired device's name cannot hide or reorder text.

use egirl::protocol::wire::ClientFrame;
use egirl::protocol::{Command, Op, Origin, Submission, SubmissionId};
use std::time::Duration;

use serde_json::Value;

use super::tcp::{Daemon, hello, next, open, send, served_turn};
use crate::support::fake_llama::{FakeLlama, Reply};

/// `egirl pair --name NAME`, then `pair` on the wire: the device's id
/// and token.
async fn paired_device(daemon: &Daemon, name: &str) -> (String, String) {
    let out = daemon.run(&["pair", "--name", name]).await;
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let code = stdout
        .split_whitespace()
        .find(|w| w.len() == 9 && w.as_bytes()[4] == b'-')
        .unwrap_or_else(|| panic!("no code in {stdout}"));
    let base = daemon.url.trim_end_matches("/ws").to_string();
    let paired = egirl::link::ws::pair(&base, code, "phone").await.unwrap();
    (paired.device, paired.token)
}

fn op(id: &str, op: Op) -> ClientFrame {
    ClientFrame::Op(Submission {
        agent: None,
        id: SubmissionId(id.into()),
        op,
    })
}

/// Frames until one whose `frame` is `kind` (the events in between are
/// skipped); None when the connection closed first.
async fn until(socket: &mut super::tcp::Socket, kind: &str) -> Option<Value> {
    loop {
        let frame = next(socket).await?;
        if frame["frame"] == kind {
            return Some(frame);
        }
    }
}

#[tokio::test]
async fn a_device_revoked_while_it_only_listens_is_cut() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama).await;
    let (device, token) = paired_device(&daemon, "listener").await;
    let mut socket = open(&daemon.url, &[]).await.unwrap();
    llama.push_reply(Reply::text("hello device"));
    served_turn(&mut socket, Some(&token), "hi").await;

    let revoked = daemon.run(&["devices", "revoke", &device]).await;
    assert!(revoked.status.success());
    // Nothing is sent: the server itself notices within its recheck.
    let cut = until(&mut socket, "error")
        .await
        .expect("an error, then close");
    assert!(
        cut["message"]
            .as_str()
            .unwrap()
            .contains("no longer admitted"),
        "{cut}"
    );
    assert!(next(&mut socket).await.is_none(), "closed after the error");
    daemon.stop().await;
}

#[tokio::test]
async fn wire_session_ids_are_file_names_and_floods_are_bounded() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama).await;
    let mut socket = open(&daemon.url, &[]).await.unwrap();
    send(&mut socket, &hello(Some(&daemon.token()))).await;
    assert_eq!(next(&mut socket).await.unwrap()["frame"], "hello");

    for (n, session) in ["../../escape", "/tmp/abs", ".hidden", ""]
        .into_iter()
        .enumerate()
    {
        let id = format!("bad-{n}");
        let message = Op::UserMessage {
            images: Vec::new(),
            session: session.into(),
            origin: Origin::Cli,
            text: "hi".into(),
        };
        send(&mut socket, &op(&id, message)).await;
        let rejected = until(&mut socket, "rejected").await.expect("rejected");
        assert_eq!(rejected["id"], id.as_str(), "{rejected}");
        assert!(
            rejected["message"]
                .as_str()
                .unwrap()
                .contains("invalid session id"),
            "{rejected}"
        );
    }
    let rewind = Op::Command {
        session: "../sessions/x".into(),
        command: Command::Rewind { turn: usize::MAX },
    };
    send(&mut socket, &op("bad-rewind", rewind)).await;
    let rejected = until(&mut socket, "rejected").await.expect("rejected");
    assert_eq!(rejected["id"], "bad-rewind", "{rejected}");
    assert!(!daemon.dir.path().join("escape.jsonl").exists());

    // `/clear` costs the core nothing, so a flood of it reaches the budget.
    let mut refused = None;
    for n in 0..100 {
        let clear = Op::Command {
            session: "flood".into(),
            command: Command::Clear,
        };
        send(&mut socket, &op(&format!("clear-{n}"), clear)).await;
    }
    while refused.is_none() {
        let frame = next(&mut socket).await.expect("the connection stays");
        if frame["frame"] == "rejected" {
            refused = Some(frame);
        }
    }
    let refused = refused.unwrap();
    assert!(
        refused["message"].as_str().unwrap().contains("too many"),
        "{refused}"
    );
    // An interrupt is never refused by the budget.
    let interrupt = Op::Interrupt {
        session: "flood".into(),
    };
    send(&mut socket, &op("stop", interrupt)).await;
    daemon.stop().await;
}

#[tokio::test]
async fn origins_that_only_look_like_ours_are_refused() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama).await;
    let port = daemon
        .url
        .trim_start_matches("ws://127.0.0.1:")
        .trim_end_matches("/ws")
        .to_string();
    for origin in [
        "null".to_string(),
        format!("http://127.0.0.1:{port}.evil.com"),
        format!("http://127.0.0.1:{port}/"),
        format!("http://evil.com:{port}"),
        format!("http://localhost:{port}@evil.com"),
        "http://127.0.0.1".to_string(),
    ] {
        let refused = open(&daemon.url, &[("origin", origin.as_str())]).await;
        assert_eq!(refused.err(), Some(403), "{origin}");
    }
    // The page of the host the browser asked for (case aside; `https`
    // behind a TLS proxy) is ours, with its cookie or a bearer: the
    // origin alone admits nobody.
    let bearer = format!("Bearer {}", daemon.token());
    for ours in [
        format!("HTTP://127.0.0.1:{port}"),
        format!("https://127.0.0.1:{port}"),
    ] {
        let alone = open(&daemon.url, &[("origin", ours.as_str())]).await;
        assert_eq!(alone.err(), Some(401), "{ours}");
        let headers = [
            ("origin", ours.as_str()),
            ("authorization", bearer.as_str()),
        ];
        assert!(open(&daemon.url, &headers).await.is_ok(), "{ours}");
    }
    daemon.stop().await;
}

#[tokio::test]
async fn silent_connections_are_bounded_per_peer_and_closed() {
    use tokio::io::AsyncReadExt;
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama).await;
    let addr = daemon
        .url
        .trim_start_matches("ws://")
        .trim_end_matches("/ws")
        .to_string();
    let mut silent = Vec::new();
    for _ in 0..40 {
        silent.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    // Past one peer's share a connection is closed at once; the others
    // when they stayed silent too long. None is held open.
    let mut closed = 0;
    for mut stream in silent {
        let mut byte = [0u8; 1];
        let read = tokio::time::timeout(Duration::from_secs(40), stream.read(&mut byte)).await;
        assert!(
            matches!(read, Ok(Ok(0) | Err(_))),
            "a silent connection is closed"
        );
        closed += 1;
    }
    assert_eq!(closed, 40);
    let mut socket = open(&daemon.url, &[]).await.unwrap();
    send(&mut socket, &hello(Some(&daemon.token()))).await;
    assert_eq!(next(&mut socket).await.unwrap()["frame"], "hello");
    daemon.stop().await;
}

#[tokio::test]
async fn what_an_unauthenticated_peer_sends_reaches_the_log_escaped_and_cut() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama).await;
    let mut socket = open(&daemon.url, &[]).await.unwrap();
    let forged = format!(
        "\u{1b}]0;pwned\u{7}\nINFO gateway: forged-line {}",
        "x".repeat(100_000)
    );
    let frame = serde_json::json!({ "frame": forged }).to_string();
    socket.send(Message::Text(frame)).await.unwrap();
    let refused = next(&mut socket).await.expect("an error");
    assert_eq!(refused["frame"], "error", "{refused}");
    let (dir, stderr) = daemon.stop().await;
    let mut logged = stderr;
    for file in walk(&dir.path().join("logs")) {
        logged.push_str(&String::from_utf8_lossy(&std::fs::read(file).unwrap()));
    }
    assert!(logged.contains("forged-line"), "the refusal is logged");
    assert!(!logged.contains('\u{1b}'), "no escape sequence in the log");
    assert!(
        !logged.contains("\nINFO gateway: forged-line"),
        "no forged line"
    );
    assert!(!logged.contains(&"x".repeat(1_000)), "the quote is cut");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Listens on argv 1 as whoever runs it, appends what each client sends
/// to argv 2, and answers with a `hello` (a socket planted by another
/// user where a workspace is shared, or named to `egirl attach`).
const PLANTED: &str = r#"
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.listen(8)
s.settimeout(20)
while True:
    try:
        c, _ = s.accept()
    except socket.timeout:
        break
    c.settimeout(2)
    try:
        data = c.recv(65536)
    except OSError:
        data = b""
    with open(sys.argv[2], "ab") as out:
        out.write(data)
    try:
        c.sendall(b'{"frame":"hello","version":1,"events":1,"server":"x","pid":1,"mode":"serve","workspace":"/","seq":0}\n')
    except OSError:
        pass
"#;

/// The client says hello (with the gateway token) only to a socket its
/// own user listens on.
#[tokio::test]
async fn attach_never_sends_the_token_to_another_users_socket() {
    // Not a `python3` on PATH: a user's own (pyenv's shims under /root)
    // may be closed to the other user.
    let python = std::path::Path::new("/usr/bin/python3");
    if !python.exists() || !setpriv() {
        eprintln!("skipped: needs /usr/bin/python3 and setpriv");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let fake = FakeLlama::start().await;
    let cli = crate::support::cli::Cli::new(&fake, "");
    egirl::workspace::ensure(&cli.workspace()).expect("workspace");
    let shared = tempfile::tempdir().unwrap();
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let script = shared.path().join("planted.py");
    std::fs::write(&script, PLANTED).unwrap();
    let socket = shared.path().join("planted.sock");
    let got = shared.path().join("got");
    let mut server = tokio::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(python)
        .arg(&script)
        .arg(&socket)
        .arg(&got)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(std::time::Instant::now() < deadline, "no planted socket");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = cli.run(&["attach", &socket.display().to_string()]).await;
    let stderr = crate::support::cli::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let sent = std::fs::read_to_string(&got).unwrap_or_default();
    assert!(
        !sent.contains("egt_"),
        "the token went to another user: {sent}"
    );
    let _ = server.kill().await;
}

fn setpriv() -> bool {
    std::process::Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}
