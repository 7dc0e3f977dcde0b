//! The command line (docs/design.md §3, docs/cli.md) and start-up: config, secrets,
//! workspace, logs, then the agent core and a surface.

mod acp;
mod agents;
mod approvals;
mod args;
mod attach;
mod devices;
mod doctor;
mod environment;
pub mod export;
mod gateway;
mod init;
mod link;
pub mod mcp;
pub mod memory;
pub mod pair;
mod remote;
mod serve;
mod services;
pub mod skills;
mod startup;
pub mod stats;
mod timeline;
mod trust;

use std::path::Path;

pub use args::{Cli, CliCommand};
pub use environment::Environment;

use crate::agent::AgentHandle;
use crate::config;
use crate::print;
use crate::protocol::Op;
use crate::providers::managed::{self, ManagedServer};
use crate::surfaces::headless::{self, HeadlessOptions, Outcome};
use crate::surfaces::tui;

/// Exit codes: 0 ok, 1 runtime failure, 2 bad usage or config.
pub const EXIT_OK: u8 = 0;
pub const EXIT_FAILURE: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

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
    // Pairing and the devices live in the config dir: no workspace needed.
    if let Some(CliCommand::Pair(args)) = &cli.command {
        return pair::run(args)
            .map(|()| EXIT_OK)
            .map_err(|e| Exit::failure(format!("{e:#}")));
    }
    if let Some(CliCommand::Devices(args)) = &cli.command {
        return devices::run(args)
            .map(|()| EXIT_OK)
            .map_err(|e| Exit::failure(format!("{e:#}")));
    }
    // Trusting runs before the start-up files are checked: it is how an
    // untrusted one becomes trusted.
    if let Some(CliCommand::Trust(args)) = &cli.command {
        return trust::run(&cli, args);
    }
    let env = Environment::load(&cli)?;
    check_agent(&cli, &env.config)?;
    if let Some(result) = run_without_agent(cli.command.as_ref(), &env).await {
        return result;
    }
    if let Some(CliCommand::Attach(args)) = &cli.command {
        return attach::explicit(&env, args, cli.session.as_deref()).await;
    }
    // A daemon owns the workspace: one more window onto its core rather
    // than a second core.
    if cli.starts_tui()
        && let Some(socket) = attach::running_daemon(&env.workspace).await
    {
        return attach::run(&env, &socket, cli.session.as_deref()).await;
    }
    // A malformed id is bad usage (2), as for -m and attach; a session
    // that does not exist is a runtime failure (1).
    if let Some(id) = cli
        .session
        .as_deref()
        .filter(|_| cli.fork || cli.rewind.is_some())
    {
        crate::sessions::validate_id(id).map_err(Exit::usage)?;
    }
    if let Some(done) = remote::timeline(&cli, &env).await {
        return done;
    }
    if let Some(id) = cli.session.as_deref().filter(|_| cli.fork) {
        return timeline::fork(&env, id);
    }
    if let (Some(id), Some(turn)) = (cli.session.as_deref(), cli.rewind) {
        return timeline::rewind(&env, id, turn);
    }
    run_agent(cli, env).await
}

/// The subcommands that report or maintain the workspace without an
/// agent; None for the command line that starts one.
async fn run_without_agent(
    command: Option<&CliCommand>,
    env: &Environment,
) -> Option<Result<u8, Exit>> {
    let done = match command? {
        CliCommand::Doctor => return Some(Ok(doctor::run(env).await)),
        CliCommand::Memory(args) => return Some(memory::run(env, args).await),
        CliCommand::Stats(args) => stats::run(&env.config, &env.workspace, args),
        CliCommand::Skills(args) => skills::run(&env.config.skills, &env.workspace, args),
        CliCommand::Export(args) => export::run(&env.workspace, args, &env.redactor),
        CliCommand::Mcp(args) => mcp::run(env, args).await,
        CliCommand::Approvals(args) => approvals::run(&env.workspace, &env.config, args),
        CliCommand::Agents(args) => agents::run(&env.config, args),
        CliCommand::Init(_)
        | CliCommand::Trust(_)
        | CliCommand::Pair(_)
        | CliCommand::Devices(_)
        | CliCommand::Serve
        | CliCommand::Acp
        | CliCommand::Attach(_) => return None,
    };
    Some(
        done.map(|()| EXIT_OK)
            .map_err(|e| Exit::failure(format!("{e:#}"))),
    )
}

/// Starts logging, the managed model servers and the agent core, runs
/// the surface the command line asks for (one message, a compaction,
/// `serve` or the TUI), then stops them all.
async fn run_agent(cli: Cli, env: Environment) -> Result<u8, Exit> {
    warm_up();
    let log_dir = config::expand_home(&env.config.log.dir);
    let serving = matches!(cli.command, Some(CliCommand::Serve));
    let _log_guard = crate::logging::init(&log_dir, &env.config.log.level, &env.redactor, serving)
        .map_err(|e| Exit::failure(format!("{e:#}")))?;
    let session = session_id(&cli, &env)?;
    // A daemon owns the workspace: the headless run goes through its core.
    if let Some(code) = remote::headless(&cli, &env, &session).await {
        return Ok(code);
    }
    // So does an editor's session (it shows in the daemon's windows too).
    if let Some(CliCommand::Acp) = cli.command
        && let Some(link) = remote::daemon(&env.workspace).await
    {
        return Ok(acp::attached(&env, link).await);
    }
    tracing::info!(config = ?env.config_path, workspace = %env.workspace.display(), "starting");

    let servers = start_managed_servers(&env, &log_dir).await?;
    let (agent, core, notices) = env.start_agent();
    let link = link::in_process(&agent, link::Bots::default(), Vec::new());
    let for_agent = cli.agent_for(&env.config);
    let code = match cli.message {
        None if cli.compact => exit_code(headless::compact(&link, &session).await),
        Some(text) => {
            let opts = HeadlessOptions {
                session,
                json: cli.json,
                approve_exec: cli.approve_exec,
                model: cli.model.clone(),
                agent: for_agent,
            };
            if !cli.json {
                for notice in &notices {
                    print::err(format_args!("egirl: {notice}"));
                }
            }
            exit_code(headless::run_once(&link, text, &opts).await)
        }
        None if serving => run_serve(&env, &agent, notices).await,
        None if matches!(cli.command, Some(CliCommand::Acp)) => {
            acp::run(&env, &agent, notices).await
        }
        None => run_tui(&env, &agent, session, cli.model.clone(), notices).await,
    };
    shutdown(agent, core).await;
    for server in servers {
        server.stop().await;
    }
    Ok(code)
}

/// What the core needs soon but the first frame does not, done on a
/// thread of its own while the main thread starts the core and the TUI:
/// the exec sandbox's probe (a throwaway child; its notice is read when
/// the core starts) and the router's lexicon (read by the first turn).
fn warm_up() {
    let spawned = std::thread::Builder::new()
        .name("egirl-warm-up".into())
        .spawn(|| {
            crate::tools::sandbox::probe::support();
            crate::routing::Router::warm_up();
        });
    // No thread: each is built on its first use instead.
    drop(spawned);
}

/// `--agent NAME` names an agent the config knows; else bad usage (2),
/// in one line naming those it does, before anything starts.
fn check_agent(cli: &Cli, config: &config::Config) -> Result<(), Exit> {
    match &cli.agent {
        Some(name) if !config.knows_agent(name) => Err(Exit::usage(format!(
            "--agent: no agent `{name}` (known: {})",
            config.agent_names().join(", ")
        ))),
        _ => Ok(()),
    }
}

/// A headless turn's exit code: 0 only when it was answered.
fn exit_code(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Answered => EXIT_OK,
        Outcome::Failed | Outcome::Interrupted => EXIT_FAILURE,
    }
}

/// The session `--session` names (checked, and existing for
/// `--compact`), else a new one.
fn session_id(cli: &Cli, env: &Environment) -> Result<String, Exit> {
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
    Ok(session)
}

/// Starts `[local.server]` and `[local.fast.server]` (the fast model's
/// own llama-server) when configured and not already answering; the
/// servers started, to stop after the agent, main first.
async fn start_managed_servers(
    env: &Environment,
    log_dir: &Path,
) -> Result<Vec<ManagedServer>, Exit> {
    let slot_dir = managed::slot_dir(&env.workspace);
    let server_env = crate::tools::sandbox::env::command_env(
        &env.config.tools.exec.env_passthrough,
        &env.env_files,
    );
    let main =
        managed::ensure_running(&env.config.local, log_dir, &slot_dir, &server_env, |line| {
            print::err(format_args!("egirl: {line}"))
        })
        .await
        .map_err(|e| Exit::failure(format!("{e:#}")))?;
    let fast = match env.config.local.fast_role() {
        Some(fast) => managed::ensure_running(
            &fast,
            &log_dir.join("fast"),
            &slot_dir.join("fast"),
            &server_env,
            |line| print::err(format_args!("egirl: [local.fast] {line}")),
        )
        .await
        .map_err(|e| Exit::failure(format!("[local.fast] {e:#}")))?,
        None => None,
    };
    Ok(main.into_iter().chain(fast).collect())
}

/// `[ui] notify_command`, when set: run with the environment commands get.
fn notify_command(env: &Environment) -> Option<crate::surfaces::notify_command::NotifyCommand> {
    let ui = &env.config.ui;
    (!ui.notify_command.is_empty()).then(|| crate::surfaces::notify_command::NotifyCommand {
        argv: ui.notify_command.clone(),
        env: crate::tools::sandbox::env::command_env(
            &env.config.tools.exec.env_passthrough,
            &env.env_files,
        ),
        after: ui.notify_after.0,
    })
}

/// `egirl serve`: the services without a TUI, until a signal.
async fn run_serve(env: &Environment, agent: &AgentHandle, mut notices: Vec<String>) -> u8 {
    match services::start(env, agent, false, &mut notices).await {
        Ok(services) => {
            let bots = link::Bots {
                discord: services.discord.as_ref().map(|d| d.status.clone()),
                telegram: services.telegram.as_ref().map(|t| t.status.clone()),
            };
            let core = link::in_process_with_agents(
                agent,
                bots,
                env.config.local.endpoint_list(),
                link::declared_agents(&env.config),
            );
            let listeners = match gateway::start(env, &core, "serve") {
                Ok(listeners) => listeners,
                Err(why) => {
                    print::err(format_args!("egirl: {why}"));
                    services.stop().await;
                    return EXIT_FAILURE;
                }
            };
            let notifier = notify_command(env).map(|command| {
                let gateway = listeners.gateway.clone();
                crate::surfaces::notify_command::spawn(command, core.subscribe(), move || {
                    gateway.clients() > 0
                })
            });
            let code = serve::run(notices, services, agent, listeners).await;
            if let Some(notifier) = notifier {
                notifier.abort();
            }
            code
        }
        Err(why) => {
            print::err(format_args!("egirl: {why}"));
            EXIT_FAILURE
        }
    }
}

/// The TUI, with the services when this process may run them.
async fn run_tui(
    env: &Environment,
    agent: &AgentHandle,
    session: String,
    pin: Option<String>,
    mut notices: Vec<String>,
) -> u8 {
    let services = match services::start(env, agent, true, &mut notices).await {
        Ok(services) => Some(services),
        Err(why) => {
            tracing::info!("{why}");
            notices.push(why);
            None
        }
    };
    let bots = link::Bots {
        discord: services
            .as_ref()
            .and_then(|s| s.discord.as_ref())
            .map(|d| d.status.clone()),
        telegram: services
            .as_ref()
            .and_then(|s| s.telegram.as_ref())
            .map(|t| t.status.clone()),
    };
    let core = link::in_process_with_agents(
        agent,
        bots,
        env.config.local.endpoint_list(),
        link::declared_agents(&env.config),
    );
    // The process that runs the services serves its core to a second egirl.
    let listeners = match services {
        Some(_) => gateway::start(env, &core, "tui")
            .inspect_err(|why| notices.push(why.clone()))
            .ok(),
        None => None,
    };
    let options = tui::TuiOptions {
        session,
        theme: env.config.ui.theme.clone(),
        workspace: env.workspace.clone(),
        model: env.config.local.model.clone(),
        endpoint: env.config.local.endpoint_list()[0].clone(),
        context_length: env.config.local.context_length,
        notices,
        skills: Some(agent.skills.clone()),
        live_sessions: Vec::new(),
        notify: tui::notify::NotifySettings {
            mode: env.config.ui.notify,
            after: env.config.ui.notify_after.0,
        },
        pin,
        images: crate::images::limits(env.config.images.max_side, env.config.images.max_file_mb),
        agents: tui::agents::AgentDirectory::from_config(&env.config),
    };
    let code = match tui::run(&core, options).await {
        tui::TuiOutcome::Quit => EXIT_OK,
        tui::TuiOutcome::Failed => EXIT_FAILURE,
    };
    let mut services = services;
    let mut announced = false;
    if let Some(services) = services.as_mut()
        && services.bot_answering()
    {
        // Quitting must not cut an answer a Telegram chat waits for: no
        // new messages, then a moment for the turn (below).
        services.stop_intake().await;
        print::err("egirl: letting the answer in flight reach Telegram");
        announced = true;
    }
    finish_turns_in_flight(agent, announced).await;
    if let Some(listeners) = listeners {
        listeners.stop().await;
    }
    if let Some(services) = services {
        services.stop().await;
    }
    code
}

/// The TUI quit (its own turn was interrupted by the first Ctrl+C): a
/// turn still running is another window's (attached to this process's
/// core) or a bot's. It gets a moment to finish, its window still
/// attached to see the end, as under `egirl serve`; then it is cut, and
/// this says so. `announced`: a line about it was printed already.
async fn finish_turns_in_flight(agent: &AgentHandle, announced: bool) {
    const GRACE: std::time::Duration = std::time::Duration::from_secs(10);
    // The TUI's own interrupted turn ends in a moment: nothing to say.
    let settle = std::time::Duration::from_millis(500);
    if tokio::time::timeout(settle, agent.idle()).await.is_ok() {
        return;
    }
    if !announced {
        print::err("egirl: letting the turn in flight finish (10 s at most)");
    }
    if tokio::time::timeout(GRACE, agent.idle()).await.is_err() {
        print::err("egirl: cancelling the turn in flight");
    }
}

async fn shutdown(agent: AgentHandle, core: tokio::task::JoinHandle<()>) {
    agent.submit(Op::Shutdown);
    // Long enough for the core to save sessions' KV caches (slots) of a big model.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(30), core).await;
}
