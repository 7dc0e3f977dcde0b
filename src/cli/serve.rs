//! `egirl serve`: the background services without a TUI, until SIGTERM or
//! Ctrl+C. Approvals nobody can answer here fall back to the policy (deny
//! unless a rule allows, or the owner answers in Discord when allowed);
//! unattended origins' approvals time out as denied.
//!
//! On a signal the services stop taking work, the turn in flight gets a
//! moment to finish, and the caller's shutdown then cancels whatever is
//! still running (every step is already in its transcript).

use std::time::Duration;

use tokio::sync::watch;

use super::services::Services;
use super::{EXIT_FAILURE, EXIT_OK};
use crate::agent::AgentHandle;
use crate::protocol::BotStatus;

/// How long a turn in flight may take to finish after a stop signal.
const FINISH_GRACE: Duration = Duration::from_secs(10);

pub async fn run(notices: Vec<String>, mut services: Services, agent: &AgentHandle) -> u8 {
    for notice in &notices {
        eprintln!("egirl: {notice}");
    }
    if services.running.is_empty() {
        eprintln!(
            "egirl: nothing to serve: enable [channels.discord], [heartbeat] every, [cron] or set EGIRL_WEBHOOK_SECRET"
        );
        services.stop().await;
        return EXIT_FAILURE;
    }
    eprintln!("egirl: serving {}", services.running.join(", "));
    eprintln!("egirl: stop with Ctrl+C or SIGTERM");
    let mut status = services.discord.as_ref().map(|d| d.status.clone());
    let stop = wait_for_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            line = next_status(&mut status) => match line {
                Some(line) => eprintln!("egirl: {line}"),
                None => status = None,
            },
        }
    }
    eprintln!("egirl: stopping");
    services.stop_intake().await;
    if agent.busy() {
        // The bot is still up: an answer finished now reaches Discord.
        eprintln!("egirl: letting the turn in flight finish");
        if tokio::time::timeout(FINISH_GRACE, agent.idle())
            .await
            .is_err()
        {
            eprintln!("egirl: cancelling the turn in flight");
        }
    }
    services.stop().await;
    EXIT_OK
}

/// The bot's next status change as a line; None when it has no more.
async fn next_status(status: &mut Option<watch::Receiver<BotStatus>>) -> Option<String> {
    let Some(status) = status else {
        return std::future::pending().await;
    };
    status.changed().await.ok()?;
    let line = match &*status.borrow_and_update() {
        BotStatus::Ready(name) => format!("discord: ready as {name}"),
        BotStatus::Connecting => "discord: connecting".into(),
        BotStatus::Reconnecting(why) => format!("discord: {why}"),
        BotStatus::Stopped(why) => format!("discord: stopped: {why}"),
        BotStatus::Off => "discord: off".into(),
    };
    Some(line)
}

/// Resolves on SIGINT or SIGTERM.
async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("cannot watch SIGTERM ({e}); Ctrl+C still stops");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
