//! The background services of a workspace: Discord, Telegram, heartbeat, cron and
//! the webhook. One egirl process runs them, the one holding the lock
//! `.egirl/services.lock`; a second TUI on the same workspace works as a
//! chat but leaves them to the first (two bots or two schedulers would
//! answer twice and run every job twice).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Environment, start_discord, start_telegram};
use crate::agent::AgentHandle;
use crate::channels::clock::SystemClock;
use crate::channels::cron::CronScheduler;
use crate::channels::discord::Discord;
use crate::channels::heartbeat::Heartbeat;
use crate::channels::telegram::Telegram;
use crate::channels::webhook::{self, Webhook};
use crate::cron::CronStore;
use crate::fsutil::lockfile::{self, FileLock};

pub struct Services {
    pub discord: Option<Discord>,
    pub webhook: Option<Webhook>,
    pub telegram: Option<Telegram>,
    /// One line per running service, for `egirl serve` to print.
    pub running: Vec<String>,
    stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    _lock: FileLock,
}

impl Services {
    /// Stops the schedulers and the webhook. The bot keeps delivering, so
    /// a turn still finishing reaches its channel.
    pub async fn stop_intake(&mut self) {
        self.stop.cancel();
        if let Some(bot) = &self.telegram {
            bot.stop_intake();
        }
        for task in self.tasks.drain(..) {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
        if let Some(hook) = self.webhook.take() {
            hook.stop().await;
        }
    }

    /// Whether a bot's chat waits for an answer now being worked on.
    pub fn bot_answering(&self) -> bool {
        self.telegram.as_ref().is_some_and(Telegram::answering)
    }

    /// Stops everything: the schedulers, the webhook and the bot.
    pub async fn stop(mut self) {
        self.stop_intake().await;
        if let Some(bot) = self.discord.take() {
            bot.stop().await;
        }
        if let Some(bot) = self.telegram.take() {
            bot.stop().await;
        }
    }
}

pub fn lock_path(workspace: &Path) -> std::path::PathBuf {
    workspace.join(".egirl").join("services.lock")
}

/// Takes the workspace's services lock and starts what the config enables;
/// Err says why they do not run here (another process holds the lock).
/// `attended`: a TUI is there to answer approvals.
pub async fn start(
    env: &Environment,
    agent: &AgentHandle,
    attended: bool,
    notices: &mut Vec<String>,
) -> Result<Services, String> {
    let path = lock_path(&env.workspace);
    let mut lock = match FileLock::try_acquire(&path) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            let holder = lockfile::read_note(&path);
            let holder = if holder.is_empty() {
                "another egirl process".to_string()
            } else {
                format!("another egirl process ({holder})")
            };
            return Err(format!(
                "Discord, Telegram, heartbeat, cron and the webhook for this workspace run in {holder}"
            ));
        }
        Err(e) => {
            return Err(format!(
                "{e:#}; Discord, Telegram, heartbeat, cron and the webhook are off"
            ));
        }
    };
    if let Err(e) = lock.write_note(&format!("pid {}", std::process::id())) {
        tracing::warn!("{e:#}");
    }
    let stop = CancellationToken::new();
    let mut running = Vec::new();
    let mut tasks = Vec::new();

    let discord = start_discord(env, agent, attended, notices);
    if discord.is_some() {
        running.push("discord".to_string());
    }
    let telegram = start_telegram(env, agent, attended, notices);
    if telegram.is_some() {
        running.push("telegram".to_string());
    }
    let config = &env.config;
    let heartbeat = Heartbeat {
        agent: agent.clone(),
        config: config.heartbeat.clone(),
        workspace: env.workspace.clone(),
        clock: Arc::new(SystemClock),
    }
    .spawn(stop.clone());
    if let Some(task) = heartbeat {
        running.push(format!(
            "heartbeat every {} → {}",
            human(config.heartbeat.every.0),
            config.heartbeat.deliver
        ));
        tasks.push(task);
    }
    if config.cron.enabled {
        let store = CronStore::in_workspace(&env.workspace);
        let jobs = match store.load() {
            Ok(jobs) => jobs.len(),
            Err(e) => {
                notices.push(format!("cron: {e:#}"));
                0
            }
        };
        tasks.push(
            CronScheduler {
                agent: agent.clone(),
                store,
                config: config.cron.clone(),
                clock: Arc::new(SystemClock),
            }
            .spawn(stop.clone()),
        );
        running.push(format!("cron ({jobs} jobs)"));
    }
    let webhook = match &env.secrets.webhook_secret {
        None => None,
        Some(secret) => {
            let limits = webhook::Limits {
                header_timeout: config.webhook.header_timeout.0,
                body_timeout: config.webhook.body_timeout.0,
                max_connections: config.webhook.max_connections,
            };
            match webhook::start_bounded(
                agent.clone(),
                &config.webhook.listen,
                secret.clone(),
                limits,
            )
            .await
            {
                Ok(hook) => {
                    running.push(format!(
                        "webhook on http://{}/api/webhook/default",
                        hook.addr
                    ));
                    Some(hook)
                }
                Err(e) => {
                    let notice = format!("{e:#}; the webhook is off");
                    tracing::warn!("{notice}");
                    notices.push(notice);
                    None
                }
            }
        }
    };
    Ok(Services {
        discord,
        webhook,
        telegram,
        running,
        stop,
        tasks,
        _lock: lock,
    })
}

/// "30m", "1h30m", "45s".
fn human(d: Duration) -> String {
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let mut out = String::new();
    for (n, unit) in [(h, "h"), (m, "m"), (s, "s")] {
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
    }
    if out.is_empty() { "0s".into() } else { out }
}
