//! The endpoints of one local role (`[local]` or `[local.fast]`): replicas
//! of one model behind the same provider seam.
//!
//! A session lives on one endpoint, which holds its prefix cache: its
//! rendezvous home among the healthy endpoints (`placement`), the same in
//! every process; `max_concurrent` applies per endpoint. An endpoint that
//! fails (connect error, timeout, 5xx) is marked down and probed
//! (`/health`) in the background until it answers again; its sessions move
//! to their next home meanwhile, and a request that failed before anything
//! streamed is sent again there. When it answers, they return.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{OnceCell, Semaphore};
use tokio_util::sync::CancellationToken;

use super::llamacpp::LlamaCpp;
use super::placement;
use super::probe;
use super::server_kind::{ServerInfo, ServerKind};
use super::{ChatRequest, ChatResponse, ProviderError, StreamChunk};
use crate::config::{Balance, LocalConfig, ToolFormat};

/// Which local model a request is for (the routing event names it too).
pub use crate::protocol::LocalRole;

/// What one endpoint has served (the stats pane, `egirl doctor`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    pub requests: u64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub failures: u64,
}

struct Member {
    server: LlamaCpp,
    permits: Semaphore,
    up: AtomicBool,
    info: OnceCell<ServerInfo>,
    stats: Mutex<EndpointStats>,
    /// Sessions placed here so far: each new one gets the next ordinal, so
    /// sessions on one endpoint spread over its slots.
    placed: AtomicUsize,
}

/// A request that moved to another endpoint: what the notice says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failover {
    pub from: String,
    pub to: String,
    pub why: String,
}

/// A reply and the endpoint that wrote it.
#[derive(Debug)]
pub struct Served {
    pub response: ChatResponse,
    pub endpoint: String,
}

pub struct Pool {
    role: LocalRole,
    members: Vec<Arc<Member>>,
    /// The endpoint each session's cache is on, and the session's ordinal there.
    affinity: Mutex<HashMap<String, (usize, usize)>>,
    balance: Balance,
    next: AtomicUsize,
    probe_every: Duration,
    /// `max_concurrent`: permits of each endpoint.
    capacity: usize,
}

impl Pool {
    pub fn new(role: LocalRole, cfg: &LocalConfig, logprobs: bool) -> Self {
        let members = cfg
            .endpoint_list()
            .into_iter()
            .map(|endpoint| {
                let one = LocalConfig {
                    endpoint,
                    ..cfg.clone()
                };
                Arc::new(Member {
                    server: LlamaCpp::new(&one).with_logprobs(logprobs),
                    permits: Semaphore::new(cfg.max_concurrent.max(1)),
                    up: AtomicBool::new(true),
                    info: OnceCell::new(),
                    stats: Mutex::default(),
                    placed: AtomicUsize::new(0),
                })
            })
            .collect();
        Self {
            role,
            members,
            affinity: Mutex::default(),
            balance: cfg.balance,
            next: AtomicUsize::new(0),
            probe_every: cfg.probe_every.0.max(Duration::from_millis(50)),
            capacity: cfg.max_concurrent.max(1),
        }
    }

    pub fn role(&self) -> LocalRole {
        self.role
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Endpoints not marked down.
    pub fn up_count(&self) -> usize {
        self.members
            .iter()
            .filter(|m| m.up.load(Ordering::SeqCst))
            .count()
    }

    /// Each endpoint's URL, whether it is up, and what it served.
    pub fn stats(&self) -> Vec<(String, bool, EndpointStats)> {
        self.members
            .iter()
            .map(|m| {
                (
                    m.server.endpoint().to_string(),
                    m.up.load(Ordering::SeqCst),
                    lock(&m.stats).clone(),
                )
            })
            .collect()
    }

    /// What each endpoint serves (`probe::served_models`), or why it did
    /// not say: `/model` shows it beside the role.
    pub async fn served_models(&self) -> Vec<(String, Result<Vec<String>, ProviderError>)> {
        let mut out = Vec::new();
        for member in &self.members {
            let found = probe::served_models(&member.server).await;
            out.push((member.server.endpoint().to_string(), found));
        }
        out
    }

    /// The endpoint a session's requests go to now (its cache), if assigned.
    pub fn endpoint_of(&self, session: &str) -> Option<String> {
        let (index, _) = *lock(&self.affinity).get(session)?;
        Some(self.members[index].server.endpoint().to_string())
    }

    /// The provider of the session's endpoint (or the first one up): token
    /// counts and slot files go there.
    pub fn server_for(&self, session: Option<&str>) -> LlamaCpp {
        let assigned = session.and_then(|s| lock(&self.affinity).get(s).map(|a| a.0));
        let index = assigned
            .or_else(|| {
                self.members
                    .iter()
                    .position(|m| m.up.load(Ordering::SeqCst))
            })
            .unwrap_or(0);
        self.with_info(index)
    }

    /// Places a session now (before its first request, so a restored slot
    /// is restored where its requests will go): that endpoint, and the
    /// session's ordinal among those placed there (its slot, modulo the
    /// server's slots).
    pub fn place(&self, session: &str) -> (LlamaCpp, usize) {
        let (index, _) = self.pick(Some(session));
        let ordinal = lock(&self.affinity).get(session).map_or(0, |a| a.1);
        (self.with_info(index), ordinal)
    }

    /// The provider of the endpoint with this URL.
    pub fn server_at(&self, endpoint: &str) -> Option<LlamaCpp> {
        let index = self
            .members
            .iter()
            .position(|m| m.server.endpoint() == endpoint)?;
        Some(self.with_info(index))
    }

    /// The server kind and limits, probed once from the first endpoint that
    /// answers (replicas serve one model); `None` when none answers yet.
    pub async fn discover(&self) -> Option<ServerInfo> {
        for member in &self.members {
            if let Some(info) = discover_member(member).await {
                return Some(info);
            }
        }
        None
    }

    /// What the probes found at each endpoint (`egirl doctor`).
    pub async fn discover_each(&self) -> Vec<(String, Result<ServerInfo, ProviderError>)> {
        let mut out = Vec::new();
        for member in &self.members {
            let endpoint = member.server.endpoint().to_string();
            let found = match member.info.get() {
                Some(info) => Ok(info.clone()),
                None => probe::discover(&member.server).await,
            };
            out.push((endpoint, found));
        }
        out
    }

    /// Streams one reply from the session's endpoint (`session` None: any,
    /// e.g. a classification), moving to another endpoint when one fails
    /// before anything streamed. `failover` hears of each move.
    pub async fn chat(
        &self,
        session: Option<&str>,
        format: Option<ToolFormat>,
        req: &ChatRequest,
        cancel: &CancellationToken,
        on_chunk: &mut (dyn FnMut(StreamChunk) + Send),
        failover: &mut (dyn FnMut(Failover) + Send),
    ) -> Result<Served, ProviderError> {
        let mut last_error: Option<ProviderError> = None;
        for _ in 0..self.members.len() {
            let (index, moved) = self.pick(session);
            if let Some(mut moved) = moved {
                if let Some(e) = &last_error {
                    moved.why = e.to_string();
                }
                failover(moved);
            }
            let member = &self.members[index];
            let permit = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ProviderError::Interrupted),
                p = member.permits.acquire() => p,
            };
            let Ok(_permit) = permit else {
                return Err(ProviderError::NotConfigured(
                    "the local pool is closed".into(),
                ));
            };
            let mut server = self.with_info(index);
            if let Some(format) = format {
                server = server.with_tool_format(format);
            }
            let mut streamed = false;
            let mut forward = |chunk: StreamChunk| {
                streamed = true;
                on_chunk(chunk);
            };
            match server.chat(req, cancel, &mut forward).await {
                Ok(response) => {
                    // With nothing up the request went to a down endpoint
                    // anyway; it answered, so it is up without a probe.
                    if !member.up.swap(true, Ordering::SeqCst) {
                        tracing::info!(endpoint = server.endpoint(), "local endpoint back up");
                    }
                    let mut stats = lock(&member.stats);
                    stats.requests += 1;
                    stats.input_tokens += response.usage.input_tokens;
                    stats.cached_tokens += response.usage.cached_tokens;
                    stats.output_tokens += response.usage.output_tokens;
                    return Ok(Served {
                        response,
                        endpoint: server.endpoint().to_string(),
                    });
                }
                Err(e) if endpoint_failed(&e) => {
                    lock(&member.stats).failures += 1;
                    self.mark_down(index, &e);
                    // Text already shown cannot be taken back: no retry.
                    if streamed || self.up_count() == 0 {
                        return Err(e);
                    }
                    last_error = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        Err(last_error
            .unwrap_or_else(|| ProviderError::NotConfigured("no local endpoint configured".into())))
    }

    /// The endpoint for the next request, and the move when the session's
    /// own endpoint is down. A session goes to its rendezvous home among
    /// the endpoints up (`placement`), so every process agrees where it
    /// lives; it leaves only when that endpoint is down and returns when
    /// it answers again.
    fn pick(&self, session: Option<&str>) -> (usize, Option<Failover>) {
        let n = self.members.len();
        if self.balance == Balance::RoundRobin {
            let start = self.next.fetch_add(1, Ordering::Relaxed);
            let index = (0..n).map(|k| (start + k) % n).find(|&i| self.is_up(i));
            return (index.unwrap_or(start % n), None);
        }
        let mut affinity = lock(&self.affinity);
        let Some(session) = session else {
            return (self.least_loaded(&affinity).unwrap_or(0), None);
        };
        let current = affinity.get(session).map(|a| a.0);
        let home = placement::home(session, &self.urls(), |i| self.is_up(i));
        // Nothing up: stay where the cache is, or start at the session's
        // home over all endpoints; the request says why it fails.
        let chosen = home
            .or(current)
            .or_else(|| placement::home(session, &self.urls(), |_| true))
            .unwrap_or_default();
        if current == Some(chosen) {
            return (chosen, None);
        }
        let ordinal = self.members[chosen].placed.fetch_add(1, Ordering::Relaxed);
        affinity.insert(session.to_string(), (chosen, ordinal));
        let Some(from) = current else {
            return (chosen, None);
        };
        let from_url = self.members[from].server.endpoint().to_string();
        let to_url = self.members[chosen].server.endpoint().to_string();
        if self.is_up(from) {
            // Its home answers again: back to it, no failure to report.
            tracing::info!(from = from_url, to = to_url, session, "session back home");
            return (chosen, None);
        }
        let moved = Failover {
            from: from_url,
            to: to_url,
            why: "it is down".into(),
        };
        (chosen, Some(moved))
    }

    fn urls(&self) -> Vec<&str> {
        self.members.iter().map(|m| m.server.endpoint()).collect()
    }

    fn is_up(&self, index: usize) -> bool {
        self.members[index].up.load(Ordering::SeqCst)
    }

    /// For requests of no session (a classification): the healthy endpoint
    /// with the fewest requests in flight, then the fewest sessions; ties go
    /// to the first.
    fn least_loaded(&self, affinity: &HashMap<String, (usize, usize)>) -> Option<usize> {
        (0..self.members.len())
            .filter(|&i| self.is_up(i))
            .min_by_key(|&i| {
                let available = self.members[i].permits.available_permits();
                let in_flight = self.capacity.saturating_sub(available);
                let sessions = affinity.values().filter(|a| a.0 == i).count();
                (in_flight, sessions)
            })
    }

    /// Marks an endpoint down and probes it until it answers `/health`.
    fn mark_down(&self, index: usize, why: &ProviderError) {
        let member = &self.members[index];
        if !member.up.swap(false, Ordering::SeqCst) {
            return;
        }
        tracing::warn!(
            endpoint = member.server.endpoint(),
            "local endpoint down: {why}"
        );
        let weak: Weak<Member> = Arc::downgrade(member);
        let every = self.probe_every;
        tokio::spawn(async move {
            let mut wait = every;
            loop {
                tokio::time::sleep(wait).await;
                let Some(member) = weak.upgrade() else {
                    return;
                };
                // A request that got through meanwhile already said so.
                if member.up.load(Ordering::SeqCst) {
                    return;
                }
                if member.server.health().await.is_ok() {
                    tracing::info!(
                        endpoint = member.server.endpoint(),
                        "local endpoint back up"
                    );
                    member.up.store(true, Ordering::SeqCst);
                    return;
                }
                wait = next_probe_wait(wait, every);
            }
        });
    }

    fn with_info(&self, index: usize) -> LlamaCpp {
        let member = &self.members[index];
        match member.info.get() {
            Some(info) => member.server.with_kind(info.kind),
            None => member.server.clone(),
        }
    }
}

async fn discover_member(member: &Member) -> Option<ServerInfo> {
    member
        .info
        .get_or_try_init(|| probe::discover(&member.server))
        .await
        .map_err(|e| {
            tracing::info!(
                endpoint = member.server.endpoint(),
                "no answer to the probes ({e})"
            )
        })
        .ok()
        .cloned()
}

/// A down endpoint is probed after `every`, then twice as long after each
/// probe it fails, up to this many times `every` (a minute by default): an
/// idle daemon whose server is off wakes once a minute, not every 5 s. A
/// request still goes to it when nothing else is up.
const PROBE_BACKOFF_LIMIT: u32 = 12;

fn next_probe_wait(wait: Duration, every: Duration) -> Duration {
    // Saturating: `probe_every` comes from the user's config.
    wait.saturating_mul(2)
        .min(every.saturating_mul(PROBE_BACKOFF_LIMIT))
}

/// Failures that say the endpoint (not the request) is the problem.
fn endpoint_failed(e: &ProviderError) -> bool {
    match e {
        ProviderError::Unreachable { .. } | ProviderError::Timeout { .. } => true,
        ProviderError::Http { status, .. } => *status >= 500,
        ProviderError::Truncated { .. } => true,
        _ => false,
    }
}

/// A server kind where none was probed yet (the default of `LlamaCpp`).
pub fn assumed_kind(info: Option<&ServerInfo>) -> ServerKind {
    info.map_or(ServerKind::LlamaCpp, |i| i.kind)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_wait_doubles_up_to_twelve_times_the_setting() {
        let every = Duration::from_secs(5);
        let mut wait = every;
        let mut waits = vec![wait.as_secs()];
        for _ in 0..6 {
            wait = next_probe_wait(wait, every);
            waits.push(wait.as_secs());
        }
        assert_eq!(waits, [5, 10, 20, 40, 60, 60, 60]);
    }

    #[test]
    fn a_huge_probe_every_does_not_overflow() {
        assert_eq!(next_probe_wait(Duration::MAX, Duration::MAX), Duration::MAX);
    }
}
