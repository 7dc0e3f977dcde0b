//! `query` frames over the page's socket against a real `egirl serve`
//! whose workspace holds transcripts (a compaction, a rewind, a fork), a
//! cron job and today's usage; a secret in a transcript comes back
//! redacted, a bad session id as `failed`.

use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::http::Page;
use crate::gateway::tcp::{Daemon, Socket, next};
use crate::support::fake_llama::{FakeLlama, Reply};

const SECRET: &str = "sk-web-secret-93f1c2d7";
const ENV: [(&str, &str); 1] = [("WEBUI_TEST_TOKEN", SECRET)];

fn at(minute: u32) -> String {
    format!("2026-11-20T10:{minute:02}:00Z")
}

/// `chat-a`: a turn with a tool call, a compaction, a second turn, a
/// rewind; `chat-b`: its fork.
fn transcripts(workspace: &std::path::Path) {
    let a = [
        json!({"ts": at(1), "origin": "discord:123", "role": "user",
               "content": format!("deploy with {SECRET} please")}),
        json!({"ts": at(2), "origin": "discord:123", "provider": "llamacpp", "role": "assistant",
               "content": "running it",
               "tool_calls": [{"id": "c1", "name": "exec", "arguments": {"command": "ls"}}]}),
        json!({"ts": at(3), "origin": "discord:123", "role": "tool", "tool_call_id": "c1",
               "name": "exec", "content": format!("out {SECRET}")}),
        json!({"ts": at(4), "origin": "discord:123", "role": "system", "content": "they deployed",
               "compaction": {"kept": 0, "summarized_messages": 3, "before_tokens": 900,
                              "after_tokens": 200, "model": "local"}}),
        json!({"ts": at(5), "origin": "discord:123", "role": "user", "content": "again"}),
        json!({"ts": at(6), "mark": "rewound", "keep": 4, "turn": 2}),
    ];
    let lines = |values: &[Value]| values.iter().map(|v| format!("{v}\n")).collect::<String>();
    let dir = workspace.join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("chat-a.jsonl"), lines(&a)).unwrap();
    let forked = json!({"ts": at(7), "mark": "forked_from", "session": "chat-a"});
    let b: Vec<Value> = std::iter::once(forked).chain(a.iter().cloned()).collect();
    std::fs::write(dir.join("chat-b.jsonl"), lines(&b)).unwrap();
}

fn cron_job(workspace: &std::path::Path) {
    let job = egirl::cron::Job {
        id: "digest".into(),
        schedule: egirl::cron::Schedule::every("24h").unwrap(),
        message: "summarize the day".into(),
        deliver: Default::default(),
        enabled: true,
        created_at: chrono::Utc::now(),
        next_run: Some(chrono::Utc::now() + chrono::Duration::hours(20)),
        last_run: None,
        last_status: None,
        consecutive_errors: 0,
    };
    egirl::cron::CronStore::in_workspace(workspace)
        .add(job)
        .unwrap();
}

/// Sends `frame` as it is, one text message.
async fn send_raw(socket: &mut Socket, frame: &Value) {
    socket.send(Message::Text(frame.to_string())).await.unwrap();
}

/// Sends `frame` as it is and returns the `answer` to it.
async fn ask(socket: &mut Socket, frame: Value) -> Value {
    let id = frame["id"].clone();
    send_raw(socket, &frame).await;
    loop {
        let got = next(socket).await.expect("an answer before the close");
        assert_ne!(got["frame"], "error", "{got}");
        if got["frame"] == "answer" {
            assert_eq!(got["id"], id, "{got}");
            return got["reply"].clone();
        }
    }
}

async fn query(socket: &mut Socket, id: &str, ask_for: Value) -> Value {
    ask(socket, json!({"frame": "query", "id": id, "ask": ask_for})).await
}

#[tokio::test]
async fn each_query_is_answered_from_the_workspace() {
    let llama = FakeLlama::start().await;
    let page = Page::with(Daemon::start_with(&llama, "", &ENV).await);
    let workspace = page.daemon.dir.path().join("ws");
    transcripts(&workspace);
    cron_job(&workspace);
    let (_, token) = page.sign_in().await;
    let mut socket = page.said_hello(&token).await;

    // A turn from the page: its session is live, its origin `web`.
    llama.push_reply(Reply::text("hi from the model"));
    let op = json!({"frame": "op", "id": "w1", "op": {"type": "user_message",
        "session": "web-1", "origin": "web", "text": "hello"}});
    send_raw(&mut socket, &op).await;
    loop {
        let frame = next(&mut socket).await.expect("the turn's events");
        assert_ne!(frame["frame"], "rejected", "{frame}");
        if frame["frame"] == "event" && frame["event"]["type"] == "turn_ended" {
            break;
        }
    }

    let reply = query(&mut socket, "q1", json!({"kind": "sessions"})).await;
    assert_eq!(reply["kind"], "sessions", "{reply}");
    let sessions = reply["sessions"].as_array().unwrap();
    let ids: Vec<&str> = sessions.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids[0], "web-1", "{reply}");
    assert!(
        ids.contains(&"chat-a") && ids.contains(&"chat-b"),
        "{reply}"
    );
    assert_eq!(sessions[0]["live"], true);
    assert_eq!(sessions[0]["origin"], "web");
    assert_eq!(sessions[0]["title"], "hello");
    let a = sessions.iter().find(|s| s["id"] == "chat-a").unwrap();
    assert_eq!(a["origin"], "discord:123");
    assert_eq!(a["live"], false);
    assert_eq!(a["messages"], 4, "the rewind cut the last message: {a}");
    assert!(!reply.to_string().contains(SECRET), "{reply}");

    let reply = query(
        &mut socket,
        "q2",
        json!({"kind": "transcript", "session": "chat-b"}),
    )
    .await;
    assert_eq!(reply["kind"], "transcript", "{reply}");
    assert_eq!(reply["session"], "chat-b");
    assert_eq!(reply["truncated"], false);
    let items = reply["items"].as_array().unwrap();
    let kinds: Vec<&str> = items.iter().map(|i| i["item"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "forked_from",
            "user",
            "assistant",
            "tool_result",
            "compaction",
            "user",
            "rewound"
        ]
    );
    assert_eq!(items[0]["session"], "chat-a");
    assert_eq!(items[1]["origin"], "discord:123");
    assert_eq!(items[2]["provider"], "llamacpp");
    assert_eq!(items[2]["tool_calls"][0]["arguments"]["command"], "ls");
    assert_eq!(items[3]["denied"], false);
    assert_eq!(items[4]["summarized_messages"], 3);
    assert_eq!(items[4]["summary"], "they deployed");
    assert_eq!(items[6]["turn"], 2);
    let shown = reply.to_string();
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(shown.contains("[redacted:WEBUI_TEST_TOKEN]"), "{shown}");

    let reply = query(&mut socket, "q3", json!({"kind": "cron"})).await;
    let jobs = reply["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{reply}");
    assert_eq!(jobs[0]["id"], "digest");
    assert_eq!(jobs[0]["schedule"], "every 24h");
    assert_eq!(jobs[0]["session"], "cron-digest");
    assert_eq!(jobs[0]["prompt"], "summarize the day");
    assert!(jobs[0]["next_run"].is_string(), "{reply}");
    assert!(jobs[0]["describe"].as_str().unwrap().contains("digest"));

    // The turn above was today's one request.
    let reply = query(&mut socket, "q4", json!({"kind": "stats"})).await;
    assert_eq!(reply["kind"], "stats", "{reply}");
    let rows = reply["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{reply}");
    assert_eq!(rows[0]["provider"], "llamacpp");
    assert_eq!(rows[0]["requests"], 1);
    assert!(reply["total_cost_usd"].is_number());

    for (id, session, says) in [
        ("q5", "../../etc/passwd", "invalid session id"),
        ("q6", "nope", "no session `nope`"),
    ] {
        let reply = query(
            &mut socket,
            id,
            json!({"kind": "transcript", "session": session}),
        )
        .await;
        assert_eq!(reply["kind"], "failed", "{reply}");
        assert!(reply["message"].as_str().unwrap().contains(says), "{reply}");
    }
    // An unknown kind is a frame the server does not read: rejected, and
    // the connection stays.
    let bad = json!({"frame": "query", "id": "q7", "ask": {"kind": "secrets"}});
    send_raw(&mut socket, &bad).await;
    let rejected = next(&mut socket).await.unwrap();
    assert_eq!(rejected["frame"], "rejected", "{rejected}");
    assert_eq!(rejected["id"], "q7");
    let reply = query(&mut socket, "q8", json!({"kind": "cron"})).await;
    assert_eq!(reply["kind"], "cron");
    page.daemon.stop().await;
}

#[tokio::test]
async fn a_query_is_no_first_frame() {
    let llama = FakeLlama::start().await;
    let page = Page::start(&llama).await;
    let (_, token) = page.sign_in().await;
    let mut socket = page.socket(&token).await.unwrap();
    let first = json!({"frame": "query", "id": "q1", "ask": {"kind": "sessions"}});
    send_raw(&mut socket, &first).await;
    let refused = next(&mut socket).await.expect("an error frame");
    assert_eq!(refused["frame"], "error", "{refused}");
    assert!(next(&mut socket).await.is_none(), "closed after the error");
    page.daemon.stop().await;
}
