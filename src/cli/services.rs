//! The background services of a workspace: Discord, Telegram, heartbeat, cron and
//! the webhook. One egirl process runs them, the one holding the lock
//! `.egirl/services.lock`; a second TUI on the same workspace works as a
//! chat but leaves them to the first (two bots or two schedulers would
//! answer twice and run every job twice).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Environment;
use crate::agent::AgentHandle;
use crate::config::{BindingChannel, BindingTarget};
use crate::cron::CronStore;
use crate::fsutil::lockfile::{self, FileLock};
use crate::surfaces::clock::SystemClock;
use crate::surfaces::cron::CronScheduler;
use crate::surfaces::discord::{self, Discord, DiscordOptions};
use crate::surfaces::heartbeat::Heartbeat;
use crate::surfaces::routing::Routing;
use crate::surfaces::telegram::{self, Telegram, TelegramOptions};
use crate::surfaces::webhook::{self, Webhook};

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
    let lock = take_lock(&env.workspace)?;
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
    start_schedulers(env, agent, &stop, &mut running, &mut tasks, notices);
    let routes = webhook_routes(env);
    let paths = routes.paths();
    let webhook = if paths.is_empty() {
        None
    } else {
        start_webhook(env, agent, routes, notices).await
    };
    if let Some(hook) = &webhook {
        running.push(format!(
            "webhook on http://{}{}",
            hook.addr,
            paths.join(", ")
        ));
    }
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

/// The workspace's services lock, noted with this process's id; Err
/// says who holds it instead.
fn take_lock(workspace: &Path) -> Result<FileLock, String> {
    let path = lock_path(workspace);
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
    Ok(lock)
}

/// Every agent's heartbeat and cron scheduler, each on its own workspace
/// and its own `[heartbeat]`/`[cron]` (the base config's under its
/// table), submitting as that agent. Without `[agents]` that is the one
/// workspace's, as before: no task more.
fn start_schedulers(
    env: &Environment,
    agent: &AgentHandle,
    stop: &CancellationToken,
    running: &mut Vec<String>,
    tasks: &mut Vec<JoinHandle<()>>,
    notices: &mut Vec<String>,
) {
    let named = env.config.has_agents();
    for name in env.config.agent_names() {
        let Some(config) = env.config.for_agent(&name) else {
            continue;
        };
        let (agent_name, workspace, label) = if named {
            let workspace = env.config.agent_workspace(&name);
            (Some(name.clone()), workspace, format!("{name}: "))
        } else {
            (None, env.workspace.clone(), String::new())
        };
        let heartbeat = Heartbeat {
            agent: agent.clone(),
            agent_name: agent_name.clone(),
            config: config.heartbeat.clone(),
            workspace: workspace.clone(),
            clock: Arc::new(SystemClock),
        }
        .spawn(stop.clone());
        if let Some(task) = heartbeat {
            running.push(format!(
                "{label}heartbeat every {} → {}",
                human(config.heartbeat.every.0),
                config.heartbeat.deliver
            ));
            tasks.push(task);
        }
        if config.cron.enabled {
            let store = CronStore::in_workspace(&workspace);
            let (task, jobs) = spawn_cron(agent, agent_name, store, &config, stop, notices);
            tasks.push(task);
            running.push(format!("{label}cron ({jobs} jobs)"));
        }
    }
}

/// The cron scheduler's task and how many jobs the store holds now (0,
/// with a notice, when it cannot be read).
fn spawn_cron(
    agent: &AgentHandle,
    agent_name: Option<String>,
    store: CronStore,
    config: &crate::config::Config,
    stop: &CancellationToken,
    notices: &mut Vec<String>,
) -> (JoinHandle<()>, usize) {
    let jobs = match store.load() {
        Ok(jobs) => jobs.len(),
        Err(e) => {
            notices.push(format!("cron: {e:#}"));
            0
        }
    };
    let task = CronScheduler {
        agent: agent.clone(),
        agent_name,
        store,
        config: config.cron.clone(),
        clock: Arc::new(SystemClock),
    }
    .spawn(stop.clone());
    (task, jobs)
}

/// The webhook listening on `[webhook] listen`; None, with a notice, when
/// it cannot bind.
async fn start_webhook(
    env: &Environment,
    agent: &AgentHandle,
    routes: webhook::Routes,
    notices: &mut Vec<String>,
) -> Option<Webhook> {
    let config = &env.config.webhook;
    let limits = webhook::Limits {
        header_timeout: config.header_timeout.0,
        body_timeout: config.body_timeout.0,
        max_connections: config.max_connections,
    };
    match webhook::start_routes(agent.clone(), &config.listen, routes, limits).await {
        Ok(hook) => Some(hook),
        Err(e) => {
            let notice = format!("{e:#}; the webhook is off");
            tracing::warn!("{notice}");
            notices.push(notice);
            None
        }
    }
}

/// Every agent whose webhook secret is set, and where `POST /api/webhook`
/// goes (a `webhook` binding's agent, when it has a secret).
fn webhook_routes(env: &Environment) -> webhook::Routes {
    let config = &env.config;
    let mut routes = webhook::Routes {
        named: config.has_agents(),
        ..webhook::Routes::default()
    };
    for name in config.agent_names() {
        let var = config.webhook_secret_env(&name);
        let secret = if var == crate::config::secrets::SECRET_VARS[4] {
            env.secrets.webhook_secret.clone()
        } else {
            std::env::var(&var)
                .ok()
                .filter(|v| !v.trim().is_empty())
                .map(|v| SecretString::from(v.trim().to_string()))
        };
        if let Some(secret) = secret {
            routes.secrets.insert(name, secret);
        } else {
            routes.unset.insert(name, var);
        }
    }
    let bound = config
        .bindings
        .iter()
        .any(|b| b.channel == BindingChannel::Webhook);
    if bound {
        let agent = config.bound_agent(BindingChannel::Webhook, &BindingTarget::default());
        routes.unnamed = routes
            .secrets
            .contains_key(agent)
            .then(|| agent.to_string());
    }
    routes
}

/// Starts the Discord bot when `[channels.discord] enabled`; without a
/// token it stays off and says so. `attended`: a TUI can answer approvals.
fn start_discord(
    env: &Environment,
    agent: &AgentHandle,
    attended: bool,
    notices: &mut Vec<String>,
) -> Option<Discord> {
    let config = &env.config.channels.discord;
    if !config.enabled {
        return None;
    }
    let token = bot_token(
        "discord",
        "DISCORD_TOKEN",
        env.secrets.discord_token.clone(),
        config.allowed_users.is_empty(),
        notices,
    )?;
    Some(discord::spawn(
        agent.clone(),
        DiscordOptions {
            routing: Routing::new(&env.config),
            ..DiscordOptions::new(config.clone(), token, attended)
        },
    ))
}

/// Starts the Telegram bot when `[channels.telegram] enabled`; without a
/// token it stays off and says so. `attended`: a TUI can answer approvals.
fn start_telegram(
    env: &Environment,
    agent: &AgentHandle,
    attended: bool,
    notices: &mut Vec<String>,
) -> Option<Telegram> {
    let config = &env.config.channels.telegram;
    if !config.enabled {
        return None;
    }
    let token = bot_token(
        "telegram",
        "TELEGRAM_BOT_TOKEN",
        env.secrets.telegram_bot_token.clone(),
        config.allowed_users.is_empty(),
        notices,
    )?;
    Some(telegram::spawn(
        agent.clone(),
        TelegramOptions {
            routing: Routing::new(&env.config),
            ..TelegramOptions::new(config.clone(), token, attended)
        },
    ))
}

/// An enabled bot's token; without one the bot stays off, with a notice,
/// and a bot that answers nobody gets a notice too.
fn bot_token<T>(
    channel: &str,
    var: &str,
    token: Option<T>,
    nobody_allowed: bool,
    notices: &mut Vec<String>,
) -> Option<T> {
    let Some(token) = token else {
        let notice =
            format!("[channels.{channel}] is enabled but {var} is not set; the bot is off");
        tracing::warn!("{notice}");
        notices.push(notice);
        return None;
    };
    if nobody_allowed {
        notices.push(format!(
            "[channels.{channel}] allowed_users is empty: the bot answers nobody"
        ));
    }
    Some(token)
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
