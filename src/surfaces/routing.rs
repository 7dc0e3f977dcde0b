//! Which agent a bot's message goes to: the config's `[[bindings]]`,
//! matched per message (docs/agents.md). Without `[agents]` every message
//! goes out as it always did, naming no agent, so the wire and the
//! sessions stay what they were.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::agent::AgentHandle;
use crate::config::{BindingChannel, BindingTarget, Config};
use crate::protocol::{AgentName, Event, EventKind, Op};

/// The bindings a bot routes by; cheap to clone.
#[derive(Clone, Default)]
pub struct Routing {
    /// The config, when it declares agents (None: nothing to route).
    config: Option<Arc<Config>>,
}

impl Routing {
    pub fn new(config: &Config) -> Self {
        Self {
            config: config.has_agents().then(|| Arc::new(config.clone())),
        }
    }

    /// The agent a message from `target` on `channel` goes to; None when
    /// the config declares no agents (the core's only agent takes it).
    pub fn agent(&self, channel: BindingChannel, target: &BindingTarget) -> Option<AgentName> {
        let config = self.config.as_ref()?;
        Some(config.bound_agent(channel, target).to_string())
    }
}

/// A bot's turns in flight are per agent and session: two agents may
/// answer in one channel (bindings by user), each in its own session of
/// the channel's id. Events name the agent whenever the config has agents.
pub type TurnKey = (Option<AgentName>, String);

pub fn turn_key(agent: Option<&str>, session: &str) -> TurnKey {
    (agent.map(str::to_string), session.to_string())
}

/// Sends `op` for `agent` (None: as a config without agents does).
pub fn submit(handle: &AgentHandle, agent: Option<&str>, op: Op) -> bool {
    match agent {
        Some(agent) => handle.submit_to(agent, op),
        None => handle.submit(op),
    }
}

/// Where a picture for `agent` is stored: that agent's image store (the
/// default's for a config without agents).
pub fn images(handle: &AgentHandle, agent: Option<&str>) -> crate::images::Store {
    agent
        .and_then(|agent| handle.images_for(agent))
        .unwrap_or_else(|| handle.images.clone())
}

/// The agent each approval a bot posted belongs to, so that the answer
/// goes back to that agent's core (approval ids are unique, agents not).
#[derive(Default)]
pub struct ApprovalAgents {
    agents: Mutex<HashMap<String, AgentName>>,
}

impl ApprovalAgents {
    /// Notes whose approval `event` asks for (events without an agent need no note).
    pub fn note(&self, event: &Event) {
        if let (EventKind::ApprovalRequest(request), Some(agent)) = (&event.kind, &event.agent) {
            self.lock().insert(request.id.clone(), agent.clone());
        }
    }

    /// The agent whose approval `id` is, forgotten (it has been answered).
    pub fn take(&self, id: &str) -> Option<AgentName> {
        self.lock().remove(id)
    }

    /// The agent whose approval `id` is.
    pub fn of(&self, id: &str) -> Option<AgentName> {
        self.lock().get(id).cloned()
    }

    /// Whether a user whose messages go to `agent` (None: the config
    /// declares no agents) may answer approval `id`: only one its agent
    /// asked for. Two agents may answer in one channel (bindings by
    /// user): a user bound to `home` (no commands) must not approve
    /// `work`'s command.
    pub fn answerable_by(&self, id: &str, agent: Option<&str>) -> bool {
        self.of(id).as_deref() == agent
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, AgentName>> {
        self.agents
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        crate::config::parse(text, std::path::Path::new("egirl.toml")).unwrap()
    }

    #[test]
    fn a_user_answers_only_the_approvals_of_the_agent_they_reach() {
        let agents = ApprovalAgents::default();
        let request = crate::protocol::ApprovalRequest {
            id: "ap-1".into(),
            tool: "exec".into(),
            command: "rm -rf build".into(),
            cwd: ".".into(),
            rule: None,
            rule_covers: None,
            sandbox: None,
            escalation: None,
        };
        agents.note(&Event {
            agent: Some("work".into()),
            submission: None,
            session: "discord-7".into(),
            origin: crate::protocol::Origin::Discord("7".into()),
            kind: EventKind::ApprovalRequest(request),
        });
        assert!(agents.answerable_by("ap-1", Some("work")));
        assert!(!agents.answerable_by("ap-1", Some("home")));
        // Without agents nothing is noted and everyone answers as before.
        assert!(agents.answerable_by("ap-2", None));
        assert!(!agents.answerable_by("ap-2", Some("home")));
    }

    #[test]
    fn without_agents_nothing_is_routed() {
        let routing = Routing::new(&config(""));
        let target = BindingTarget {
            chat_id: Some("5".into()),
            ..BindingTarget::default()
        };
        assert_eq!(routing.agent(BindingChannel::Telegram, &target), None);
    }

    #[test]
    fn the_most_specific_binding_picks_the_agent() {
        let routing = Routing::new(&config(
            "[agents.work]\n[agents.home]\n\
             [[bindings]]\nagent = \"work\"\nchannel = \"discord\"\nguild = 1\n\
             [[bindings]]\nagent = \"home\"\nchannel = \"discord\"\nguild = 1\nchannel_id = 7\n",
        ));
        let mut target = BindingTarget {
            guild: Some("1".into()),
            channel_id: Some("6".into()),
            user: Some("42".into()),
            ..BindingTarget::default()
        };
        assert_eq!(
            routing.agent(BindingChannel::Discord, &target).as_deref(),
            Some("work")
        );
        target.channel_id = Some("7".into());
        assert_eq!(
            routing.agent(BindingChannel::Discord, &target).as_deref(),
            Some("home")
        );
        target.guild = None;
        assert_eq!(
            routing.agent(BindingChannel::Discord, &target).as_deref(),
            Some("default")
        );
    }
}
