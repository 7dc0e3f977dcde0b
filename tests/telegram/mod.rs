//! The Telegram bridge against a fake Bot API server (getUpdates long
//! polling, sendMessage, editMessageText, sendChatAction,
//! answerCallbackQuery) with the agent core and the fake llama-server
//! behind it.

mod approvals;
mod bridge;
mod resilience;
mod serve;

use std::time::Duration;

use egirl::agent::{self, AgentHandle};
use egirl::bus::EventReceiver;
use egirl::config::{Config, TelegramConfig};
use egirl::protocol::{BotStatus, Event, EventKind};
use egirl::providers::remote::RemoteProviders;
use egirl::surfaces::telegram::{self, Telegram, TelegramOptions};
use secrecy::SecretString;

use crate::agent::config_for;
use crate::support::fake_llama::FakeLlama;
use crate::support::fake_telegram::{FakeTelegram, OWNER_ID};

/// The owner's private chat (a private chat's id is the user's id) and a
/// group the config allows.
pub const DM: i64 = OWNER_ID as i64;
pub const GROUP: i64 = -1_001_234;

pub struct Rig {
    pub llama: FakeLlama,
    pub telegram: FakeTelegram,
    pub agent: AgentHandle,
    pub bot: Option<Telegram>,
    /// A TUI-side subscriber: every event of every session.
    pub events: EventReceiver,
    _dir: tempfile::TempDir,
}

pub fn telegram_config(fake: &FakeTelegram) -> TelegramConfig {
    TelegramConfig {
        enabled: true,
        allowed_users: vec![OWNER_ID.to_string()],
        allowed_chats: vec!["dm".into(), GROUP.to_string()],
        require_mention: true,
        api_url: fake.url(),
    }
}

pub struct Setup {
    pub attended: bool,
    pub token: &'static str,
    /// Wait for the bot to say it is ready.
    pub wait_ready: bool,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            attended: true,
            token: "900:fake-token-abcdef",
            wait_ready: true,
        }
    }
}

pub async fn start(setup: Setup, tweak_agent: impl FnOnce(&mut Config)) -> Rig {
    let llama = FakeLlama::start().await;
    let fake = FakeTelegram::start().await;
    let mut config = config_for(&llama);
    tweak_agent(&mut config);
    let dir = tempfile::tempdir().expect("temp dir");
    let (workspace, _) = egirl::workspace::ensure(&dir.path().join("ws")).expect("workspace");
    let (agent, _core) =
        agent::spawn_with(config, workspace, Vec::new(), RemoteProviders::default());
    let events = agent.bus.subscribe();
    let mut options = TelegramOptions::new(
        telegram_config(&fake),
        SecretString::from(setup.token.to_string()),
        setup.attended,
    );
    // Short polls: a test never waits long on an empty getUpdates.
    options.poll_timeout = Duration::from_secs(1);
    let bot = telegram::spawn(agent.clone(), options);
    if setup.wait_ready {
        let mut status = bot.status.clone();
        tokio::time::timeout(
            Duration::from_secs(10),
            status.wait_for(|s| matches!(s, BotStatus::Ready(_))),
        )
        .await
        .expect("ready within 10 s")
        .expect("status channel open");
    }
    Rig {
        llama,
        telegram: fake,
        agent,
        bot: Some(bot),
        events,
        _dir: dir,
    }
}

impl Rig {
    /// Events of `session` until its turn ends (other sessions' are skipped).
    pub async fn turn(&mut self, session: &str) -> Vec<Event> {
        let mut out = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(20), self.events.recv())
                .await
                .expect("an event within 20 s")
                .expect("bus open");
            if event.session != session {
                continue;
            }
            let ended = matches!(event.kind, EventKind::TurnEnded(_));
            out.push(event);
            if ended {
                return out;
            }
        }
    }
}

/// Gives a message the bot must ignore time to be (wrongly) answered:
/// more than one long poll.
pub async fn settle() {
    tokio::time::sleep(Duration::from_millis(1500)).await;
}
