use super::*;

const OPTIONS: Options = Options {
    max_line: 1024,
    gone: "the peer closed its connection",
};

#[test]
fn lines_sort_into_requests_notifications_and_responses() {
    let request = parse(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    assert!(
        matches!(request, Ok(Frame::Incoming(Incoming::Request { ref method, .. })) if method == "initialize")
    );
    let note = parse(br#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#);
    assert!(
        matches!(note, Ok(Frame::Incoming(Incoming::Notification { ref method, .. })) if method == "session/cancel")
    );
    let answer = parse(br#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#);
    assert_eq!(
        answer,
        Ok(Frame::Response {
            id: json!(3),
            outcome: Err("no".into())
        })
    );
    assert!(parse(b"not json").is_err());
    assert!(parse(b"{}").is_err());
}

#[tokio::test]
async fn a_request_gets_the_answer_with_its_id() {
    let (ours, theirs) = tokio::io::duplex(4096);
    let (our_read, our_write) = tokio::io::split(ours);
    let started = Connection::start(our_read, our_write, OPTIONS);
    let conn = started.connection.clone();
    let asking =
        tokio::spawn(async move { conn.request("session/request_permission", json!({})).await });
    let (their_read, mut their_write) = tokio::io::split(theirs);
    let mut lines = BufReader::new(their_read).lines();
    let sent: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(sent["method"], "session/request_permission");
    let answer = json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"outcome": {"outcome": "cancelled"}}});
    their_write
        .write_all(format!("{answer}\n").as_bytes())
        .await
        .unwrap();
    let got = asking.await.unwrap().unwrap();
    assert_eq!(got["outcome"]["outcome"], "cancelled");
}

#[tokio::test]
async fn answers_reach_their_request_and_a_gone_agent_fails_what_is_asked_next() {
    // Reads one request, answers it after a log line and a
    // notification, then exits.
    let script = r#"read line; echo "a log line"; echo '{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}'; echo '{"jsonrpc":"2.0","id":0,"result":{"ok":true}}'"#;
    let mut child = tokio::process::Command::new("sh")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    let Started {
        connection: conn,
        mut incoming,
        ..
    } = Connection::start(stdout, stdin, OPTIONS);
    let answer = conn.request("initialize", json!({})).await;
    assert_eq!(answer, Ok(json!({"ok": true})));
    let log = incoming.recv().await.unwrap();
    assert!(matches!(
        log,
        Incoming::Invalid {
            id: Value::Null,
            ..
        }
    ));
    let note = incoming.recv().await.unwrap();
    assert_eq!(
        note,
        Incoming::Notification {
            method: "session/update".into(),
            params: json!({"n": 1})
        }
    );
    assert!(incoming.recv().await.is_none());
    let _ = child.wait().await;
    let late = conn.request("session/new", json!({})).await;
    assert_eq!(late, Err("the peer closed its connection".into()));
}

#[tokio::test]
async fn errors_go_out_with_their_code_and_blank_lines_are_skipped() {
    let (ours, theirs) = tokio::io::duplex(4096);
    let (our_read, our_write) = tokio::io::split(ours);
    let Started {
        connection: conn,
        mut incoming,
        writer,
    } = Connection::start(our_read, our_write, OPTIONS);
    let (their_read, mut their_write) = tokio::io::split(theirs);
    their_write
        .write_all(b"\n  \n{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"x\"}\n")
        .await
        .unwrap();
    let Some(Incoming::Request { id, method, params }) = incoming.recv().await else {
        panic!("not a request");
    };
    assert_eq!(
        (id.clone(), method.as_str(), params),
        (json!("a"), "x", Value::Null)
    );
    conn.respond(id, Err(RpcError::no_method("no `x` here")));
    drop(conn);
    // Every connection gone: the writer ends after what was queued.
    writer.await.unwrap();
    let mut lines = BufReader::new(their_read).lines();
    let sent: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(
        sent,
        json!({"jsonrpc": "2.0", "id": "a", "error": {"code": METHOD_NOT_FOUND, "message": "no `x` here"}})
    );
}

#[tokio::test]
async fn a_line_over_the_limit_ends_the_connection() {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (our_read, our_write) = tokio::io::split(ours);
    let Started {
        connection: conn,
        mut incoming,
        ..
    } = Connection::start(our_read, our_write, OPTIONS);
    let (_their_read, mut their_write) = tokio::io::split(theirs);
    let fits = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":\"{}\"}}\n",
        "a".repeat(OPTIONS.max_line - 50)
    );
    let long = format!(
        "{{\"method\":\"n\",\"params\":\"{}\"}}\n",
        "b".repeat(OPTIONS.max_line)
    );
    their_write
        .write_all(format!("{fits}{long}{fits}").as_bytes())
        .await
        .unwrap();
    assert!(matches!(
        incoming.recv().await,
        Some(Incoming::Notification { .. })
    ));
    assert!(incoming.recv().await.is_none());
    let late = conn.request("x", json!({})).await;
    assert_eq!(late, Err(OPTIONS.gone.into()));
}

#[tokio::test]
async fn closing_fails_the_requests_still_waiting() {
    let (ours, _theirs) = tokio::io::duplex(4096);
    let (our_read, our_write) = tokio::io::split(ours);
    let started = Connection::start(our_read, our_write, OPTIONS);
    let conn = started.connection.clone();
    let asking = tokio::spawn(async move { conn.request("x", json!({})).await });
    // The request is queued before we leave.
    while lock(&started.connection.waiting)
        .as_ref()
        .is_some_and(HashMap::is_empty)
    {
        tokio::task::yield_now().await;
    }
    started.connection.close();
    assert_eq!(asking.await.unwrap(), Err(OPTIONS.gone.into()));
}
