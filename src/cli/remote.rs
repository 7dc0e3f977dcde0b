//! Headless runs when a daemon owns the workspace: `egirl -m TEXT`,
//! `egirl --session ID --compact`, `--fork` and `--rewind N` go through the
//! core of the process that holds the services lock and answers on the
//! workspace's socket (`egirl serve`, or the TUI that started first)
//! instead of starting a second core beside it. This process then starts
//! no agent, no managed llama-server and no MCP server; its output and
//! exit code are those of the same run without a daemon.

use std::path::Path;

use super::{EXIT_OK, Environment, Exit};
use crate::link::{CoreLink, client};
use crate::protocol::{Command, ErrorEvent, EventKind, Forked, Op};
use crate::stop_signals::StopSignals;
use crate::surfaces::headless::{self, HeadlessOptions, Next, Turn};

/// How this client names itself in its `hello` (the daemon logs it).
const CLIENT_NAME: &str = concat!("egirl-cli ", env!("CARGO_PKG_VERSION"));

/// A link to the daemon that owns `workspace`: another process holds its
/// services lock and answers on its socket. `None` otherwise, and for a
/// lock held by an egirl that serves no socket (an older one): this
/// process then runs its own core, as before.
pub async fn daemon(workspace: &Path) -> Option<CoreLink> {
    if !super::attach::lock_held_elsewhere(workspace) {
        return None;
    }
    let socket = client::socket_path(workspace);
    let token = super::gateway::socket_token()?;
    match client::connect_unix(&socket, CLIENT_NAME, &token).await {
        Ok(link) => {
            let by = link.attached.clone().unwrap_or_default();
            tracing::info!(daemon = by, "headless run through the daemon");
            Some(link)
        }
        Err(e) => {
            tracing::info!("the services lock is held but no core answers: {e:#}");
            None
        }
    }
}

/// `egirl -m TEXT` or `egirl --session ID --compact` through the daemon
/// that owns the workspace: its exit code, or `None` when no daemon does.
pub async fn headless(cli: &super::Cli, env: &Environment, session: &str) -> Option<u8> {
    if cli.message.is_none() && !cli.compact {
        return None;
    }
    let link = daemon(&env.workspace).await?;
    let outcome = match &cli.message {
        Some(text) => {
            let opts = HeadlessOptions {
                session: session.to_string(),
                json: cli.json,
                approve_exec: cli.approve_exec,
                model: cli.model.clone(),
                agent: cli.agent_for(&env.config),
            };
            headless::run_once(&link, text.clone(), &opts).await
        }
        None => headless::compact(&link, session).await,
    };
    Some(super::exit_code(outcome))
}

/// `--session ID --fork` or `--rewind N` through the daemon that owns
/// the workspace (its core holds the session live: a rewind on disk alone
/// would leave its copy stale); `None` when it is not one of those, or no
/// daemon owns the workspace (`timeline` then does it on disk).
pub async fn timeline(cli: &super::Cli, env: &Environment) -> Option<Result<u8, Exit>> {
    let session = cli.session.as_deref()?;
    if !cli.fork && cli.rewind.is_none() {
        return None;
    }
    let link = daemon(&env.workspace).await?;
    Some(match cli.rewind.filter(|_| !cli.fork) {
        None => fork(&link, session).await,
        Some(turn) => rewind(&link, session, turn).await,
    })
}

/// `--fork`: prints the new session's id.
async fn fork(link: &CoreLink, session: &str) -> Result<u8, Exit> {
    if let EventKind::Forked(Forked { new_session }) = command(link, session, Command::Fork).await?
    {
        println!("{new_session}");
    }
    Ok(EXIT_OK)
}

/// `--rewind N`, which the daemon's live session follows: prints what
/// went back, as without a daemon.
async fn rewind(link: &CoreLink, session: &str, turn: usize) -> Result<u8, Exit> {
    let event = command(link, session, Command::Rewind { turn }).await?;
    Ok(super::timeline::print_rewound(session, event))
}

/// Sends `command` for `session` and waits for its answer (`forked`,
/// `rewound`); an `error` answer is the run's failure.
async fn command(link: &CoreLink, session: &str, command: Command) -> Result<EventKind, Exit> {
    let mut events = link.subscribe();
    let op = Op::Command {
        session: session.to_string(),
        command,
    };
    let turn = Turn::submit(link, session, op);
    let mut stop = StopSignals::watch();
    let mut connection = headless::Connection::of(link);
    loop {
        let event = match headless::next(&mut events, &mut stop, &mut connection).await {
            Next::Event(event) => *event,
            Next::Stop => {
                return Err(Exit::failure(
                    "stopped waiting; the daemon may still carry it out",
                ));
            }
            Next::Lost(why) => return Err(Exit::failure(why)),
        };
        if !turn.answers(&event) {
            continue;
        }
        match event.kind {
            EventKind::Error(ErrorEvent { message }) => return Err(Exit::failure(message)),
            kind @ (EventKind::Forked(_) | EventKind::Rewound(_)) => return Ok(kind),
            _ => {}
        }
    }
}
