//! The Discord bridge: a serenity bot running beside the TUI (or in
//! `egirl serve`). Each channel or DM is a session (`discord-<channel>`,
//! origin `discord:<channel>`) of the agent `[[bindings]]` pick for the
//! message (guild, channel, user); its events reach every surface through the
//! bus, so the TUI mirrors Discord without knowing about it.
//!
//! Three parts: [`handler`] turns gateway events into ops, [`deliver`]
//! turns the bus's events for Discord sessions into messages, and the
//! supervisor here keeps a client running, with backoff after fatal errors
//! (serenity itself resumes or re-identifies after a dropped socket).

mod approvals;
pub mod chunk;
mod deliver;
pub mod filter;
mod handler;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serenity::all::{ChannelId, ClientBuilder, GatewayIntents, Http, HttpBuilder, MessageId};
use serenity::http::Typing;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::agent::AgentHandle;
use crate::config::DiscordConfig;
use crate::protocol::{BotStatus, SessionId};
use crate::surfaces::routing::{ApprovalAgents, Routing, TurnKey};

pub struct DiscordOptions {
    pub config: DiscordConfig,
    pub token: SecretString,
    /// Someone may answer approvals at a TUI. Without one (`egirl serve`),
    /// an exec no rule allows is denied unless `approve_in_discord`.
    pub attended: bool,
    /// How long "connecting" may last before the status says the gateway
    /// cannot be reached (serenity keeps retrying behind it).
    pub connect_grace: Duration,
    /// Which agent each message goes to (`[[bindings]]`, channel `discord`).
    pub routing: Routing,
}

/// See [`DiscordOptions::connect_grace`].
pub const CONNECT_GRACE: Duration = Duration::from_secs(15);

impl DiscordOptions {
    pub fn new(config: DiscordConfig, token: SecretString, attended: bool) -> Self {
        Self {
            config,
            token,
            attended,
            connect_grace: CONNECT_GRACE,
            routing: Routing::default(),
        }
    }
}

/// The running bridge: its status for the UI, and a way to stop it.
pub struct Discord {
    pub status: watch::Receiver<BotStatus>,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Discord {
    /// Closes the gateway connection and waits (briefly) for the bridge to end.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.task).await;
    }
}

/// Starts the bot in the background. It never fails: a bad token or an
/// unreachable gateway shows in `status` and is retried.
pub fn spawn(agent: AgentHandle, options: DiscordOptions) -> Discord {
    let (status_tx, status) = watch::channel(BotStatus::Connecting);
    let stop = CancellationToken::new();
    // Subscribed before the bot starts, so no event of its sessions is missed.
    let events = agent.bus.subscribe();
    let bridge = Arc::new(Bridge {
        config: options.config,
        agent,
        routing: options.routing,
        approval_agents: ApprovalAgents::default(),
        attended: options.attended,
        status: status_tx,
        http: Mutex::new(None),
        bot_id: AtomicU64::new(0),
        bot_name: Mutex::new(String::new()),
        turns: Mutex::new(HashMap::new()),
        approvals: approvals::Pending::default(),
        downloads: crate::surfaces::attachments::client(),
    });
    let task = tokio::spawn(supervise(
        bridge,
        options.token,
        options.connect_grace,
        events,
        stop.clone(),
    ));
    Discord { status, stop, task }
}

/// What the handler and the delivery task share.
struct Bridge {
    config: DiscordConfig,
    agent: AgentHandle,
    routing: Routing,
    /// Whose approval each prompt posted here is.
    approval_agents: ApprovalAgents,
    attended: bool,
    status: watch::Sender<BotStatus>,
    /// The current client's REST handle (replaced when the client is).
    http: Mutex<Option<Arc<Http>>>,
    bot_id: AtomicU64,
    bot_name: Mutex<String>,
    turns: Mutex<HashMap<TurnKey, Turn>>,
    approvals: approvals::Pending,
    /// Downloads the pictures users attach (see `surfaces::attachments`).
    downloads: reqwest::Client,
}

/// A Discord session's turns in flight.
#[derive(Default)]
struct Turn {
    /// The messages that started turns, oldest first: each answer replies
    /// to the next one.
    reply_to: std::collections::VecDeque<MessageId>,
    /// The message the running turn answers.
    answering: Option<MessageId>,
    /// Refreshed by serenity every 7 s until dropped.
    typing: Option<Typing>,
}

impl Bridge {
    fn http(&self) -> Option<Arc<Http>> {
        lock(&self.http).clone()
    }

    fn bot_id(&self) -> u64 {
        self.bot_id.load(Ordering::Relaxed)
    }

    fn set_status(&self, status: BotStatus) {
        self.status.send_if_modified(|current| {
            let changed = *current != status;
            *current = status;
            changed
        });
    }

    fn is_allowed_user(&self, id: u64) -> bool {
        let id = id.to_string();
        self.config.allowed_users.iter().any(|u| u.trim() == id)
    }

    fn start_typing(&self, key: TurnKey, channel: ChannelId) {
        let Some(http) = self.http() else { return };
        let mut turns = lock(&self.turns);
        let turn = turns.entry(key).or_default();
        if turn.typing.is_none() {
            turn.typing = Some(channel.start_typing(&http));
        }
    }
}

/// The session a channel's messages belong to.
pub fn session_for(channel: u64) -> SessionId {
    format!("discord-{channel}")
}

/// The channel a Discord session talks in (None for other sessions).
pub fn channel_of(session: &str) -> Option<ChannelId> {
    let id: u64 = session.strip_prefix("discord-")?.parse().ok()?;
    (id != 0).then(|| ChannelId::new(id))
}

fn intents() -> GatewayIntents {
    GatewayIntents::GUILD_MESSAGES
        | GatewayIntents::DIRECT_MESSAGES
        | GatewayIntents::MESSAGE_CONTENT
        | GatewayIntents::GUILD_MESSAGE_REACTIONS
        | GatewayIntents::DIRECT_MESSAGE_REACTIONS
}

fn build_http(token: &SecretString, proxy: Option<&str>) -> Http {
    let builder = HttpBuilder::new(token.expose_secret());
    match proxy {
        // A proxy (or the tests' fake) does the rate limiting, if any.
        Some(base) => builder
            .proxy(base.trim_end_matches('/'))
            .ratelimiter_disabled(true)
            .build(),
        None => builder.build(),
    }
}

/// After the n-th fatal error in a row: 5 s, 10 s, 20 s… up to 5 minutes.
fn backoff(failures: u32) -> Duration {
    let secs = 5u64.saturating_mul(1 << failures.saturating_sub(1).min(6));
    Duration::from_secs(secs.min(300))
}

async fn supervise(
    bridge: Arc<Bridge>,
    token: SecretString,
    connect_grace: Duration,
    events: crate::bus::EventReceiver,
    stop: CancellationToken,
) {
    let delivery = tokio::spawn(deliver::run(bridge.clone(), events, stop.clone()));
    let mut failures = 0u32;
    loop {
        let http = build_http(&token, bridge.config.proxy.as_deref());
        let handler = handler::Handler::new(bridge.clone());
        let built = ClientBuilder::new_with_http(http, intents())
            .event_handler(handler)
            .await;
        let reason = match built {
            Err(e) => format!("cannot start the Discord client: {e}"),
            Ok(mut client) => {
                *lock(&bridge.http) = Some(client.http.clone());
                let shards = client.shard_manager.clone();
                let start = client.start();
                tokio::pin!(start);
                let grace = tokio::time::sleep(connect_grace);
                tokio::pin!(grace);
                let mut graced = false;
                loop {
                    tokio::select! {
                        result = &mut start => break match result {
                            Ok(()) => "the gateway session ended".to_string(),
                            Err(e) => describe(&e),
                        },
                        _ = &mut grace, if !graced => {
                            graced = true;
                            if *bridge.status.borrow() == BotStatus::Connecting {
                                tracing::warn!("discord: no gateway connection after {}s; still trying", connect_grace.as_secs());
                                bridge.set_status(BotStatus::Reconnecting(
                                    "cannot reach the Discord gateway; retrying".into(),
                                ));
                            }
                        }
                        _ = stop.cancelled() => {
                            // Last answers out first (REST), then the gateway.
                            let _ = delivery.await;
                            shards.shutdown_all().await;
                            bridge.set_status(BotStatus::Off);
                            return;
                        }
                    }
                }
            }
        };
        failures += 1;
        let wait = backoff(failures);
        tracing::warn!("discord: {reason}; retrying in {}s", wait.as_secs());
        bridge.set_status(BotStatus::Stopped(format!(
            "{reason}; retrying in {}s",
            wait.as_secs()
        )));
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = stop.cancelled() => break,
        }
        bridge.set_status(BotStatus::Connecting);
    }
    bridge.set_status(BotStatus::Off);
    let _ = delivery.await;
}

/// One line for the status bar and the log.
fn describe(error: &serenity::Error) -> String {
    use serenity::gateway::GatewayError;
    match error {
        serenity::Error::Gateway(GatewayError::InvalidAuthentication) => {
            "Discord rejected the token (DISCORD_TOKEN)".into()
        }
        serenity::Error::Gateway(GatewayError::DisallowedGatewayIntents) => {
            "the bot lacks the Message Content intent (enable it in the developer portal)".into()
        }
        other => format!("Discord connection failed: {other}"),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_map_to_channels_and_back() {
        assert_eq!(session_for(123), "discord-123");
        assert_eq!(channel_of("discord-123"), Some(ChannelId::new(123)));
        assert_eq!(channel_of("discord-0"), None);
        assert_eq!(channel_of("tui-20260101-000000-abcdef"), None);
        assert_eq!(channel_of("discord-general"), None);
    }

    #[test]
    fn backoff_grows_and_caps() {
        assert_eq!(backoff(1), Duration::from_secs(5));
        assert_eq!(backoff(2), Duration::from_secs(10));
        assert_eq!(backoff(4), Duration::from_secs(40));
        assert_eq!(backoff(30), Duration::from_secs(300));
    }
}
