//! The command line (DESIGN.md §3) and start-up: config, secrets,
//! workspace, logs, then the agent core and a surface.

mod doctor;
pub mod export;
mod init;
pub mod mcp;
pub mod memory;
mod serve;
mod services;
pub mod skills;
pub mod stats;
mod timeline;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Parser, Subcommand};

use crate::agent::{self, AgentHandle};
use crate::channels::discord::{self, Discord, DiscordOptions};
use crate::channels::headless::{self, HeadlessOptions, Outcome};
use crate::channels::telegram::{self, Telegram, TelegramOptions};
use crate::channels::tui;
use crate::config::{self, Config, Redactor, Secrets};
use crate::print;
use crate::protocol::Op;
use crate::providers::remote::RemoteProviders;

/// Exit codes: 0 ok, 1 runtime failure, 2 bad usage or config.
pub const EXIT_OK: u8 = 0;
pub const EXIT_FAILURE: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

/// `egirl --version`: the build, and the `--json` wire version.
const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (--json events: protocol 1)");
// The number above is a literal for `concat!`: kept equal to the protocol's.
const _: () = assert!(crate::protocol::PROTOCOL_VERSION == 1);

#[derive(Debug, Parser)]
#[command(
    name = "egirl",
    version,
    long_version = LONG_VERSION,
    about = "A local-first personal AI agent"
)]
pub struct Cli {
    /// Config file (else $EGIRL_CONFIG, ./egirl.toml, ~/.egirl/egirl.toml).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Workspace directory (overrides [workspace] path).
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Run one turn headless and print the answer.
    #[arg(short = 'm', long = "message", value_name = "TEXT")]
    pub message: Option<String>,
    /// With -m: print every event as one JSON object per line (the wire
    /// version is in `egirl --version`).
    #[arg(long, requires = "message")]
    pub json: bool,
    /// Session to use or resume (default: a new one).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// With -m: approve every exec the model asks for.
    #[arg(long, requires = "message")]
    pub approve_exec: bool,
    /// With --session: copy the session into a new one and print its id.
    #[arg(long, requires = "session", conflicts_with_all = ["message", "rewind"])]
    pub fork: bool,
    /// With --session: go back to before the session's user message N
    /// (1-based), restoring the files write_file/edit_file changed since.
    #[arg(
        long,
        value_name = "N",
        requires = "session",
        conflicts_with = "message"
    )]
    pub rewind: Option<usize>,
    /// With --session: replace the session's older turns with a summary
    /// now and print the summary.
    #[arg(long, requires = "session", conflicts_with_all = ["message", "fork", "rewind"])]
    pub compact: bool,
    #[command(subcommand)]
    pub command: Option<CliCommand>,
}

#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// Write egirl.toml and the workspace templates (never overwriting).
    Init(init::InitArgs),
    /// Check config, workspace, endpoints and keys.
    Doctor,
    /// Usage and cost totals from `.egirl/usage.jsonl`.
    Stats(stats::StatsArgs),
    /// Sessions as fine-tuning JSONL (the Qwen3 format of the egirl spec).
    Export(export::ExportArgs),
    /// Run without a TUI: Discord, Telegram, heartbeat, cron and the webhook until
    /// SIGTERM or Ctrl+C.
    Serve,
    /// Skills: `egirl skills list [--json]`.
    Skills(skills::SkillsArgs),
    /// Search or re-index memory (MEMORY.md and the daily logs).
    Memory(memory::MemoryArgs),
    /// MCP servers: `egirl mcp list [--json]`.
    Mcp(mcp::McpArgs),
}

/// A failure with its exit code, printed as one line.
pub struct Exit {
    pub code: u8,
    pub message: String,
}

impl Exit {
    fn usage(message: impl std::fmt::Display) -> Self {
        Self {
            code: EXIT_USAGE,
            message: message.to_string(),
        }
    }
    fn failure(message: impl std::fmt::Display) -> Self {
        Self {
            code: EXIT_FAILURE,
            message: message.to_string(),
        }
    }
}

pub async fn run(cli: Cli) -> u8 {
    match dispatch(cli).await {
        Ok(code) => code,
        Err(exit) => {
            print::err(format_args!("egirl: {}", exit.message));
            exit.code
        }
    }
}

async fn dispatch(cli: Cli) -> Result<u8, Exit> {
    if let Some(CliCommand::Init(args)) = &cli.command {
        return init::run(args).map_err(|e| Exit::failure(format!("{e:#}")));
    }
    let env = Environment::load(&cli)?;
    match &cli.command {
        Some(CliCommand::Doctor) => return Ok(doctor::run(&env).await),
        Some(CliCommand::Stats(args)) => {
            stats::run(&env.workspace, args).map_err(|e| Exit::failure(format!("{e:#}")))?;
            return Ok(EXIT_OK);
        }
        Some(CliCommand::Skills(args)) => {
            skills::run(&env.config.skills, &env.workspace, args)
                .map_err(|e| Exit::failure(format!("{e:#}")))?;
            return Ok(EXIT_OK);
        }
        Some(CliCommand::Export(args)) => {
            export::run(&env.workspace, args, &env.redactor)
                .map_err(|e| Exit::failure(format!("{e:#}")))?;
            return Ok(EXIT_OK);
        }
        Some(CliCommand::Memory(args)) => return memory::run(&env, args).await,
        Some(CliCommand::Mcp(args)) => {
            mcp::run(&env, args)
                .await
                .map_err(|e| Exit::failure(format!("{e:#}")))?;
            return Ok(EXIT_OK);
        }
        _ => {}
    }
    if let Some(id) = cli.session.as_deref().filter(|_| cli.fork) {
        return timeline::fork(&env, id);
    }
    if let (Some(id), Some(turn)) = (cli.session.as_deref(), cli.rewind) {
        return timeline::rewind(&env, id, turn);
    }
    let log_dir = config::expand_home(&env.config.log.dir);
    let serving = matches!(cli.command, Some(CliCommand::Serve));
    let _log_guard = crate::logging::init(&log_dir, &env.config.log.level, &env.redactor, serving)
        .map_err(|e| Exit::failure(format!("{e:#}")))?;
    tracing::info!(config = ?env.config_path, workspace = %env.workspace.display(), "starting");

    let session = match &cli.session {
        Some(id) => {
            crate::sessions::validate_id(id).map_err(Exit::usage)?;
            id.clone()
        }
        None => crate::sessions::new_id(if cli.message.is_some() { "cli" } else { "tui" }),
    };
    if cli.compact && !crate::sessions::Transcript::path(&env.workspace, &session).exists() {
        return Err(Exit::usage(format!(
            "no session `{session}` to compact in {}",
            env.workspace.join("sessions").display()
        )));
    }
    let slot_dir = crate::providers::managed::slot_dir(&env.workspace);
    let managed =
        crate::providers::managed::ensure_running(&env.config.local, &log_dir, &slot_dir, |line| {
            print::err(format_args!("egirl: {line}"))
        })
        .await
        .map_err(|e| Exit::failure(format!("{e:#}")))?;
    // `[local.fast.server]`: the fast model's own llama-server, likewise.
    let fast_managed = match env.config.local.fast_role() {
        Some(fast) => crate::providers::managed::ensure_running(
            &fast,
            &log_dir.join("fast"),
            &slot_dir.join("fast"),
            |line| print::err(format_args!("egirl: [local.fast] {line}")),
        )
        .await
        .map_err(|e| Exit::failure(format!("[local.fast] {e:#}")))?,
        None => None,
    };
    let (agent, core, notices) = env.start_agent();
    let code = match cli.message {
        None if cli.compact => match headless::compact(&agent, &session).await {
            Outcome::Answered => EXIT_OK,
            Outcome::Failed | Outcome::Interrupted => EXIT_FAILURE,
        },
        Some(text) => {
            let opts = HeadlessOptions {
                session,
                json: cli.json,
                approve_exec: cli.approve_exec,
            };
            if !cli.json {
                for notice in &notices {
                    print::err(format_args!("egirl: {notice}"));
                }
            }
            match headless::run_once(&agent, text, &opts).await {
                Outcome::Answered => EXIT_OK,
                Outcome::Failed | Outcome::Interrupted => EXIT_FAILURE,
            }
        }
        None if matches!(cli.command, Some(CliCommand::Serve)) => {
            let mut notices = notices;
            match services::start(&env, &agent, false, &mut notices).await {
                Ok(services) => serve::run(notices, services, &agent).await,
                Err(why) => {
                    print::err(format_args!("egirl: {why}"));
                    EXIT_FAILURE
                }
            }
        }
        None => {
            let mut notices = notices;
            let services = match services::start(&env, &agent, true, &mut notices).await {
                Ok(services) => Some(services),
                Err(why) => {
                    tracing::info!("{why}");
                    notices.push(why);
                    None
                }
            };
            let options = tui::TuiOptions {
                session,
                theme: env.config.ui.theme.clone(),
                workspace: env.workspace.clone(),
                model: env.config.local.model.clone(),
                endpoint: env.config.local.endpoint_list()[0].clone(),
                endpoints: env.config.local.endpoints.clone(),
                context_length: env.config.local.context_length,
                notices,
                discord: services
                    .as_ref()
                    .and_then(|s| s.discord.as_ref())
                    .map(|d| d.status.clone()),
                telegram: services
                    .as_ref()
                    .and_then(|s| s.telegram.as_ref())
                    .map(|t| t.status.clone()),
            };
            let code = tui::run(&agent, options).await;
            if let Some(mut services) = services {
                // Quitting must not cut an answer a Telegram chat waits
                // for: no new messages, then a moment for the turn.
                if services.bot_answering() {
                    services.stop_intake().await;
                    print::err("egirl: letting the answer in flight reach Telegram");
                    let grace = std::time::Duration::from_secs(10);
                    let _ = tokio::time::timeout(grace, agent.idle()).await;
                }
                services.stop().await;
            }
            code
        }
    };
    shutdown(agent, core).await;
    if let Some(server) = managed {
        server.stop().await;
    }
    if let Some(server) = fast_managed {
        server.stop().await;
    }
    Ok(code)
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
        DiscordOptions::new(config.clone(), token, attended),
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
        TelegramOptions::new(config.clone(), token, attended),
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

async fn shutdown(agent: AgentHandle, core: tokio::task::JoinHandle<()>) {
    agent.submit(Op::Shutdown);
    // Long enough for the core to save sessions' KV caches (slots) of a big model.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(30), core).await;
}

/// Everything start-up resolved: config, secrets, the workspace.
pub struct Environment {
    pub config: Config,
    pub config_path: Option<PathBuf>,
    pub secrets: Secrets,
    pub workspace: PathBuf,
    pub allowed_paths: Vec<PathBuf>,
    /// The `.env` files read at start-up (protected from the model).
    pub env_files: Vec<PathBuf>,
    /// The secret values found at start-up, redacted wherever they show.
    pub redactor: Arc<Redactor>,
}

impl Environment {
    pub fn load(cli: &Cli) -> Result<Self, Exit> {
        let loaded = config::load(cli.config.as_deref()).map_err(Exit::usage)?;
        let env_files = load_dotenv(loaded.path.as_deref());
        let mut config = loaded.config;
        // Bad routing rules are a config error like any other (exit 2).
        if let Err(e) = crate::routing::Router::new(&config.routing) {
            let file = loaded
                .path
                .as_deref()
                .map_or("built-in defaults".into(), |p| p.display().to_string());
            return Err(Exit::usage(format!("{file}: [routing]: {e}")));
        }
        if let Err(e) =
            crate::scheduler::heartbeat::ActiveHours::parse(&config.heartbeat.active_hours)
        {
            let file = loaded
                .path
                .as_deref()
                .map_or("built-in defaults".into(), |p| p.display().to_string());
            return Err(Exit::usage(format!("{file}: [heartbeat]: {e}")));
        }
        if let Err(e) = crate::mcp::config::validate(&config.mcp) {
            let file = loaded
                .path
                .as_deref()
                .map_or("built-in defaults".into(), |p| p.display().to_string());
            return Err(Exit::usage(format!("{file}: {e}")));
        }
        if let Some(ws) = &cli.workspace {
            config.workspace.path = ws.display().to_string();
        }
        let (workspace, created) =
            crate::workspace::ensure(&config::expand_home(&config.workspace.path))
                .map_err(|e| Exit::failure(format!("{e:#}")))?;
        if !created.is_empty() {
            print::err(format_args!(
                "egirl: created workspace {} ({})",
                workspace.display(),
                created.join(", ")
            ));
        }
        let mut allowed_paths = Vec::new();
        for p in &config.tools.allowed_paths {
            let path = config::expand_home(p);
            match path.canonicalize() {
                Ok(c) => allowed_paths.push(c),
                Err(e) => print::err(format_args!(
                    "egirl: ignoring [tools] allowed_paths entry {}: {e}",
                    path.display()
                )),
            }
        }
        let redactor = Arc::new(Redactor::from_environment(&env_files));
        Ok(Self {
            redactor,
            config,
            config_path: loaded.path,
            secrets: Secrets::from_env(),
            workspace,
            allowed_paths,
            env_files,
        })
    }

    /// Starts the core with the remote providers whose keys are set; the
    /// notices say which configured ones were left out and why.
    pub fn start_agent(&self) -> (AgentHandle, tokio::task::JoinHandle<()>, Vec<String>) {
        let remote = RemoteProviders::from_config(&self.config.remote, &self.secrets);
        let notices = remote.notices.clone();
        for notice in &notices {
            tracing::warn!("{notice}");
        }
        let protected = self.protected_paths();
        let (agent, core) = agent::spawn_guarded(
            self.config.clone(),
            self.workspace.clone(),
            self.allowed_paths.clone(),
            remote,
            protected,
            self.redactor.clone(),
        );
        let mut notices = notices;
        // What the kernel lacks for the exec sandbox, said once at start.
        if let Some(notice) = crate::tools::sandbox::notice(&self.config.tools.exec) {
            tracing::warn!("{notice}");
            notices.push(notice);
        }
        let broken = agent.skills.snapshot().broken.len();
        if broken > 0 {
            notices.push(format!(
                "{broken} skill file(s) could not be loaded; /skills or `egirl skills list` says why"
            ));
        }
        (agent, core, notices)
    }
}

impl Environment {
    /// What the model may never change or read: what start-up read and
    /// would read (see `tools::sandbox::protected`).
    pub fn protected_paths(&self) -> crate::tools::sandbox::ProtectedPaths {
        crate::tools::sandbox::ProtectedPaths::new(
            &self.workspace,
            self.config_path.as_deref(),
            &self.env_files,
        )
        .with_start_up_files(
            config::config_candidates()
                .into_iter()
                .chain(dotenv_candidates(self.config_path.as_deref())),
        )
    }
}

/// `.env` next to the config file, then in the working directory, then
/// `~/.egirl/.env`; variables already set win. Returns the files read.
fn load_dotenv(config_path: Option<&Path>) -> Vec<PathBuf> {
    let mut read = Vec::new();
    for path in dotenv_candidates(config_path) {
        if !path.is_file() {
            continue;
        }
        match dotenvy::from_path(&path) {
            Ok(()) => read.push(path),
            Err(e) => print::err(format_args!("egirl: ignoring {}: {e}", path.display())),
        }
    }
    read
}

/// The `.env` files [`load_dotenv`] tries, in order, existing or not.
fn dotenv_candidates(config_path: Option<&Path>) -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(dir) = config_path.and_then(Path::parent) {
        candidates.push(dir.join(".env"));
    }
    candidates.push(PathBuf::from(".env"));
    candidates.push(config::expand_home("~/.egirl/.env"));
    candidates
}
