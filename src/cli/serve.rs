//! `egirl serve`: the background services without a TUI, until SIGTERM or
//! Ctrl+C. Approvals nobody can answer here fall back to the policy (deny
//! unless a rule allows, or the owner answers in Discord when allowed).

use crate::channels::discord::Discord;
use crate::protocol::BotStatus;

use super::{EXIT_FAILURE, EXIT_OK};

pub async fn run(notices: Vec<String>, discord: Option<Discord>) -> u8 {
    for notice in &notices {
        eprintln!("egirl: {notice}");
    }
    let Some(bot) = discord else {
        eprintln!(
            "egirl: nothing to serve: enable [channels.discord] (more services come with the scheduler and webhook)"
        );
        return EXIT_FAILURE;
    };
    eprintln!("egirl: serving; stop with Ctrl+C or SIGTERM");
    let mut status = bot.status.clone();
    let stop = wait_for_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            changed = status.changed() => {
                if changed.is_err() {
                    break;
                }
                let line = match &*status.borrow_and_update() {
                    BotStatus::Ready(name) => format!("discord: ready as {name}"),
                    BotStatus::Connecting => "discord: connecting".into(),
                    BotStatus::Reconnecting(why) => format!("discord: {why}"),
                    BotStatus::Stopped(why) => format!("discord: stopped: {why}"),
                    BotStatus::Off => "discord: off".into(),
                };
                eprintln!("egirl: {line}");
            }
        }
    }
    eprintln!("egirl: stopping");
    bot.stop().await;
    EXIT_OK
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
