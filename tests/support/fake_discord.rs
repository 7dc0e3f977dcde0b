//! A fake Discord: REST (axum) and gateway (tokio-tungstenite) on
//! 127.0.0.1, port 0. Serenity reaches the REST side through
//! `HttpBuilder::proxy` and the gateway through the URL `/gateway` returns.
//!
//! Gateway: HELLO, IDENTIFY → READY (with `application.flags`), RESUME →
//! RESUMED, HEARTBEAT → ACK, and dispatches the test injects
//! (MESSAGE_CREATE, MESSAGE_REACTION_ADD). REST: `/gateway`,
//! `/gateway/bot`, typing (204) and messages (a full Message object), all
//! recorded.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message as Ws;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

pub const BOT_ID: u64 = 900;
pub const BOT_NAME: &str = "egirl-test";
pub const OWNER_ID: u64 = 42;
/// IDENTIFY with this token is refused with close code 4004.
pub const BAD_TOKEN: &str = "bad-token-x9";

/// A message the bot sent through REST.
#[derive(Clone, Debug)]
pub struct Sent {
    pub channel: u64,
    pub id: u64,
    pub content: String,
    /// `message_reference.message_id`: the message it replies to.
    pub reply_to: Option<u64>,
}

/// A message a user sends to the bot.
#[derive(Clone, Debug)]
pub struct UserMessage {
    pub channel: u64,
    pub author: u64,
    pub author_is_bot: bool,
    /// None: a DM.
    pub guild: Option<u64>,
    pub mentions_bot: bool,
    pub content: String,
}

impl UserMessage {
    /// A DM from the owner.
    pub fn dm(channel: u64, content: &str) -> Self {
        Self {
            channel,
            author: OWNER_ID,
            author_is_bot: false,
            guild: None,
            mentions_bot: false,
            content: content.into(),
        }
    }
}

#[derive(Default)]
struct Recorded {
    sent: Vec<Sent>,
    typing: Vec<u64>,
    identifies: usize,
    resumes: usize,
    heartbeats: usize,
    /// Feeds the gateway connection that is open now.
    connection: Option<mpsc::UnboundedSender<Command>>,
    seq: u64,
    next_id: u64,
    /// Attachment files served at `/attachments/<name>` (the CDN's part).
    files: std::collections::HashMap<String, Vec<u8>>,
}

enum Command {
    Dispatch(&'static str, Value),
    Close,
}

pub struct FakeDiscord {
    rest: SocketAddr,
    gateway: SocketAddr,
    state: Arc<Mutex<Recorded>>,
}

impl FakeDiscord {
    pub async fn start() -> Self {
        let state = Arc::new(Mutex::new(Recorded {
            next_id: 10_000,
            ..Recorded::default()
        }));
        let ws_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let gateway = ws_listener.local_addr().unwrap();
        tokio::spawn(accept_gateway(ws_listener, state.clone(), gateway));

        let rest_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let rest = rest_listener.local_addr().unwrap();
        let app = Router::new()
            .route("/api/v10/gateway", get(gateway_url))
            .route("/api/v10/gateway/bot", get(gateway_url))
            .route("/api/v10/channels/{channel}/typing", post(typing))
            .route("/api/v10/channels/{channel}/messages", post(create_message))
            .route("/attachments/{name}", get(attachment))
            .with_state((state.clone(), gateway));
        tokio::spawn(async move {
            let _ = axum::serve(rest_listener, app).await;
        });
        Self {
            rest,
            gateway,
            state,
        }
    }

    /// `[channels.discord] proxy`.
    pub fn proxy(&self) -> String {
        format!("http://{}", self.rest)
    }

    pub fn identifies(&self) -> usize {
        self.state.lock().unwrap().identifies
    }

    pub fn resumes(&self) -> usize {
        self.state.lock().unwrap().resumes
    }

    pub fn sent(&self) -> Vec<Sent> {
        self.state.lock().unwrap().sent.clone()
    }

    pub fn typing(&self) -> Vec<u64> {
        self.state.lock().unwrap().typing.clone()
    }

    /// Waits until a gateway session is up (identified or resumed) `n` times in all.
    pub async fn wait_sessions(&self, n: usize) {
        wait_for(Duration::from_secs(20), || {
            let s = self.state.lock().unwrap();
            s.identifies + s.resumes >= n && s.connection.is_some()
        })
        .await
        .unwrap_or_else(|| panic!("no gateway session #{n} within 20 s"));
    }

    /// Waits until the bot has sent at least `n` messages in all.
    pub async fn wait_sent(&self, n: usize) -> Vec<Sent> {
        wait_for(Duration::from_secs(30), || self.sent().len() >= n)
            .await
            .unwrap_or_else(|| panic!("bot sent {:?}, wanted {n} messages", self.sent()));
        self.sent()
    }

    /// Dispatches MESSAGE_CREATE; returns the message id.
    pub fn send(&self, msg: UserMessage) -> u64 {
        let id = self.next_id();
        let author = user(msg.author, "owner", msg.author_is_bot);
        let mentions = if msg.mentions_bot {
            vec![user(BOT_ID, BOT_NAME, true)]
        } else {
            Vec::new()
        };
        let mut body = message_json(id, msg.channel, author, &msg.content, mentions, None);
        if let Some(guild) = msg.guild {
            body["guild_id"] = json!(guild.to_string());
        }
        self.command(Command::Dispatch("MESSAGE_CREATE", body));
        id
    }

    /// Dispatches MESSAGE_CREATE with one attachment, `bytes` served at
    /// its `url` (as Discord's CDN would); returns the message id.
    /// `declared_size` is what the attachment says (Discord's is true).
    pub fn send_with_attachment(
        &self,
        msg: UserMessage,
        name: &str,
        content_type: &str,
        bytes: Vec<u8>,
        declared_size: usize,
    ) -> u64 {
        let id = self.next_id();
        let author = user(msg.author, "owner", msg.author_is_bot);
        let mut body = message_json(id, msg.channel, author, &msg.content, Vec::new(), None);
        let url = format!("http://{}/attachments/{name}", self.rest);
        body["attachments"] = json!([{
            "id": (id + 1).to_string(), "filename": name, "size": declared_size,
            "url": url, "proxy_url": url, "content_type": content_type,
        }]);
        self.state
            .lock()
            .unwrap()
            .files
            .insert(name.to_string(), bytes);
        self.command(Command::Dispatch("MESSAGE_CREATE", body));
        id
    }

    /// Dispatches MESSAGE_REACTION_ADD by `user` on `message`.
    pub fn react(&self, channel: u64, message: u64, user_id: u64, emoji: &str) {
        let body = json!({
            "user_id": user_id.to_string(),
            "channel_id": channel.to_string(),
            "message_id": message.to_string(),
            "emoji": {"id": null, "name": emoji},
            "burst": false,
            "type": 0
        });
        self.command(Command::Dispatch("MESSAGE_REACTION_ADD", body));
    }

    /// Closes the open gateway socket (close code 4000: reconnect allowed).
    pub fn close_socket(&self) {
        self.command(Command::Close);
    }

    fn command(&self, command: Command) {
        let s = self.state.lock().unwrap();
        let conn = s.connection.as_ref().expect("no gateway connection");
        conn.send(command).expect("gateway connection gone");
    }

    fn next_id(&self) -> u64 {
        let mut s = self.state.lock().unwrap();
        s.next_id += 1;
        s.next_id
    }
}

async fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> Option<()> {
    let start = tokio::time::Instant::now();
    while !done() {
        if start.elapsed() > limit {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Some(())
}

fn user(id: u64, name: &str, bot: bool) -> Value {
    json!({
        "id": id.to_string(),
        "username": name,
        "discriminator": "0",
        "global_name": null,
        "avatar": null,
        "bot": bot
    })
}

fn message_json(
    id: u64,
    channel: u64,
    author: Value,
    content: &str,
    mentions: Vec<Value>,
    reference: Option<u64>,
) -> Value {
    json!({
        "id": id.to_string(),
        "channel_id": channel.to_string(),
        "author": author,
        "content": content,
        "timestamp": "2026-11-23T12:00:00.000000+00:00",
        "edited_timestamp": null,
        "tts": false,
        "mention_everyone": false,
        "mentions": mentions,
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": false,
        "type": if reference.is_some() { 19 } else { 0 },
        "flags": 0,
        "message_reference": reference.map(|m| json!({
            "message_id": m.to_string(),
            "channel_id": channel.to_string()
        }))
    })
}

type RestState = (Arc<Mutex<Recorded>>, SocketAddr);

async fn gateway_url(State((_, gateway)): State<RestState>) -> Json<Value> {
    Json(json!({
        "url": format!("ws://{gateway}"),
        "shards": 1,
        "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
    }))
}

async fn attachment(
    State((state, _)): State<RestState>,
    Path(name): Path<String>,
) -> Result<Vec<u8>, StatusCode> {
    let files = &state.lock().unwrap().files;
    files.get(&name).cloned().ok_or(StatusCode::NOT_FOUND)
}

async fn typing(State((state, _)): State<RestState>, Path(channel): Path<u64>) -> StatusCode {
    state.lock().unwrap().typing.push(channel);
    StatusCode::NO_CONTENT
}

async fn create_message(
    State((state, _)): State<RestState>,
    Path(channel): Path<u64>,
    Json(body): Json<Value>,
) -> Json<Value> {
    let content = body["content"].as_str().unwrap_or_default().to_string();
    let reply_to = body["message_reference"]["message_id"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .or_else(|| body["message_reference"]["message_id"].as_u64());
    let id = {
        let mut s = state.lock().unwrap();
        s.next_id += 1;
        let id = s.next_id;
        s.sent.push(Sent {
            channel,
            id,
            content: content.clone(),
            reply_to,
        });
        id
    };
    Json(message_json(
        id,
        channel,
        user(BOT_ID, BOT_NAME, true),
        &content,
        Vec::new(),
        reply_to,
    ))
}

async fn accept_gateway(listener: TcpListener, state: Arc<Mutex<Recorded>>, addr: SocketAddr) {
    while let Ok((stream, _)) = listener.accept().await {
        let state = state.clone();
        tokio::spawn(async move {
            if let Ok(ws) = tokio_tungstenite::accept_async(stream).await {
                serve_connection(ws, state, addr).await;
            }
        });
    }
}

async fn serve_connection(
    ws: tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>,
    state: Arc<Mutex<Recorded>>,
    addr: SocketAddr,
) {
    let (mut tx, mut rx) = ws.split();
    let (commands, mut inbox) = mpsc::unbounded_channel();
    let hello = json!({"op": 10, "d": {"heartbeat_interval": 45000}, "s": null, "t": null});
    if tx.send(Ws::Text(hello.to_string())).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            frame = rx.next() => {
                let Some(Ok(frame)) = frame else { break };
                let Ws::Text(text) = frame else { continue };
                let Ok(payload) = serde_json::from_str::<Value>(&text) else { continue };
                let reply = match payload["op"].as_u64() {
                    Some(1) => {
                        state.lock().unwrap().heartbeats += 1;
                        Some(json!({"op": 11, "d": null, "s": null, "t": null}))
                    }
                    Some(2) if payload["d"]["token"].as_str().is_some_and(|t| t.contains(BAD_TOKEN)) => {
                        let frame = CloseFrame { code: CloseCode::Library(4004), reason: "Authentication failed.".into() };
                        let _ = tx.send(Ws::Close(Some(frame))).await;
                        break;
                    }
                    Some(2) => {
                        let mut s = state.lock().unwrap();
                        s.identifies += 1;
                        s.seq += 1;
                        s.connection = Some(commands.clone());
                        Some(dispatch("READY", ready(addr), s.seq))
                    }
                    Some(6) => {
                        let mut s = state.lock().unwrap();
                        s.resumes += 1;
                        s.seq += 1;
                        s.connection = Some(commands.clone());
                        Some(dispatch("RESUMED", json!({}), s.seq))
                    }
                    _ => None,
                };
                if let Some(reply) = reply
                    && tx.send(Ws::Text(reply.to_string())).await.is_err()
                {
                    break;
                }
            }
            command = inbox.recv() => match command {
                Some(Command::Dispatch(name, body)) => {
                    let seq = {
                        let mut s = state.lock().unwrap();
                        s.seq += 1;
                        s.seq
                    };
                    if tx.send(Ws::Text(dispatch(name, body, seq).to_string())).await.is_err() {
                        break;
                    }
                }
                Some(Command::Close) | None => {
                    state.lock().unwrap().connection = None;
                    let frame = CloseFrame { code: CloseCode::Library(4000), reason: "test closes".into() };
                    let _ = tx.send(Ws::Close(Some(frame))).await;
                    break;
                }
            }
        }
    }
}

fn dispatch(name: &str, body: Value, seq: u64) -> Value {
    json!({"op": 0, "t": name, "s": seq, "d": body})
}

fn ready(addr: SocketAddr) -> Value {
    json!({
        "v": 10,
        "user": {
            "id": BOT_ID.to_string(),
            "username": BOT_NAME,
            "discriminator": "0",
            "global_name": null,
            "avatar": null,
            "bot": true,
            "verified": true,
            "mfa_enabled": false,
            "flags": 0
        },
        "guilds": [],
        "session_id": "fake-session",
        "resume_gateway_url": format!("ws://{addr}"),
        "shard": [0, 1],
        "application": {"id": BOT_ID.to_string(), "flags": 8_953_856}
    })
}
