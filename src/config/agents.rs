//! `[agents.NAME]` and `[[bindings]]`: several agents in one process, each
//! with its own workspace, and which agent each channel talks to.
//!
//! Without an `[agents]` table there is one agent, `default`, whose
//! workspace is `[workspace] path`: every config written before agents
//! existed means what it meant. With one, `default` is still there (the
//! base config; `[agents.default]` may change it) and each named agent is
//! the base config with its table's settings on top ([`Config::for_agent`]).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Config, CronConfig, ExecConfig, HeartbeatConfig, LocalConfig, expand_home};

/// The agent a config without `[agents]` has, and where unbound traffic goes.
pub const DEFAULT_AGENT: &str = "default";

/// One `[agents.NAME]` table: what differs from the base config. A key
/// left out keeps the base config's value.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentEntry {
    /// Its workspace; default `<parent of [workspace] path>/agents/NAME/workspace`
    /// (never inside another agent's workspace), created from the templates.
    pub workspace: Option<String>,
    /// Which local role answers its turns: "local" (the `[local]` model,
    /// the default) or "fast" (`[local.fast]`). `[agents.NAME.local]`
    /// gives it endpoints of its own instead.
    pub model: Option<String>,
    /// Its own `[local]` (endpoints, model, window); wins over `model`.
    pub local: Option<LocalConfig>,
    /// Whether its turns may run on or escalate to the remote providers
    /// (default: as the base config allows).
    pub remote: Option<bool>,
    /// Its tool policy (`[agents.NAME.tools]`).
    pub tools: AgentTools,
    /// The `[[mcp.servers]]` it may use, by name (default: all of them).
    /// A server several agents use is started once.
    pub mcp: Option<Vec<String>>,
    /// `[agents.NAME.skills] dirs`: skills folders after its own `skills/`.
    pub skills: Option<AgentSkills>,
    pub heartbeat: Option<HeartbeatConfig>,
    pub cron: Option<CronConfig>,
    /// The environment variable holding the secret of its webhook route
    /// (`POST /api/webhook/NAME`); default `EGIRL_WEBHOOK_SECRET_<NAME>`
    /// (upper case, `-` as `_`), and `EGIRL_WEBHOOK_SECRET` for `default`.
    pub webhook_secret_env: Option<String>,
}

/// `[agents.NAME.tools]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentTools {
    /// Only these tools are offered (empty: every tool the base offers).
    pub allow: Vec<String>,
    /// Never offered, whatever `allow` says (e.g. ["exec"]).
    pub deny: Vec<String>,
    /// Its own `[tools.exec]` (approval, allow rules, sandbox).
    pub exec: Option<ExecConfig>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentSkills {
    pub dirs: Vec<String>,
}

/// Where a message comes from, as bindings match it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BindingChannel {
    Discord,
    Telegram,
    /// `POST /api/webhook` without an agent in the path.
    Webhook,
    /// The TUI's first session, and `egirl -m` without `--agent`.
    Tui,
    /// Whose jobs `/cron` lists before `/agent` picks one (a job always
    /// runs as the agent whose workspace holds it).
    Cron,
}

impl BindingChannel {
    pub fn as_str(self) -> &'static str {
        match self {
            BindingChannel::Discord => "discord",
            BindingChannel::Telegram => "telegram",
            BindingChannel::Webhook => "webhook",
            BindingChannel::Tui => "tui",
            BindingChannel::Cron => "cron",
        }
    }
}

/// One `[[bindings]]` entry: messages matching every field it sets go to
/// `agent`. Ids are strings or integers in the file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Binding {
    pub agent: String,
    pub channel: BindingChannel,
    /// A Discord server.
    #[serde(default, deserialize_with = "super::duration::string_or_int_option")]
    pub guild: Option<String>,
    /// A Discord channel (a DM's channel included).
    #[serde(default, deserialize_with = "super::duration::string_or_int_option")]
    pub channel_id: Option<String>,
    /// A Telegram chat (negative for groups).
    #[serde(default, deserialize_with = "super::duration::string_or_int_option")]
    pub chat_id: Option<String>,
    /// The sender (Discord or Telegram user id).
    #[serde(default, deserialize_with = "super::duration::string_or_int_option")]
    pub user: Option<String>,
}

/// What a binding is matched against: one incoming message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BindingTarget {
    pub guild: Option<String>,
    pub channel_id: Option<String>,
    pub chat_id: Option<String>,
    pub user: Option<String>,
}

impl Binding {
    /// The fields it sets besides `channel`, as (name, value).
    fn fields(&self) -> [(&'static str, Option<&str>); 4] {
        [
            ("guild", self.guild.as_deref()),
            ("channel_id", self.channel_id.as_deref()),
            ("chat_id", self.chat_id.as_deref()),
            ("user", self.user.as_deref()),
        ]
    }

    fn target_field<'a>(target: &'a BindingTarget, name: &str) -> Option<&'a str> {
        match name {
            "guild" => target.guild.as_deref(),
            "channel_id" => target.channel_id.as_deref(),
            "chat_id" => target.chat_id.as_deref(),
            _ => target.user.as_deref(),
        }
    }

    /// How many fields it sets: the most specific matching binding wins.
    pub fn specificity(&self) -> usize {
        self.fields().iter().filter(|(_, v)| v.is_some()).count()
    }

    pub fn matches(&self, channel: BindingChannel, target: &BindingTarget) -> bool {
        self.channel == channel
            && self.fields().iter().all(|(name, value)| match value {
                None => true,
                Some(v) => Self::target_field(target, name) == Some(v),
            })
    }

    /// Whether one message could match both with equal specificity (so
    /// only their order decides): `doctor` flags it.
    pub fn overlaps(&self, other: &Binding) -> bool {
        self.channel == other.channel
            && self.specificity() == other.specificity()
            && self
                .fields()
                .iter()
                .zip(other.fields().iter())
                .all(|((_, a), (_, b))| a.is_none() || b.is_none() || a == b)
    }

    /// `discord guild=1 user=2`, as `doctor` and errors show it.
    pub fn describe(&self) -> String {
        let mut text = self.channel.as_str().to_string();
        for (name, value) in self.fields() {
            if let Some(value) = value {
                text.push_str(&format!(" {name}={value}"));
            }
        }
        text
    }
}

/// A problem `doctor` reports about the bindings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindingProblem {
    /// Names an agent no `[agents.NAME]` table declares.
    Dangling { index: usize, agent: String },
    /// Bindings `first` and `second` can match the same message with the
    /// same specificity; `first` wins (it comes first).
    Overlap { first: usize, second: usize },
}

impl std::fmt::Display for BindingProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BindingProblem::Dangling { index, agent } => write!(
                f,
                "bindings[{index}] names agent `{agent}`, which no [agents.{agent}] table declares"
            ),
            BindingProblem::Overlap { first, second } => write!(
                f,
                "bindings[{first}] and bindings[{second}] match the same messages; bindings[{first}] wins"
            ),
        }
    }
}

impl Config {
    /// The agents, `default` first, then the `[agents.NAME]` tables by name.
    pub fn agent_names(&self) -> Vec<String> {
        let mut names = vec![DEFAULT_AGENT.to_string()];
        names.extend(
            self.agents
                .keys()
                .filter(|name| name.as_str() != DEFAULT_AGENT)
                .cloned(),
        );
        names
    }

    /// Whether the config declares agents (events then name theirs).
    pub fn has_agents(&self) -> bool {
        !self.agents.is_empty()
    }

    pub fn knows_agent(&self, name: &str) -> bool {
        name == DEFAULT_AGENT || self.agents.contains_key(name)
    }

    /// The agent's workspace as configured (`~` expanded; it may not exist).
    pub fn agent_workspace(&self, name: &str) -> PathBuf {
        let base = expand_home(&self.workspace.path);
        match self.agents.get(name).and_then(|a| a.workspace.as_deref()) {
            Some(path) => expand_home(path),
            None if name == DEFAULT_AGENT => base,
            None => base
                .parent()
                .unwrap_or(Path::new("."))
                .join("agents")
                .join(name)
                .join("workspace"),
        }
    }

    /// The variable holding the agent's webhook secret.
    pub fn webhook_secret_env(&self, name: &str) -> String {
        if let Some(var) = self
            .agents
            .get(name)
            .and_then(|a| a.webhook_secret_env.clone())
        {
            return var;
        }
        if name == DEFAULT_AGENT {
            return "EGIRL_WEBHOOK_SECRET".into();
        }
        format!(
            "EGIRL_WEBHOOK_SECRET_{}",
            name.to_ascii_uppercase().replace('-', "_")
        )
    }

    /// The agent's whole config: the base with its table on top, and
    /// `[workspace] path` set to its workspace. `None` for an unknown name.
    pub fn for_agent(&self, name: &str) -> Option<Config> {
        if !self.knows_agent(name) {
            return None;
        }
        let mut config = self.clone();
        config.workspace.path = self.agent_workspace(name).display().to_string();
        let Some(entry) = self.agents.get(name) else {
            return Some(config);
        };
        if let Some(local) = &entry.local {
            config.local = local.clone();
        } else if entry.model.as_deref() == Some("fast")
            && let Some(fast) = self.local.fast_role()
        {
            config.local = fast;
        }
        if entry.remote == Some(false) {
            config.remote.anthropic = None;
            config.remote.openai = None;
            config.remote.azure = None;
        }
        if !entry.tools.allow.is_empty() {
            config.tools.allow = entry.tools.allow.clone();
        }
        config.tools.deny.extend(entry.tools.deny.iter().cloned());
        if let Some(exec) = &entry.tools.exec {
            config.tools.exec = exec.clone();
        }
        if let Some(servers) = &entry.mcp {
            config.mcp.servers.retain(|name, _| servers.contains(name));
        }
        if let Some(skills) = &entry.skills {
            config.skills.dirs = skills.dirs.clone();
        }
        if let Some(heartbeat) = &entry.heartbeat {
            config.heartbeat = heartbeat.clone();
        }
        if let Some(cron) = &entry.cron {
            config.cron = cron.clone();
        }
        Some(config)
    }

    /// The agent a message on `channel` from `target` goes to: the most
    /// specific matching binding (the first of equals), else `default`.
    pub fn bound_agent(&self, channel: BindingChannel, target: &BindingTarget) -> &str {
        let mut best: Option<&Binding> = None;
        for binding in &self.bindings {
            if binding.matches(channel, target)
                && best.is_none_or(|b| binding.specificity() > b.specificity())
            {
                best = Some(binding);
            }
        }
        best.map_or(DEFAULT_AGENT, |b| b.agent.as_str())
    }

    /// Dangling and overlapping bindings, in file order.
    pub fn binding_problems(&self) -> Vec<BindingProblem> {
        let mut problems = Vec::new();
        for (index, binding) in self.bindings.iter().enumerate() {
            if !self.knows_agent(&binding.agent) {
                problems.push(BindingProblem::Dangling {
                    index,
                    agent: binding.agent.clone(),
                });
            }
        }
        for (first, a) in self.bindings.iter().enumerate() {
            for (offset, b) in self.bindings[first + 1..].iter().enumerate() {
                if a.overlaps(b) {
                    problems.push(BindingProblem::Overlap {
                        first,
                        second: first + 1 + offset,
                    });
                }
            }
        }
        problems
    }
}

/// Checks serde cannot express: names, roles, and no workspace inside
/// another's. Returns the dotted key and the problem.
pub fn check(config: &Config) -> Result<(), (String, String)> {
    for (name, entry) in &config.agents {
        let valid = !name.is_empty()
            && name.len() <= 32
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_'));
        if !valid {
            return Err((
                format!("agents.{name}"),
                "an agent's name is 1-32 of a-z, 0-9, `-` and `_`".into(),
            ));
        }
        if let Some(model) = entry.model.as_deref()
            && !matches!(model, "local" | "fast")
        {
            return Err((
                format!("agents.{name}.model"),
                format!("`{model}` is not a local role: use \"local\" or \"fast\""),
            ));
        }
        // Only a secret's name keeps its value out of commands' environment
        // and out of what is redacted: `WORK_HOOK` would hand the secret
        // to the model's `env`.
        if let Some(var) = entry.webhook_secret_env.as_deref()
            && !super::secrets::is_secret_name(var)
        {
            return Err((
                format!("agents.{name}.webhook_secret_env"),
                format!(
                    "`{var}` is not named like a secret (EGIRL_WEBHOOK_SECRET_*, or ending in _SECRET, _TOKEN, _KEY…): commands would see it and it would not be redacted"
                ),
            ));
        }
        if entry.model.as_deref() == Some("fast")
            && config.local.fast.is_none()
            && entry.local.is_none()
        {
            return Err((
                format!("agents.{name}.model"),
                "\"fast\" needs a [local.fast] section".into(),
            ));
        }
    }
    let names = config.agent_names();
    // One agent's secret is never another's: a shared variable would let
    // `POST /api/webhook/home` in with work's secret.
    for (i, a) in names.iter().enumerate() {
        let var = config.webhook_secret_env(a);
        if let Some(b) = names[..i]
            .iter()
            .find(|b| config.webhook_secret_env(b) == var)
        {
            return Err((
                format!("agents.{a}.webhook_secret_env"),
                format!(
                    "`{var}` is agent `{b}`'s webhook secret too: each agent's must be its own"
                ),
            ));
        }
    }
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            let (wa, wb) = (config.agent_workspace(a), config.agent_workspace(b));
            let (inner, outer, key) = if wa.starts_with(&wb) {
                (a, b, a)
            } else if wb.starts_with(&wa) {
                (b, a, b)
            } else {
                continue;
            };
            return Err((
                format!("agents.{key}.workspace"),
                format!(
                    "agent `{inner}`'s workspace lies inside agent `{outer}`'s: each agent's must be its own"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
