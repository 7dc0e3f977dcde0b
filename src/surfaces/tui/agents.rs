//! Several agents in the TUI (docs/agents.md): which agent each session
//! belongs to (from the events' `agent`, or the agent a new session was
//! made for), which agent the input goes to, `/agent NAME` and its picker,
//! and every submission addressed to its session's agent. With no
//! `[agents]` in the config none of this shows and no submission names an
//! agent.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Effect, Overlay};
use super::conversation::Level;
use crate::config::{BindingChannel, BindingTarget, Config, DEFAULT_AGENT};
use crate::protocol::{AgentName, Op, Origin, SessionId};

/// The one line `/agent` says when the config declares no agents.
pub const ONE_AGENT: &str = "this config declares one agent (default); add an [agents.NAME] table to egirl.toml for more (see docs/agents.md)";

/// What the config says of its agents, as the TUI needs it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentDirectory {
    /// Every agent, `default` first; empty: the config declares no
    /// `[agents]` (a daemon's list comes from its status instead).
    pub names: Vec<AgentName>,
    /// Each agent's workspace (its `sessions/`, cron jobs, usage log).
    pub workspaces: BTreeMap<AgentName, PathBuf>,
    /// The agent the TUI opens on (the `tui` binding's).
    pub tui: AgentName,
    /// Whose jobs `/cron` lists before `/agent` picks one.
    pub cron: AgentName,
}

impl AgentDirectory {
    pub fn from_config(config: &Config) -> Self {
        if !config.has_agents() {
            return Self::default();
        }
        let names = config.agent_names();
        let workspaces = names
            .iter()
            .map(|name| (name.clone(), config.agent_workspace(name)))
            .collect();
        let target = BindingTarget::default();
        Self {
            workspaces,
            tui: config.bound_agent(BindingChannel::Tui, &target).to_string(),
            cron: config
                .bound_agent(BindingChannel::Cron, &target)
                .to_string(),
            names,
        }
    }
}

/// The agents as the running TUI keeps them.
#[derive(Clone, Debug, Default)]
pub struct Agents {
    pub directory: AgentDirectory,
    /// The agent of each session the TUI has seen or made.
    by_session: HashMap<SessionId, AgentName>,
    /// `/agent` chose the agent (else `/cron` lists the cron binding's).
    pub chosen: bool,
    /// The open `/agent` picker: the selected row.
    pub picker: usize,
}

impl Agents {
    /// Whether agents show at all (the config or the daemon declares them).
    pub fn enabled(&self) -> bool {
        !self.directory.names.is_empty()
    }

    pub fn names(&self) -> &[AgentName] {
        &self.directory.names
    }

    pub fn knows(&self, name: &str) -> bool {
        self.directory.names.iter().any(|n| n == name)
    }

    /// The agent a session belongs to, when known.
    pub fn of(&self, session: &str) -> Option<&str> {
        self.by_session.get(session).map(String::as_str)
    }

    /// Records a session's agent; true when that changed what it shows.
    pub fn note(&mut self, session: &str, agent: &str) -> bool {
        if self.of(session) == Some(agent) {
            return false;
        }
        self.by_session
            .insert(session.to_string(), agent.to_string());
        true
    }

    /// A stable color slot per agent: its place in the config's list
    /// (`default` first), else one derived from its name.
    pub fn color_slot(&self, agent: &str) -> usize {
        self.directory
            .names
            .iter()
            .position(|n| n == agent)
            .unwrap_or_else(|| agent.bytes().map(usize::from).sum())
    }

    /// What a header shows beside the origin: the session's agent and its
    /// color slot; `None` without agents.
    pub fn tag(&self, session: &str) -> Option<(&str, usize)> {
        if !self.enabled() {
            return None;
        }
        let agent = self.of(session)?;
        Some((agent, self.color_slot(agent)))
    }

    /// `<workspace>/sessions` of `agent`, when its workspace is known.
    pub fn sessions_dir(&self, agent: &str) -> Option<PathBuf> {
        self.directory
            .workspaces
            .get(agent)
            .map(|w| w.join("sessions"))
    }

    /// The list the TUI got from the daemon's status (attached): its
    /// agents, with the workspaces this config knows for them.
    pub fn set_names(&mut self, names: Vec<AgentName>) -> bool {
        if names.is_empty() || names == self.directory.names {
            return false;
        }
        if !names.contains(&self.directory.tui) {
            self.directory.tui = DEFAULT_AGENT.to_string();
        }
        if !names.contains(&self.directory.cron) {
            self.directory.cron = DEFAULT_AGENT.to_string();
        }
        self.directory.names = names;
        true
    }
}

impl App {
    /// Takes the config's agents (`declared`: the core's, which win when
    /// attached); the first session is the `tui` binding's agent's.
    pub fn set_agents(&mut self, directory: AgentDirectory, declared: Vec<AgentName>) {
        self.agents.directory = directory;
        self.agents.set_names(declared);
        let start = self.agents.directory.tui.clone();
        if self.agents.enabled() && self.agents.of(&self.session).is_none() {
            let session = self.session.clone();
            self.agents.note(&session, &start);
        }
        self.epoch += 1;
    }

    /// A session's agent, learned from its events: its headers name it
    /// and its ops go to it.
    pub(super) fn note_agent(&mut self, session: &str, agent: Option<&str>) {
        if let Some(agent) = agent
            && self.agents.note(session, agent)
        {
            self.epoch += 1;
        }
    }

    /// The daemon's agents (its status): they show from now on; true
    /// when that changed the screen.
    pub fn agents_declared(&mut self, names: Vec<AgentName>) -> bool {
        if !self.agents.set_names(names) {
            return false;
        }
        let (session, start) = (self.session.clone(), self.agents.directory.tui.clone());
        if self.agents.of(&session).is_none() {
            self.agents.note(&session, &start);
        }
        self.epoch += 1;
        true
    }

    /// The first session's transcript (`--session ID`): in the start
    /// agent's workspace, else another agent's (the session is then that
    /// agent's), else the one workspace's.
    pub fn find_transcript(&mut self) -> Option<PathBuf> {
        let session = self.session.clone();
        let file = format!("{session}.jsonl");
        let start = self.current_agent().map(str::to_string);
        let mut agents: Vec<AgentName> = start.into_iter().collect();
        agents.extend(self.agents.names().iter().cloned());
        for agent in agents {
            let Some(path) = self.agents.sessions_dir(&agent).map(|d| d.join(&file)) else {
                continue;
            };
            if path.is_file() {
                self.agents.note(&session, &agent);
                return Some(path);
            }
        }
        self.transcript_of(&session).filter(|p| p.is_file())
    }

    /// The agent the input's session belongs to (`None` without agents).
    pub fn current_agent(&self) -> Option<&str> {
        if !self.agents.enabled() {
            return None;
        }
        Some(
            self.agents
                .of(&self.session)
                .unwrap_or(&self.agents.directory.tui),
        )
    }

    /// Whose jobs `/cron` lists: the current agent once `/agent` chose
    /// one, else the `cron` binding's.
    pub fn cron_agent(&self) -> Option<&str> {
        if !self.agents.enabled() {
            return None;
        }
        match self.agents.chosen {
            true => self.current_agent(),
            false => Some(&self.agents.directory.cron),
        }
    }

    /// `<workspace>/sessions` where `session`'s transcript is: its agent's
    /// (the current agent's for a session not seen yet), else the one
    /// workspace's.
    pub fn sessions_dir_of(&self, session: &str) -> Option<PathBuf> {
        if self.agents.enabled() {
            let agent = self.agents.of(session).or(self.current_agent());
            if let Some(dir) = agent.and_then(|a| self.agents.sessions_dir(a)) {
                return Some(dir);
            }
        }
        self.sessions_dir.clone()
    }

    /// `session`'s transcript file (it may not exist).
    pub fn transcript_of(&self, session: &str) -> Option<PathBuf> {
        self.sessions_dir_of(session)
            .map(|dir| dir.join(format!("{session}.jsonl")))
    }

    /// Names, on each submission that names none, the agent of the
    /// session its op is for. No agents: submissions go as they are.
    pub fn address(&self, mut effects: Vec<Effect>) -> Vec<Effect> {
        if !self.agents.enabled() {
            return effects;
        }
        for effect in &mut effects {
            let Effect::Submit(submission) = effect else {
                continue;
            };
            if submission.agent.is_some() {
                continue;
            }
            let session = match &submission.op {
                Op::UserMessage { session, .. }
                | Op::Interrupt { session }
                | Op::Command { session, .. } => Some(session.clone()),
                // `approval_key` names the asking session's agent.
                Op::ApprovalDecision { .. } | Op::FileAnswer { .. } | Op::Shutdown => None,
            };
            submission.agent = match session {
                Some(session) => self
                    .agents
                    .of(&session)
                    .or(self.current_agent())
                    .map(str::to_string),
                None => None,
            };
        }
        effects
    }

    /// `op` for the agent of `session` (an approval: the session that
    /// asked); without agents, for the session's own.
    pub(super) fn submission_for(&self, session: Option<&str>, op: Op) -> Effect {
        let agent = session.and_then(|s| self.agents.of(s));
        match agent {
            Some(agent) if self.agents.enabled() => {
                Effect::Submit(crate::protocol::Submission::to_agent(agent, op))
            }
            _ => Effect::submit(op),
        }
    }

    /// `/agent NAME`: a new session of NAME takes the input; `/agent`
    /// alone opens the picker. An unknown name changes nothing.
    pub(super) fn agent_command(&mut self, name: &str) -> Vec<Effect> {
        if !self.agents.enabled() {
            self.notice(Level::Info, ONE_AGENT);
            return Vec::new();
        }
        if name.is_empty() {
            let current = self.current_agent().unwrap_or(DEFAULT_AGENT).to_string();
            self.agents.picker = self
                .agents
                .names()
                .iter()
                .position(|n| *n == current)
                .unwrap_or(0);
            self.overlay = Some(Overlay::Agents);
            return Vec::new();
        }
        if !self.agents.knows(name) {
            // Back in the box to correct, as an unknown command stays.
            if self.input.is_empty() {
                self.input.insert(&format!("/agent {name}"));
            }
            let known = self.agents.names().join(", ");
            self.notice(
                Level::Warning,
                format!("unknown agent {name}: the agents are {known}"),
            );
            return Vec::new();
        }
        self.switch_agent(name);
        Vec::new()
    }

    /// A new TUI session of `agent` takes the input.
    fn switch_agent(&mut self, agent: &str) {
        let id = crate::sessions::new_id("tui");
        self.sessions
            .insert(id.clone(), super::sessions::SessionInfo::new(Origin::Tui));
        self.agents.note(&id, agent);
        self.agents.chosen = true;
        self.session = id.clone();
        self.epoch += 1;
        self.conversation_scroll.end();
        self.show_meter(Default::default());
        self.notice(
            Level::Info,
            format!("input goes to agent {agent} (new session {id})"),
        );
    }

    /// A key while the `/agent` picker is open: arrows move, Enter
    /// switches, Esc closes.
    pub(super) fn agent_picker_key(&mut self, key: KeyEvent) {
        let count = self.agents.names().len();
        if super::rewind::move_selection(&mut self.agents.picker, count, key.code) {
            return;
        }
        match key.code {
            KeyCode::Enter => {
                self.overlay = None;
                let picked = self.agents.names().get(self.agents.picker).cloned();
                if let Some(agent) = picked {
                    self.switch_agent(&agent);
                }
            }
            KeyCode::Esc | KeyCode::Char('q') => self.overlay = None,
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "agents_tests.rs"]
mod tests;
