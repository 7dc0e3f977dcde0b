//! `egirl serve`: the background services and the socket other processes
//! attach to (`.egirl/egirl.sock`), without a TUI, until SIGTERM,
//! SIGHUP or Ctrl+C. Approvals nobody can answer here fall back to the policy (deny
//! unless a rule allows, or the owner answers in Discord when allowed);
//! unattended origins' approvals time out as denied.
//!
//! On a signal the services stop taking work, the turn in flight gets a
//! moment to finish, and the caller's shutdown then cancels whatever is
//! still running (every step is already in its transcript).

use std::time::Duration;

use tokio::sync::watch;

use super::EXIT_OK;
use super::gateway::Listeners;
use super::services::Services;
use crate::agent::AgentHandle;
use crate::print;
use crate::protocol::BotStatus;

/// How long a turn in flight may take to finish after a stop signal.
const FINISH_GRACE: Duration = Duration::from_secs(10);
/// Start-up is over this long after the services are up: what it touched
/// is handed back (`trim::after_burst`).
const SETTLE_AFTER_START: Duration = Duration::from_secs(2);
/// After a burst of turns, memory is handed back once the core has been
/// idle this long (a turn soon after finds its pages still in).
const SETTLE_AFTER_TURNS: Duration = Duration::from_secs(60);

pub async fn run(
    notices: Vec<String>,
    mut services: Services,
    agent: &AgentHandle,
    listeners: Listeners,
) -> u8 {
    // Watched before the first line says where egirl listens: a SIGTERM
    // sent as soon as that line is read stops egirl cleanly rather than
    // by the default action halfway through the lines.
    let mut signals = crate::stop_signals::StopSignals::watch();
    agent.start_mcp();
    let trimming = tokio::spawn(trim_when_idle(agent.outstanding()));
    for notice in &notices {
        print::err(format_args!("egirl: {notice}"));
    }
    // The socket is a service of its own: with nothing else configured,
    // the daemon still serves attached clients.
    if !services.running.is_empty() {
        print::err(format_args!(
            "egirl: serving {}",
            services.running.join(", ")
        ));
    }
    print::err(format_args!(
        "egirl: listening on {}",
        listeners.socket.path().display()
    ));
    if let Some(tcp) = &listeners.tcp {
        print::err(format_args!("egirl: listening on {}", tcp.url()));
        print::err(format_args!(
            "egirl: the web UI is at {} (sign a browser in with `egirl pair`)",
            web_url(tcp.addr)
        ));
    }
    print::err("egirl: stop with Ctrl+C, SIGTERM or SIGHUP");
    let mut status = services.discord.as_ref().map(|d| d.status.clone());
    let mut telegram = services.telegram.as_ref().map(|t| t.status.clone());
    // SIGINT, SIGTERM or SIGHUP (a closed terminal must not kill the
    // process with a command still running).
    let stop = signals.next();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            line = next_status(&mut status, "discord") => match line {
                Some(line) => print::err(format_args!("egirl: {line}")),
                None => status = None,
            },
            line = next_status(&mut telegram, "telegram") => match line {
                Some(line) => print::err(format_args!("egirl: {line}")),
                None => telegram = None,
            },
        }
    }
    print::err("egirl: stopping");
    trimming.abort();
    services.stop_intake().await;
    if agent.busy() {
        // The bot is still up: an answer finished now reaches Discord or Telegram.
        print::err("egirl: letting the turn in flight finish");
        if tokio::time::timeout(FINISH_GRACE, agent.idle())
            .await
            .is_err()
        {
            print::err("egirl: cancelling the turn in flight");
        }
    }
    services.stop().await;
    // Last: attached clients see the turn in flight to its end.
    listeners.stop().await;
    EXIT_OK
}

/// The bot's next status change as a line; None when it has no more.
async fn next_status(status: &mut Option<watch::Receiver<BotStatus>>, bot: &str) -> Option<String> {
    let Some(status) = status else {
        return std::future::pending().await;
    };
    status.changed().await.ok()?;
    let line = match &*status.borrow_and_update() {
        BotStatus::Ready(name) => format!("{bot}: ready as {name}"),
        BotStatus::Connecting => format!("{bot}: connecting"),
        BotStatus::Reconnecting(why) => format!("{bot}: {why}"),
        BotStatus::Stopped(why) => format!("{bot}: stopped: {why}"),
        BotStatus::Off => format!("{bot}: off"),
    };
    Some(line)
}

/// Where a browser opens the page: the listener's address, or (listening
/// on every interface) a placeholder for one of them.
fn web_url(addr: std::net::SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        format!("http://<this machine's address>:{}/", addr.port())
    } else {
        format!("http://{addr}/")
    }
}

/// Hands memory back (`trim::after_burst`) once start-up has settled, then
/// after each burst of turns once the core has been idle a while; waits
/// for nothing but the core's turn count in between (no timer while idle).
async fn trim_when_idle(mut outstanding: watch::Receiver<usize>) {
    let mut settle = SETTLE_AFTER_START;
    loop {
        if outstanding.wait_for(|n| *n == 0).await.is_err() {
            return;
        }
        match tokio::time::timeout(settle, outstanding.changed()).await {
            // A turn came (or went) before the quiet ended: start over.
            Ok(Ok(())) => continue,
            Ok(Err(_)) => return,
            Err(_quiet) => {}
        }
        let _ = tokio::task::spawn_blocking(crate::trim::after_burst).await;
        settle = SETTLE_AFTER_TURNS;
        // Nothing to hand back until the next turn.
        if outstanding.changed().await.is_err() {
            return;
        }
    }
}
