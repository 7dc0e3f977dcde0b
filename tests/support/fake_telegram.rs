//! A fake Telegram Bot API (axum on 127.0.0.1, port 0) speaking the
//! documented shapes: `POST /bot<token>/<method>` with a JSON body,
//! answered `{"ok":true,"result":...}` or `{"ok":false,"error_code":...,
//! "description":...,"parameters":{"retry_after":...}}`.
//!
//! Methods: getMe, getUpdates (long polling: waits up to `timeout` for an
//! update, confirms by `offset`), sendMessage, editMessageText,
//! sendChatAction, answerCallbackQuery, getFile (and the file download,
//! `GET /file/bot<token>/<path>`); all recorded. Tests inject
//! updates (messages, button presses) and failures (a 429 with
//! `retry_after`, a connection dropped mid-answer, a revoked token).

#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Notify;

pub const BOT_ID: u64 = 900;
pub const BOT_USERNAME: &str = "egirl_test_bot";
pub const OWNER_ID: u64 = 42;
/// A token the fake answers with 401 (as for a revoked one).
pub const REVOKED_TOKEN: &str = "900:revoked-token-x9";

/// A message the bot sent (sendMessage) or rewrote (editMessageText).
#[derive(Clone, Debug)]
pub struct Sent {
    pub chat: i64,
    pub message_id: i64,
    pub text: String,
    pub parse_mode: Option<String>,
    /// `reply_parameters.message_id`.
    pub reply_to: Option<i64>,
    pub reply_markup: Option<Value>,
}

impl Sent {
    /// The `callback_data` of every inline button.
    pub fn buttons(&self) -> Vec<(String, String)> {
        let rows = self
            .reply_markup
            .as_ref()
            .and_then(|m| m["inline_keyboard"].as_array().cloned())
            .unwrap_or_default();
        rows.iter()
            .flat_map(|row| row.as_array().cloned().unwrap_or_default())
            .map(|b| {
                (
                    b["text"].as_str().unwrap_or("").to_string(),
                    b["callback_data"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }
}

/// A failure the next call of a method gets.
#[derive(Clone, Debug)]
pub enum Fault {
    /// 429 with `parameters.retry_after`.
    RetryAfter(u64),
    /// Headers sent, then the connection is cut before the body ends.
    Drop,
    /// 400 "can't parse entities" (Telegram refusing the HTML).
    BadEntities,
}

#[derive(Default)]
struct Recorded {
    updates: Vec<Value>,
    next_update: i64,
    next_message: i64,
    sent: Vec<Sent>,
    edits: Vec<Sent>,
    actions: Vec<(i64, String)>,
    callback_answers: Vec<(String, String)>,
    /// Every call, by method name (lowercase), in order.
    calls: Vec<String>,
    faults: Vec<(String, VecDeque<Fault>)>,
    /// Files by id, for getFile and the download.
    files: std::collections::HashMap<String, Vec<u8>>,
}

pub struct FakeTelegram {
    addr: SocketAddr,
    state: Arc<Mutex<Recorded>>,
    arrived: Arc<Notify>,
}

type Shared = (Arc<Mutex<Recorded>>, Arc<Notify>);

impl FakeTelegram {
    pub async fn start() -> Self {
        let state = Arc::new(Mutex::new(Recorded {
            next_update: 1,
            next_message: 100,
            ..Recorded::default()
        }));
        let arrived = Arc::new(Notify::new());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .route("/{bot}/{method}", post(call))
            .route("/file/{bot}/{*path}", axum::routing::get(download))
            .with_state((state.clone(), arrived.clone()));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            addr,
            state,
            arrived,
        }
    }

    /// `[channels.telegram] api_url`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A text message from `from` in `chat` (private when `chat` is
    /// positive, a supergroup when negative); returns its message id.
    pub fn message(&self, chat: i64, from: u64, text: &str) -> i64 {
        self.message_replying(chat, from, text, None)
    }

    /// As `message`, replying to `reply_to` (a message the bot sent).
    pub fn message_replying(&self, chat: i64, from: u64, text: &str, reply_to: Option<i64>) -> i64 {
        let mut s = self.state.lock().unwrap();
        let id = s.next_message;
        s.next_message += 1;
        let mut message = json!({
            "message_id": id,
            "date": 1_700_000_000,
            "chat": chat_json(chat),
            "from": {"id": from, "is_bot": false, "first_name": "Owner", "username": format!("user{from}")},
            "text": text,
        });
        if let Some(original) = reply_to {
            message["reply_to_message"] = json!({
                "message_id": original,
                "date": 1_700_000_000,
                "chat": chat_json(chat),
                "from": bot_user(),
                "text": "earlier answer",
            });
        }
        push_update(&mut s, json!({"message": message}));
        drop(s);
        self.arrived.notify_waiters();
        id
    }

    /// A photo with `caption` from `from` in `chat` (`bytes` served by
    /// getFile and the download; `declared_size` is the size the message
    /// says); returns its message id.
    pub fn photo(
        &self,
        chat: i64,
        from: u64,
        caption: &str,
        bytes: Vec<u8>,
        declared_size: usize,
    ) -> i64 {
        let file_id = format!("photo{}", self.state.lock().unwrap().next_message);
        let photo = json!([
            {"file_id": format!("{file_id}-thumb"), "file_unique_id": "t", "width": 90, "height": 90, "file_size": 100},
            {"file_id": file_id, "file_unique_id": "u", "width": 1280, "height": 720, "file_size": declared_size},
        ]);
        self.with_file(
            chat,
            from,
            &file_id,
            bytes,
            json!({"photo": photo, "caption": caption}),
        )
    }

    /// A document with an image `mime_type` (a picture sent "as a file").
    pub fn image_document(&self, chat: i64, from: u64, mime_type: &str, bytes: Vec<u8>) -> i64 {
        let file_id = format!("doc{}", self.state.lock().unwrap().next_message);
        let document = json!({
            "file_id": file_id, "file_unique_id": "d", "file_name": "picture",
            "mime_type": mime_type, "file_size": bytes.len(),
        });
        self.with_file(chat, from, &file_id, bytes, json!({"document": document}))
    }

    fn with_file(&self, chat: i64, from: u64, file_id: &str, bytes: Vec<u8>, fields: Value) -> i64 {
        let mut s = self.state.lock().unwrap();
        s.files.insert(file_id.to_string(), bytes);
        let id = s.next_message;
        s.next_message += 1;
        let mut message = json!({
            "message_id": id,
            "date": 1_700_000_000,
            "chat": chat_json(chat),
            "from": {"id": from, "is_bot": false, "first_name": "Owner", "username": format!("user{from}")},
        });
        for (key, value) in fields.as_object().into_iter().flatten() {
            message[key] = value.clone();
        }
        push_update(&mut s, json!({"message": message}));
        drop(s);
        self.arrived.notify_waiters();
        id
    }

    /// `from` presses the button carrying `data` on the bot's message
    /// `message_id` in `chat`; returns the callback query id.
    pub fn press(&self, chat: i64, message_id: i64, from: u64, data: &str) -> String {
        let mut s = self.state.lock().unwrap();
        let id = format!("cb{}", s.next_update);
        let query = json!({
            "id": id,
            "from": {"id": from, "is_bot": false, "first_name": "Owner"},
            "message": {
                "message_id": message_id,
                "date": 1_700_000_000,
                "chat": chat_json(chat),
                "from": bot_user(),
                "text": "egirl wants to run",
            },
            "chat_instance": "ci",
            "data": data,
        });
        push_update(&mut s, json!({"callback_query": query}));
        drop(s);
        self.arrived.notify_waiters();
        id
    }

    /// The next call of `method` (e.g. "sendmessage") fails as `fault`.
    pub fn fail_next(&self, method: &str, fault: Fault) {
        let mut s = self.state.lock().unwrap();
        let method = method.to_lowercase();
        match s.faults.iter_mut().find(|(m, _)| *m == method) {
            Some((_, queue)) => queue.push_back(fault),
            None => s.faults.push((method, VecDeque::from([fault]))),
        }
    }

    pub fn sent(&self) -> Vec<Sent> {
        self.state.lock().unwrap().sent.clone()
    }

    pub fn edits(&self) -> Vec<Sent> {
        self.state.lock().unwrap().edits.clone()
    }

    /// `(chat, action)` of every sendChatAction.
    pub fn actions(&self) -> Vec<(i64, String)> {
        self.state.lock().unwrap().actions.clone()
    }

    /// `(callback query id, text)` of every answerCallbackQuery.
    pub fn callback_answers(&self) -> Vec<(String, String)> {
        self.state.lock().unwrap().callback_answers.clone()
    }

    /// How many times `method` was called.
    pub fn calls(&self, method: &str) -> usize {
        let method = method.to_lowercase();
        let s = self.state.lock().unwrap();
        s.calls.iter().filter(|m| **m == method).count()
    }

    pub async fn wait_sent(&self, n: usize) -> Vec<Sent> {
        wait_for(Duration::from_secs(20), || self.sent().len() >= n).await;
        self.sent()
    }

    pub async fn wait_edits(&self, n: usize) -> Vec<Sent> {
        wait_for(Duration::from_secs(20), || self.edits().len() >= n).await;
        self.edits()
    }

    pub async fn wait_calls(&self, method: &str, n: usize) {
        wait_for(Duration::from_secs(20), || self.calls(method) >= n).await;
    }
}

fn chat_json(chat: i64) -> Value {
    if chat > 0 {
        json!({"id": chat, "type": "private", "first_name": "Owner"})
    } else {
        json!({"id": chat, "type": "supergroup", "title": "The group"})
    }
}

fn bot_user() -> Value {
    json!({"id": BOT_ID, "is_bot": true, "first_name": "egirl", "username": BOT_USERNAME})
}

fn push_update(s: &mut Recorded, mut update: Value) {
    update["update_id"] = json!(s.next_update);
    s.next_update += 1;
    s.updates.push(update);
}

pub async fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) {
    let start = tokio::time::Instant::now();
    while !done() {
        assert!(
            start.elapsed() < limit,
            "condition not met within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn ok(result: Value) -> Response {
    axum::Json(json!({"ok": true, "result": result})).into_response()
}

fn error(status: StatusCode, description: &str, parameters: Option<Value>) -> Response {
    let mut body = json!({"ok": false, "error_code": status.as_u16(), "description": description});
    if let Some(p) = parameters {
        body["parameters"] = p;
    }
    (status, axum::Json(body)).into_response()
}

async fn call(
    State((state, arrived)): State<Shared>,
    Path((bot, method)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> Response {
    let method = method.to_lowercase();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let fault = {
        let mut s = state.lock().unwrap();
        s.calls.push(method.clone());
        s.faults
            .iter_mut()
            .find(|(m, _)| *m == method)
            .and_then(|(_, q)| q.pop_front())
    };
    if bot == format!("bot{REVOKED_TOKEN}") {
        return error(StatusCode::UNAUTHORIZED, "Unauthorized", None);
    }
    match fault {
        Some(Fault::RetryAfter(secs)) => {
            return error(
                StatusCode::TOO_MANY_REQUESTS,
                &format!("Too Many Requests: retry after {secs}"),
                Some(json!({"retry_after": secs})),
            );
        }
        Some(Fault::BadEntities) => {
            return error(
                StatusCode::BAD_REQUEST,
                "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0",
                None,
            );
        }
        Some(Fault::Drop) => {
            // A body that fails after the headers: hyper cuts the connection.
            let stream = futures_util::stream::iter([
                Ok::<_, std::io::Error>(axum::body::Bytes::from_static(b"{\"ok\":true,\"res")),
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "cut",
                )),
            ]);
            return Response::builder()
                .header("content-type", "application/json")
                .body(Body::from_stream(stream))
                .unwrap();
        }
        None => {}
    }
    match method.as_str() {
        "getme" => {
            let mut me = bot_user();
            me["can_join_groups"] = json!(true);
            me["can_read_all_group_messages"] = json!(false);
            me["supports_inline_queries"] = json!(false);
            me["has_main_web_app"] = json!(false);
            ok(me)
        }
        "getupdates" => get_updates(&state, &arrived, &body).await,
        "sendmessage" => {
            let mut s = state.lock().unwrap();
            let id = s.next_message;
            s.next_message += 1;
            let sent = record(&body, id);
            s.sent.push(sent.clone());
            ok(message_json(&sent))
        }
        "editmessagetext" => {
            let mut s = state.lock().unwrap();
            let id = body["message_id"].as_i64().unwrap_or(0);
            let sent = record(&body, id);
            s.edits.push(sent.clone());
            ok(message_json(&sent))
        }
        "sendchataction" => {
            let chat = body["chat_id"].as_i64().unwrap_or(0);
            let action = body["action"].as_str().unwrap_or("").to_string();
            state.lock().unwrap().actions.push((chat, action));
            ok(json!(true))
        }
        "getfile" => {
            let id = body["file_id"].as_str().unwrap_or("").to_string();
            match state.lock().unwrap().files.get(&id) {
                Some(bytes) => ok(json!({
                    "file_id": id, "file_unique_id": "u", "file_size": bytes.len(),
                    "file_path": format!("photos/{id}.bin"),
                })),
                None => error(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: invalid file_id",
                    None,
                ),
            }
        }
        "answercallbackquery" => {
            let id = body["callback_query_id"].as_str().unwrap_or("").to_string();
            let text = body["text"].as_str().unwrap_or("").to_string();
            state.lock().unwrap().callback_answers.push((id, text));
            ok(json!(true))
        }
        other => error(
            StatusCode::NOT_FOUND,
            &format!("Not Found: method {other}"),
            None,
        ),
    }
}

/// `GET /file/bot<token>/photos/<id>.bin`: the bytes of file `<id>`.
async fn download(
    State((state, _)): State<Shared>,
    Path((_, path)): Path<(String, String)>,
) -> Result<Vec<u8>, StatusCode> {
    let id = path.trim_start_matches("photos/").trim_end_matches(".bin");
    let files = &state.lock().unwrap().files;
    files.get(id).cloned().ok_or(StatusCode::NOT_FOUND)
}

fn record(body: &Value, message_id: i64) -> Sent {
    Sent {
        chat: body["chat_id"].as_i64().unwrap_or(0),
        message_id,
        text: body["text"].as_str().unwrap_or("").to_string(),
        parse_mode: body["parse_mode"].as_str().map(str::to_string),
        reply_to: body["reply_parameters"]["message_id"].as_i64(),
        reply_markup: body.get("reply_markup").cloned(),
    }
}

fn message_json(sent: &Sent) -> Value {
    json!({
        "message_id": sent.message_id,
        "date": 1_700_000_000,
        "chat": chat_json(sent.chat),
        "from": bot_user(),
        "text": strip_tags(&sent.text),
    })
}

/// The text without tags (what Telegram would return as `text`).
pub fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// Long polling: updates with `update_id >= offset` (older ones are
/// confirmed and forgotten), waiting up to `timeout` seconds for one.
async fn get_updates(state: &Arc<Mutex<Recorded>>, arrived: &Notify, body: &Value) -> Response {
    let offset = body["offset"].as_i64().unwrap_or(0);
    let timeout = Duration::from_secs(body["timeout"].as_u64().unwrap_or(0));
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let notified = arrived.notified();
        {
            let mut s = state.lock().unwrap();
            s.updates
                .retain(|u| u["update_id"].as_i64().unwrap_or(0) >= offset);
            if !s.updates.is_empty() {
                return ok(Value::Array(s.updates.clone()));
            }
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            return ok(json!([]));
        }
    }
}
