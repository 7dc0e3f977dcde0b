//! The Telegram bridge: a teloxide Bot API client long-polling beside the
//! TUI (or in `egirl serve`); no public URL needed. Each chat is a session
//! (`telegram-<chat>`, origin `telegram:<chat>`) of the agent `[[bindings]]`
//! pick for the message (chat, user); its events reach every
//! surface through the bus, so the TUI mirrors Telegram without knowing
//! about it.
//!
//! Three parts: [`handler`] turns updates into ops (or approval answers),
//! [`deliver`] turns the bus's events for Telegram sessions into messages,
//! and the poller here keeps `getUpdates` going, retrying network errors
//! and 429s with backoff. A rejected token stops the poller with one
//! notice instead of retrying forever.

mod api;
mod approvals;
mod deliver;
pub mod filter;
mod handler;
pub mod html;
mod pictures;
pub mod split;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use teloxide::Bot;
use teloxide::payloads::GetUpdatesSetters;
use teloxide::requests::{Request, Requester};
use teloxide::types::{AllowedUpdate, MessageId};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::agent::AgentHandle;
use crate::config::TelegramConfig;
use crate::protocol::{BotStatus, SessionId};
use crate::surfaces::routing::{ApprovalAgents, Routing, TurnKey};

pub use api::UNAUTHORIZED;

pub struct TelegramOptions {
    pub config: TelegramConfig,
    pub token: SecretString,
    /// Someone may answer approvals at a TUI. Without one (`egirl serve`),
    /// a prompt that could not be posted is denied at once.
    pub attended: bool,
    /// `getUpdates`' long-poll timeout.
    pub poll_timeout: Duration,
    /// Which agent each message goes to (`[[bindings]]`, channel `telegram`).
    pub routing: Routing,
}

impl TelegramOptions {
    pub fn new(config: TelegramConfig, token: SecretString, attended: bool) -> Self {
        Self {
            config,
            token,
            attended,
            poll_timeout: Duration::from_secs(25),
            routing: Routing::default(),
        }
    }
}

/// The running bridge: its status for the UI, and a way to stop it.
pub struct Telegram {
    pub status: watch::Receiver<BotStatus>,
    /// None when the bot could not start (then nothing is in flight).
    bridge: Option<Arc<Bridge>>,
    intake: CancellationToken,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Telegram {
    /// Stops taking messages; answers in flight are still delivered.
    pub fn stop_intake(&self) {
        self.intake.cancel();
    }

    /// Whether a chat's message is being answered (or waits its turn):
    /// quitting the TUI now would cut an answer someone is waiting for.
    pub fn answering(&self) -> bool {
        self.bridge.as_ref().is_some_and(|bridge| {
            lock(&bridge.turns)
                .values()
                .any(|turn| turn.typing.is_some() || !turn.reply_to.is_empty())
        })
    }

    /// Delivers what the core already said, then ends the bridge.
    pub async fn stop(self) {
        self.intake.cancel();
        self.stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.task).await;
    }
}

/// Starts the bot in the background. It never fails: a bad URL, an
/// unreachable API or a rejected token shows in `status`.
pub fn spawn(agent: AgentHandle, options: TelegramOptions) -> Telegram {
    let (status_tx, status) = watch::channel(BotStatus::Connecting);
    let intake = CancellationToken::new();
    let stop = CancellationToken::new();
    // Subscribed before the bot starts, so no event of its sessions is missed.
    let events = agent.bus.subscribe();
    let bot = build_bot(&options.config, &options.token, options.poll_timeout);
    let (bridge, task) = match bot {
        Err(why) => {
            tracing::warn!("telegram: {why}");
            let _ = status_tx.send(BotStatus::Stopped(why));
            (None, tokio::spawn(async {}))
        }
        Ok(bot) => {
            let bridge = Arc::new(Bridge {
                config: options.config,
                agent,
                routing: options.routing,
                approval_agents: ApprovalAgents::default(),
                attended: options.attended,
                bot,
                token: options.token,
                status: status_tx,
                bot_username: Mutex::new(String::new()),
                turns: Mutex::new(HashMap::new()),
                approvals: approvals::Pending::default(),
                revoked: AtomicBool::new(false),
            });
            let delivery = tokio::spawn(deliver::run(bridge.clone(), events, stop.clone()));
            let poller = poll(bridge.clone(), options.poll_timeout, intake.clone());
            let task = tokio::spawn(async move {
                poller.await;
                let _ = delivery.await;
            });
            (Some(bridge), task)
        }
    };
    Telegram {
        status,
        bridge,
        intake,
        stop,
        task,
    }
}

/// The client's timeout covers a whole long poll (teloxide's default of
/// 17 s would cut every poll longer than that) plus time to answer.
fn build_bot(
    config: &TelegramConfig,
    token: &SecretString,
    poll_timeout: Duration,
) -> Result<Bot, String> {
    let url = reqwest::Url::parse(config.api_url.trim_end_matches('/'))
        .map_err(|e| format!("[channels.telegram] api_url: {e}"))?;
    let client = teloxide::net::default_reqwest_settings()
        .timeout(poll_timeout + Duration::from_secs(15))
        .build()
        .map_err(|e| format!("cannot start the Telegram client: {e}"))?;
    Ok(Bot::with_client(token.expose_secret(), client).set_api_url(url))
}

/// What the handler and the delivery task share.
struct Bridge {
    config: TelegramConfig,
    agent: AgentHandle,
    routing: Routing,
    /// Whose approval each prompt posted here is.
    approval_agents: ApprovalAgents,
    attended: bool,
    bot: Bot,
    token: SecretString,
    status: watch::Sender<BotStatus>,
    bot_username: Mutex<String>,
    turns: Mutex<HashMap<TurnKey, Turn>>,
    approvals: approvals::Pending,
    /// Telegram said 401: every call fails until the token is fixed.
    revoked: AtomicBool,
}

/// A Telegram session's turns in flight.
#[derive(Default)]
struct Turn {
    /// The messages that started turns, oldest first: each answer replies
    /// to the next one.
    reply_to: VecDeque<MessageId>,
    /// The message the running turn answers.
    answering: Option<MessageId>,
    /// Stops the typing loop when dropped.
    typing: Option<DropGuard>,
}

impl Bridge {
    fn set_status(&self, status: BotStatus) {
        self.status.send_if_modified(|current| {
            let changed = *current != status;
            *current = status;
            changed
        });
    }

    /// Shows "typing…" in `chat` until the session's turn ends (Telegram
    /// clears it after 5 s, so it is sent again every 4 s).
    fn start_typing(&self, key: TurnKey, chat: i64) {
        let mut turns = lock(&self.turns);
        let turn = turns.entry(key).or_default();
        if turn.typing.is_some() {
            return;
        }
        let cancel = CancellationToken::new();
        turn.typing = Some(cancel.clone().drop_guard());
        let bot = self.bot.clone();
        tokio::spawn(async move {
            loop {
                let action = bot.send_chat_action(
                    teloxide::types::ChatId(chat),
                    teloxide::types::ChatAction::Typing,
                );
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    sent = action.send() => {
                        if let Err(e) = sent {
                            tracing::debug!("telegram: typing in {chat}: {e}");
                        }
                    }
                }
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tokio::time::sleep(Duration::from_secs(4)) => {}
                }
            }
        });
    }

    /// The one notice for a rejected token (later failures stay quiet).
    fn token_rejected(&self) {
        if !self.revoked.swap(true, Ordering::Relaxed) {
            tracing::warn!("telegram: {UNAUTHORIZED}; the bot is off until it is fixed");
        }
        self.set_status(BotStatus::Stopped(UNAUTHORIZED.to_string()));
    }
}

/// `egirl doctor`: the token checked with one `getMe`; Ok(the bot's name).
pub async fn check_token(config: &TelegramConfig, token: &SecretString) -> Result<String, String> {
    let bot = build_bot(config, token, Duration::ZERO)?;
    match tokio::time::timeout(Duration::from_secs(15), bot.get_me().send()).await {
        Err(_) => Err("no answer from the Bot API within 15 s".into()),
        Ok(Ok(me)) => Ok(me.user.username.unwrap_or(me.user.first_name)),
        Ok(Err(teloxide::RequestError::Api(teloxide::ApiError::InvalidToken))) => {
            Err(UNAUTHORIZED.into())
        }
        Ok(Err(e)) => Err(api::describe(&e, token)),
    }
}

/// The session a chat's messages belong to.
pub fn session_for(chat: i64) -> SessionId {
    format!("telegram-{chat}")
}

/// The chat a Telegram session talks in (None for other sessions).
pub fn chat_of(session: &str) -> Option<i64> {
    let id: i64 = session.strip_prefix("telegram-")?.parse().ok()?;
    (id != 0).then_some(id)
}

/// `getMe`, then `getUpdates` until `intake` is cancelled or Telegram
/// rejects the token.
async fn poll(bridge: Arc<Bridge>, timeout: Duration, intake: CancellationToken) {
    let mut failures = 0u32;
    loop {
        let me = tokio::select! {
            me = bridge.bot.get_me().send() => me,
            _ = intake.cancelled() => return,
        };
        match me {
            Ok(me) => {
                let name = me.user.username.clone().unwrap_or(me.user.first_name);
                tracing::info!("telegram: ready as @{name}");
                *lock(&bridge.bot_username) = name.clone();
                bridge.set_status(BotStatus::Ready(name));
                break;
            }
            Err(e) => {
                failures += 1;
                if !wait_after(&bridge, &e, failures, &intake).await {
                    return;
                }
            }
        }
    }
    let mut offset = 0i32;
    failures = 0;
    loop {
        let request = bridge
            .bot
            .get_updates()
            .offset(offset)
            .timeout(timeout.as_secs() as u32)
            .allowed_updates([AllowedUpdate::Message, AllowedUpdate::CallbackQuery]);
        let updates = tokio::select! {
            updates = request.send() => updates,
            _ = intake.cancelled() => return,
        };
        match updates {
            Ok(updates) => {
                if failures > 0 {
                    tracing::info!("telegram: polling again");
                    let name = lock(&bridge.bot_username).clone();
                    bridge.set_status(BotStatus::Ready(name));
                }
                failures = 0;
                for update in updates {
                    offset = offset.max(update.id.0 as i32 + 1);
                    handler::handle(&bridge, update).await;
                }
            }
            Err(e) => {
                failures += 1;
                if !wait_after(&bridge, &e, failures, &intake).await {
                    return;
                }
            }
        }
    }
}

/// After a failed poll: says so and waits as the error asks. False when
/// polling must end (token rejected, or stopped meanwhile).
async fn wait_after(
    bridge: &Bridge,
    error: &teloxide::RequestError,
    failures: u32,
    intake: &CancellationToken,
) -> bool {
    let why = api::describe(error, &bridge.token);
    let wait = match api::next(error, failures, &bridge.token) {
        api::Next::Fail(api::Failure::Unauthorized) => {
            bridge.token_rejected();
            return false;
        }
        api::Next::Retry(wait) => wait,
        api::Next::Fail(_) => api::backoff(failures, Duration::from_secs(60)),
    };
    tracing::warn!("telegram: {why}; retrying in {:.1}s", wait.as_secs_f32());
    bridge.set_status(BotStatus::Reconnecting(format!("{why}; retrying")));
    tokio::select! {
        _ = tokio::time::sleep(wait) => true,
        _ = intake.cancelled() => false,
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_map_to_chats_and_back() {
        assert_eq!(session_for(123), "telegram-123");
        assert_eq!(session_for(-100123), "telegram--100123");
        assert_eq!(chat_of("telegram-123"), Some(123));
        assert_eq!(chat_of("telegram--100123"), Some(-100123));
        assert_eq!(chat_of("telegram-0"), None);
        assert_eq!(chat_of("discord-123"), None);
        assert_eq!(chat_of("telegram-general"), None);
    }
}
