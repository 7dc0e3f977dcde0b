//! The local models as the core sees them: a role (`[local]` or
//! `[local.fast]`), its pool of endpoints, and what the window knows about
//! its server. Everything that asks a local model goes through
//! [`Shared::local_chat`], so the pool picks the endpoint.

use std::sync::atomic::Ordering;

use tokio_util::sync::CancellationToken;

use super::shared::{ServerLimits, Shared};
use crate::config::ToolFormat;
use crate::protocol::Origin;
use crate::providers::endpoints::{Failover, LocalRole, Pool, Served};
use crate::providers::llamacpp::LlamaCpp;
use crate::providers::{ChatRequest, ProviderError, StreamChunk};
use crate::routing::{Category, DecidedBy, Decision};

impl Shared {
    /// The pool of a role; `Fast` is the main pool when `[local.fast]` is unset.
    pub fn pool(&self, role: LocalRole) -> &Pool {
        match (role, &self.fast) {
            (LocalRole::Fast, Some(fast)) => fast,
            _ => &self.main,
        }
    }

    /// The role that takes classification and compaction summaries:
    /// `Fast` when `[local.fast]` is configured, else `Main`.
    pub fn fast_role(&self) -> LocalRole {
        match self.fast {
            Some(_) => LocalRole::Fast,
            None => LocalRole::Main,
        }
    }

    /// The configured model name of a role.
    pub fn role_model(&self, role: LocalRole) -> &str {
        match (role, &self.fast_config) {
            (LocalRole::Fast, Some(fast)) => &fast.model,
            _ => &self.config.local.model,
        }
    }

    /// The role's server limits, probed once (see `server_kind`).
    pub async fn limits_for(&self, role: LocalRole) -> ServerLimits {
        let (cell, config) = match (role, &self.fast_config) {
            (LocalRole::Fast, Some(fast)) => (&self.fast_limits, fast),
            _ => (&self.limits, &self.config.local),
        };
        let (configured, format) = (config.context_length, config.tool_format);
        *cell
            .get_or_init(|| async {
                let Some(info) = self.pool(role).discover().await else {
                    tracing::info!("no local server answered the probes; using context_length");
                    return ServerLimits {
                        n_ctx: configured,
                        total_slots: 1,
                        tools_in_prompt: false,
                        vision: config.vision,
                    };
                };
                tracing::info!(
                    role = role.as_str(),
                    kind = info.kind.name(),
                    n_ctx = info.n_ctx,
                    "local server found"
                );
                if role == LocalRole::Main && !info.kind.exact_counts() {
                    self.server_counts_tokens.store(false, Ordering::Relaxed);
                }
                let tools_in_prompt =
                    format == ToolFormat::Auto && info.supports_tools == Some(false);
                if tools_in_prompt {
                    tracing::info!(
                        "the server's chat template ignores native tools; sending them in the system prompt (qwen3 format)"
                    );
                }
                ServerLimits {
                    n_ctx: info.n_ctx.map_or(configured, |n| n.min(configured)),
                    total_slots: info.total_slots.unwrap_or(1).max(1),
                    tools_in_prompt,
                    vision: config.vision || info.vision == Some(true),
                }
            })
            .await
    }

    /// The role's server as its requests go out (tools in the system prompt
    /// when its chat template ignores native ones), for counting a prompt
    /// exactly as it will be sent.
    pub async fn counting_server(&self, role: LocalRole, session: Option<&str>) -> LlamaCpp {
        let limits = self.limits_for(role).await;
        let server = self.pool(role).server_for(session);
        if limits.tools_in_prompt {
            server.with_tool_format(ToolFormat::Qwen3)
        } else {
            server
        }
    }

    /// One request to a local role: the pool picks the endpoint (the
    /// session's own, or another when it is down; `failover` hears of it).
    pub async fn local_chat(
        &self,
        role: LocalRole,
        session: Option<&str>,
        req: &ChatRequest,
        cancel: &CancellationToken,
        on_chunk: &mut (dyn FnMut(StreamChunk) + Send),
        failover: &mut (dyn FnMut(Failover) + Send),
    ) -> Result<Served, ProviderError> {
        let limits = self.limits_for(role).await;
        let format = limits.tools_in_prompt.then_some(ToolFormat::Qwen3);
        self.pool(role)
            .chat(session, format, req, cancel, on_chunk, failover)
            .await
    }
}

/// Which local model a turn goes to: heartbeat turns and (with `[routing]
/// fast_for_quick`) quick ones to `[local.fast]`, the rest to `[local]`.
/// A session whose cache is on the main model keeps its follow-ups there
/// unless they are clearly quick (a greeting, a short thanks): moving
/// would drop the warm cache and the depth the session had. The second
/// value says why, for the routing event, when the session decided it.
pub(super) fn turn_role(
    shared: &Shared,
    origin: &Origin,
    decision: &Decision,
    message: &str,
    cache: Option<LocalRole>,
) -> (LocalRole, Option<&'static str>) {
    if shared.fast.is_none() {
        return (LocalRole::Main, None);
    }
    if *origin == Origin::Heartbeat {
        return (LocalRole::Fast, None);
    }
    let quick = matches!(
        decision.category,
        Category::Greeting | Category::Chat | Category::QuickFact
    );
    // `/local` asks for the main model.
    if !shared.config.routing.fast_for_quick || !quick || decision.decided_by == DecidedBy::Forced {
        return (LocalRole::Main, None);
    }
    if cache == Some(LocalRole::Main) && !clearly_quick(decision, message) {
        return (LocalRole::Main, Some(STAYS_WITH_CACHE));
    }
    (LocalRole::Fast, None)
}

/// What the routing event adds when a quick-looking follow-up stays on
/// the main model.
pub(super) const STAYS_WITH_CACHE: &str = "stays on local: the session's cache is there";

/// Most words an acknowledgment ("thanks, that works!") has.
const ACK_WORDS: usize = 6;

/// A greeting, or chat short enough to be an acknowledgment: such a turn
/// needs neither the session's depth nor its cache.
fn clearly_quick(decision: &Decision, message: &str) -> bool {
    match decision.category {
        Category::Greeting => true,
        Category::Chat => message.split_whitespace().count() <= ACK_WORDS,
        _ => false,
    }
}

/// The notice a session's move to another endpoint gets.
pub(super) fn failover_notice(role: LocalRole, moved: &Failover) -> String {
    format!(
        "{} endpoint {} failed ({}); this session continues on {}",
        role.as_str(),
        moved.from,
        moved.why,
        moved.to
    )
}

/// The local role of a turn no pin decides, the session's cache
/// considered; the routing reason says when the cache kept it.
pub(super) fn routed_role(
    shared: &Shared,
    origin: &Origin,
    decision: &mut Decision,
    typed: &str,
    cache: Option<LocalRole>,
) -> LocalRole {
    let (role, why) = turn_role(shared, origin, decision, typed, cache);
    if let Some(why) = why {
        decision.reason = format!("{}; {why}", decision.reason);
    }
    role
}
