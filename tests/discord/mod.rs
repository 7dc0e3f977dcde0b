//! The Discord bridge against the fake Discord (REST + gateway) with the
//! agent core and the fake llama-server behind it.

mod approvals;
mod bridge;
mod serve;

use std::time::Duration;

use egirl::agent::{self, AgentHandle};
use egirl::bus::EventReceiver;
use egirl::config::{Config, DiscordConfig};
use egirl::protocol::{BotStatus, Event};
use egirl::providers::remote::RemoteProviders;
use egirl::surfaces::discord::{self, Discord, DiscordOptions};
use secrecy::SecretString;

use crate::agent::config_for;
use crate::support::fake_discord::{FakeDiscord, OWNER_ID};
use crate::support::fake_llama::FakeLlama;

/// A DM channel and a guild channel the config allows.
pub const DM: u64 = 5001;
pub const GUILD_CHANNEL: u64 = 6001;
pub const GUILD: u64 = 7001;

pub struct Rig {
    pub llama: FakeLlama,
    pub discord: FakeDiscord,
    pub agent: AgentHandle,
    pub bot: Option<Discord>,
    /// A TUI-side subscriber: every event of every session.
    pub events: EventReceiver,
    _dir: tempfile::TempDir,
}

pub fn discord_config(fake: &FakeDiscord) -> DiscordConfig {
    DiscordConfig {
        enabled: true,
        allowed_users: vec![OWNER_ID.to_string()],
        allowed_channels: vec!["dm".into(), GUILD_CHANNEL.to_string()],
        require_mention: true,
        proxy: Some(fake.proxy()),
        approve_in_discord: false,
    }
}

pub async fn start(
    attended: bool,
    tweak_agent: impl FnOnce(&mut Config),
    tweak_discord: impl FnOnce(&mut DiscordConfig),
) -> Rig {
    let llama = FakeLlama::start().await;
    let fake = FakeDiscord::start().await;
    let mut config = config_for(&llama);
    tweak_agent(&mut config);
    let dir = tempfile::tempdir().expect("temp dir");
    let (workspace, _) = egirl::workspace::ensure(&dir.path().join("ws")).expect("workspace");
    let (agent, _core) =
        agent::spawn_with(config, workspace, Vec::new(), RemoteProviders::default());
    let events = agent.bus.subscribe();
    let mut dc = discord_config(&fake);
    tweak_discord(&mut dc);
    let bot = discord::spawn(
        agent.clone(),
        DiscordOptions::new(dc, SecretString::from("fake-token".to_string()), attended),
    );
    fake.wait_sessions(1).await;
    let mut status = bot.status.clone();
    tokio::time::timeout(
        Duration::from_secs(10),
        status.wait_for(|s| matches!(s, BotStatus::Ready(_))),
    )
    .await
    .expect("ready within 10 s")
    .expect("status channel open");
    Rig {
        llama,
        discord: fake,
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
            let ended = matches!(event.kind, egirl::protocol::EventKind::TurnEnded(_));
            out.push(event);
            if ended {
                return out;
            }
        }
    }
}

/// Gives a message the bot must ignore time to be (wrongly) answered.
pub async fn settle() {
    tokio::time::sleep(Duration::from_millis(400)).await;
}
