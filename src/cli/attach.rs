//! The TUI attached to the core of another process: `egirl` with no
//! arguments when a daemon (`egirl serve`, or the TUI that started first)
//! owns the workspace, and `egirl attach [TARGET]` explicitly. Attached,
//! this process starts no agent, no managed llama-server and no MCP
//! server: it is one more window onto the daemon's core, and quitting it
//! stops nothing there (no op is sent on the way out).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use super::{EXIT_FAILURE, EXIT_OK, Environment, Exit};
use crate::config;
use crate::fsutil::lockfile::FileLock;
use crate::link::CoreLink;
use crate::link::client;
use crate::protocol::wire::ServerHello;
use crate::surfaces::tui;

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The daemon's socket (default: this workspace's
    /// `.egirl/egirl.sock`) or `ws://host:port`.
    #[arg(value_name = "TARGET")]
    pub target: Option<String>,
    /// Session to open (default: a new one).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// With ws://: a file holding the gateway's or this device's token
    /// (else $EGIRL_TOKEN, else the token an earlier `--pair` saved).
    /// Never given on the command line itself.
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// With ws://: pair this machine first with the code `egirl pair`
    /// showed on the daemon's; its device token is saved (0600) and used
    /// from then on.
    #[arg(long, value_name = "CODE", requires = "target")]
    pub pair: Option<String>,
    /// With --pair: what `egirl devices list` calls this device.
    #[arg(long, value_name = "NAME", requires = "pair", default_value = "egirl")]
    pub name: String,
}

/// How a client names itself in its `hello` (the server logs it).
const CLIENT_NAME: &str = concat!("egirl-tui ", env!("CARGO_PKG_VERSION"));

/// The socket of the process that owns `workspace`, when another process
/// holds its services lock and answers there. A lock held by an egirl
/// that serves no socket (an older one) is `None`: this process then
/// starts its own core, as before.
pub async fn running_daemon(workspace: &Path) -> Option<PathBuf> {
    if !lock_held_elsewhere(workspace) {
        return None;
    }
    let socket = client::socket_path(workspace);
    let token = super::gateway::socket_token()?;
    client::probe(&socket, &token).await.map(|_| socket)
}

/// Whether another process holds the workspace's services lock (taking it
/// to find out, and letting go at once).
pub(super) fn lock_held_elsewhere(workspace: &Path) -> bool {
    match FileLock::try_acquire(&super::services::lock_path(workspace)) {
        Ok(Some(_free)) => false,
        Ok(None) => true,
        Err(e) => {
            tracing::debug!("services lock: {e:#}");
            false
        }
    }
}

/// `egirl attach [TARGET]`: nothing answering there is a failure.
pub async fn explicit(
    env: &Environment,
    args: &AttachArgs,
    session: Option<&str>,
) -> Result<u8, Exit> {
    let session = args.session.as_deref().or(session);
    let target = args.target.as_deref().unwrap_or_default();
    if target.contains("://") {
        return run_ws(env, target, args, session).await;
    }
    let socket = match target {
        "" => client::socket_path(&env.workspace),
        path => PathBuf::from(path),
    };
    let token = super::gateway::socket_token().unwrap_or_default();
    if client::probe(&socket, &token).await.is_none() {
        return Err(Exit::failure(format!(
            "no egirl answers on {}; start one with `egirl serve`",
            socket.display()
        )));
    }
    run(env, &socket, session).await
}

/// The TUI attached to the daemon listening on `socket`, until the user
/// quits; the daemon and its turns go on.
pub async fn run(env: &Environment, socket: &Path, session: Option<&str>) -> Result<u8, Exit> {
    let session = session_id(session)?;
    let _log_guard = start_logging(env)?;
    let token = super::gateway::socket_token().unwrap_or_default();
    let (link, hello) = client::attach_unix(socket, CLIENT_NAME, &token)
        .await
        .map_err(|e| Exit::failure(format!("cannot attach: {e:#}")))?;
    tracing::info!(socket = %socket.display(), pid = hello.pid, "attached");
    run_tui(env, &link, &hello, session).await
}

/// The TUI attached to the gateway at `url` over a WebSocket.
async fn run_ws(
    env: &Environment,
    url: &str,
    args: &AttachArgs,
    session: Option<&str>,
) -> Result<u8, Exit> {
    let session = session_id(session)?;
    if let Some(code) = &args.pair {
        pair(url, code, &args.name).await?;
    }
    let token = token(args.token_file.as_deref())?;
    let _log_guard = start_logging(env)?;
    let (link, hello) = crate::link::ws::attach(url, token, CLIENT_NAME)
        .await
        .map_err(|e| Exit::failure(format!("cannot attach: {e:#}")))?;
    tracing::info!(url, pid = hello.pid, "attached");
    run_tui(env, &link, &hello, session).await
}

/// `--pair CODE`: trades the code for this device's own token, kept in
/// the config dir for later attaches. The token itself is never shown.
async fn pair(url: &str, code: &str, name: &str) -> Result<(), Exit> {
    let paired = crate::link::ws::pair(url, code, name)
        .await
        .map_err(|e| Exit::failure(format!("cannot pair: {e:#}")))?;
    let path = super::pair::save_device_token(&paired.token)
        .map_err(|e| Exit::failure(format!("{e:#}")))?;
    crate::print::err(format_args!(
        "egirl: paired as device {} (its token is in {})",
        paired.device,
        path.display()
    ));
    Ok(())
}

/// The token `--token-file` holds, else `$EGIRL_TOKEN`, else the device
/// token an earlier `--pair` saved, else none (the gateway then refuses,
/// and says so).
fn token(file: Option<&Path>) -> Result<Option<String>, Exit> {
    let saved = || {
        crate::surfaces::gateway::auth::secret::read_private(&super::pair::device_token_path())
            .ok()
            .flatten()
            .unwrap_or_default()
    };
    let token = match file {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| Exit::failure(format!("cannot read {}: {e}", path.display())))?,
        None => std::env::var("EGIRL_TOKEN")
            .ok()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(saved),
    };
    let token = token.trim();
    Ok((!token.is_empty()).then(|| token.to_string()))
}

/// The session `--session` names (checked), else a new one.
fn session_id(session: Option<&str>) -> Result<String, Exit> {
    match session {
        Some(id) => {
            crate::sessions::validate_id(id).map_err(Exit::usage)?;
            Ok(id.to_string())
        }
        None => Ok(crate::sessions::new_id("tui")),
    }
}

/// This process's log (what it does goes to a file, not over the TUI).
fn start_logging(env: &Environment) -> Result<tracing_appender::non_blocking::WorkerGuard, Exit> {
    let log_dir = config::expand_home(&env.config.log.dir);
    crate::logging::init(&log_dir, &env.config.log.level, &env.redactor, false)
        .map_err(|e| Exit::failure(format!("{e:#}")))
}

/// Runs the TUI on an attached link; quitting sends nothing to the core.
async fn run_tui(
    env: &Environment,
    link: &CoreLink,
    hello: &ServerHello,
    session: String,
) -> Result<u8, Exit> {
    let options = options(env, hello, session);
    Ok(match tui::run(link, options).await {
        tui::TuiOutcome::Quit => EXIT_OK,
        tui::TuiOutcome::Failed => EXIT_FAILURE,
    })
}

/// What the TUI shows at start, from the daemon's hello: its workspace
/// (where the transcripts are), its model, its live sessions.
fn options(env: &Environment, hello: &ServerHello, session: String) -> tui::TuiOptions {
    let workspace = match hello.workspace.as_str() {
        "" => env.workspace.clone(),
        path => PathBuf::from(path),
    };
    let model = match hello.model.as_str() {
        "" => env.config.local.model.clone(),
        model => model.to_string(),
    };
    let context_length = match hello.context_length {
        0 => env.config.local.context_length,
        n => n,
    };
    // The slash commands of the workspace's skills, read here as the
    // daemon reads them (the daemon runs them).
    let skills = crate::skills::Registry::load(&env.config.skills, &workspace);
    // This config's agents' workspaces hold the daemon's transcripts only
    // when it is the daemon's config (the same default workspace).
    let agents = match workspace == env.workspace {
        true => tui::agents::AgentDirectory::from_config(&env.config),
        false => Default::default(),
    };
    tui::TuiOptions {
        session,
        theme: env.config.ui.theme.clone(),
        model,
        endpoint: env
            .config
            .local
            .endpoint_list()
            .into_iter()
            .next()
            .unwrap_or_default(),
        context_length,
        notices: Vec::new(),
        skills: Some(Arc::new(skills)),
        live_sessions: hello.sessions.clone(),
        workspace,
        notify: tui::notify::NotifySettings {
            mode: env.config.ui.notify,
            after: env.config.ui.notify_after.0,
        },
        pin: None,
        images: crate::images::limits(env.config.images.max_side, env.config.images.max_file_mb),
        agents,
    }
}
