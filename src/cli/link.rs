//! The in-process [`CoreLink`]: the agent core of this process, with the
//! status of the bots this process runs, its MCP servers and the local
//! model's health folded into one [`CoreStatus`] that the TUI and the
//! gateway's clients read alike.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::agent::AgentHandle;
use crate::link::CoreLink;
use crate::protocol::BotStatus;
use crate::protocol::wire::{CoreStatus, LocalHealth};
use crate::usage::budget::SpendWatch;

/// How often the local endpoints' `/health` is probed while anyone reads
/// the status besides the link itself.
const HEALTH_EVERY: Duration = Duration::from_secs(10);

/// The bots this process runs, as their status watches.
#[derive(Default)]
pub struct Bots {
    pub discord: Option<watch::Receiver<BotStatus>>,
    pub telegram: Option<watch::Receiver<BotStatus>>,
}

/// A link to `agent`, with a task that keeps its status current; the task
/// ends when every receiver of the status is gone.
pub fn in_process(agent: &AgentHandle, bots: Bots, endpoints: Vec<String>) -> CoreLink {
    in_process_with_agents(agent, bots, endpoints, Vec::new())
}

/// The agents a status names: the config's, none without `[agents]`.
pub fn declared_agents(config: &crate::config::Config) -> Vec<crate::protocol::AgentName> {
    match config.has_agents() {
        true => config.agent_names(),
        false => Vec::new(),
    }
}

/// [`in_process`] whose status names the config's agents (`agents`,
/// empty without `[agents]`), for the TUI and attached clients.
pub fn in_process_with_agents(
    agent: &AgentHandle,
    bots: Bots,
    endpoints: Vec<String>,
    agents: Vec<crate::protocol::AgentName>,
) -> CoreLink {
    // Filled now, not by the task's first pass: a reader that waits for the
    // MCP servers must see them starting, not an empty list.
    let (tx, rx) = watch::channel(CoreStatus {
        mcp: agent.mcp.borrow().clone(),
        discord: bots.discord.as_ref().map(|d| d.borrow().clone()),
        telegram: bots.telegram.as_ref().map(|t| t.borrow().clone()),
        local: None,
        no_remote: agent.no_remote.clone(),
        budget: agent
            .spend
            .as_ref()
            .map(SpendWatch::periods)
            .unwrap_or_default(),
        agents,
    });
    let submit_to = agent.clone();
    let start = agent.clone();
    let link = CoreLink::new(
        Arc::new(move |submission| submit_to.submit_with(submission)),
        agent.bus.clone(),
        rx,
        Arc::new(move || start.start_mcp()),
        None,
    );
    let sources = StatusSources {
        mcp: agent.mcp.clone(),
        bots,
        spend: agent.spend.clone(),
        watchers: link.status_watchers(),
    };
    tokio::spawn(keep_status(tx, sources, HealthProbe::new(endpoints)));
    link
}

/// What the status is made of, besides the local endpoints' health.
struct StatusSources {
    mcp: watch::Receiver<Vec<crate::protocol::McpServerInfo>>,
    bots: Bots,
    spend: Option<SpendWatch>,
    /// Woken when a surface takes a receiver of its own.
    watchers: Arc<tokio::sync::Notify>,
}

async fn keep_status(
    tx: watch::Sender<CoreStatus>,
    sources: StatusSources,
    probe: Option<HealthProbe>,
) {
    let StatusSources {
        mut mcp,
        mut bots,
        mut spend,
        watchers,
    } = sources;
    let mut next_probe = tokio::time::Instant::now();
    loop {
        let mut status = tx.borrow().clone();
        status.mcp = mcp.borrow_and_update().clone();
        status.discord = bots.discord.as_mut().map(|d| d.borrow_and_update().clone());
        status.telegram = bots
            .telegram
            .as_mut()
            .map(|t| t.borrow_and_update().clone());
        if let Some(spend) = &mut spend {
            spend.written.borrow_and_update();
            status.budget = spend.periods();
        }
        // The links' shared receiver is one; a surface showing the status
        // holds another. Nobody looking: no probe, and no timer either (an
        // idle daemon or `egirl acp` sleeps until a surface looks).
        let watched = probe.is_some() && tx.receiver_count() > 1;
        if watched && tokio::time::Instant::now() >= next_probe {
            if let Some(probe) = &probe {
                status.local = Some(probe.run().await);
            }
            next_probe = tokio::time::Instant::now() + HEALTH_EVERY;
        }
        redact(&mut status);
        tx.send_if_modified(|now| {
            let changed = *now != status;
            *now = status;
            changed
        });
        if tx.is_closed() {
            return;
        }
        tokio::select! {
            r = mcp.changed() => if r.is_err() { return },
            Some(()) = changed(&mut bots.discord) => {}
            Some(()) = changed(&mut bots.telegram) => {}
            Some(()) = usage_written(&mut spend) => {}
            () = tokio::time::sleep_until(next_probe), if watched => {}
            () = watchers.notified(), if !watched => {}
            () = tx.closed() => return,
        }
    }
}

fn redact(status: &mut CoreStatus) {
    use crate::sessions::redact_as_read;
    for server in &mut status.mcp {
        if let Some(error) = &mut server.last_error {
            redact_as_read(error);
        }
    }
    for bot in [&mut status.discord, &mut status.telegram]
        .into_iter()
        .flatten()
    {
        if let BotStatus::Ready(detail)
        | BotStatus::Reconnecting(detail)
        | BotStatus::Stopped(detail) = bot
        {
            redact_as_read(detail);
        }
    }
}

/// Resolves when the usage log wrote a line (the spend is read again);
/// never without caps or once the log's writer is gone.
async fn usage_written(spend: &mut Option<SpendWatch>) -> Option<()> {
    match spend {
        Some(watch) => match watch.written.changed().await {
            Ok(()) => Some(()),
            Err(_) => {
                *spend = None;
                None
            }
        },
        None => std::future::pending().await,
    }
}

/// Resolves when the bot's status changes; never when there is no bot or
/// it is gone.
async fn changed(bot: &mut Option<watch::Receiver<BotStatus>>) -> Option<()> {
    match bot {
        Some(rx) => match rx.changed().await {
            Ok(()) => Some(()),
            Err(_) => {
                *bot = None;
                None
            }
        },
        None => std::future::pending().await,
    }
}

/// Asks each local endpoint's `/health`; 503 while a model loads counts
/// as not up yet.
struct HealthProbe {
    client: reqwest::Client,
    urls: Vec<String>,
}

impl HealthProbe {
    fn new(endpoints: Vec<String>) -> Option<Self> {
        if endpoints.is_empty() {
            return None;
        }
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(3))
            .build()
            .ok()?;
        let urls = endpoints
            .iter()
            .map(|e| format!("{}/health", e.trim_end_matches('/')))
            .collect();
        Some(HealthProbe { client, urls })
    }

    async fn run(&self) -> LocalHealth {
        let mut up = 0;
        for url in &self.urls {
            let ok = matches!(self.client.get(url).send().await, Ok(r) if r.status().is_success());
            up += usize::from(ok);
        }
        LocalHealth {
            up,
            total: self.urls.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::bus::EventBus;

    /// A `/health` that answers 200 and counts the connections made to it.
    async fn counting_health() -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                let mut request = [0u8; 1024];
                let _ = socket.read(&mut request).await;
                let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
                let _ = socket.write_all(ok).await;
            }
        });
        (url, hits)
    }

    #[tokio::test]
    async fn the_endpoints_are_probed_only_while_a_surface_looks() {
        let (url, hits) = counting_health().await;
        let (tx, rx) = watch::channel(CoreStatus::default());
        let link = CoreLink::new(
            Arc::new(|_| true),
            EventBus::new(),
            rx,
            Arc::new(|| {}),
            None,
        );
        let (_mcp_tx, mcp) = watch::channel(Vec::new());
        let sources = StatusSources {
            mcp,
            bots: Bots::default(),
            spend: None,
            watchers: link.status_watchers(),
        };
        tokio::spawn(keep_status(tx, sources, HealthProbe::new(vec![url])));
        // Clones of the link (a daemon's listeners hold some) are nobody
        // looking.
        let clones = [link.clone(), link.clone(), link.clone()];
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(hits.load(Ordering::SeqCst), 0);

        let mut status = clones[0].watch_status();
        let probed = status.wait_for(|s| s.local == Some(LocalHealth { up: 1, total: 1 }));
        tokio::time::timeout(Duration::from_secs(10), probed)
            .await
            .expect("probed within 10 s")
            .unwrap();
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }
}
