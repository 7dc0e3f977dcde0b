//! The agents of one core and their live sessions: which agent an op is
//! for, each agent's state built on its first op, sessions keyed by
//! (agent, session id).
//!
//! An op goes to the agent its submission names; else to the agent of
//! the session it names (the one it is live in, else the one whose
//! workspace holds its transcript); else to `default`.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::session::Unwritten;
use super::shared::Shared;
use super::slots;
use super::start::{self, Common};
use super::worker::{Released, SessionHandle, Work, lock, start_session};
use crate::config::DEFAULT_AGENT;
use crate::protocol::{ErrorEvent, EventKind, Origin, SessionId, TurnEnded};
use crate::sessions::{Transcript, validate_id};

pub(super) struct Agents {
    pub common: Arc<Common>,
    /// Each agent's state, from its first op on.
    states: HashMap<String, Arc<Shared>>,
    sessions: HashMap<(String, SessionId), SessionHandle>,
    /// Sessions let go when idle whose worker ended: what each held
    /// outside its transcript (a handle, with its task and channel, is
    /// some 10 KB more).
    resting: HashMap<(String, SessionId), Unwritten>,
    /// The sessions whose worker let them go, named by the worker as it
    /// ends: the sweep looks at these alone, not at every handle.
    released: Released,
    /// The agent each live session is in (the last one, when a session
    /// id was used with several).
    session_agent: HashMap<SessionId, String>,
}

impl Agents {
    /// The registry, with the agent the core starts on already built.
    pub fn new(common: Arc<Common>, first: Arc<Shared>) -> Self {
        let mut states = HashMap::new();
        states.insert(first.agent.clone(), first);
        Self {
            common,
            states,
            sessions: HashMap::new(),
            resting: HashMap::new(),
            released: Released::default(),
            session_agent: HashMap::new(),
        }
    }

    /// The agent an op is for: `named`, else the session's, else `default`.
    pub fn agent_for(&self, named: Option<&str>, session: &str) -> String {
        if let Some(name) = named {
            return name.to_string();
        }
        if let Some(agent) = self.session_agent.get(session) {
            return agent.clone();
        }
        self.holding_transcript(session)
            .unwrap_or_else(|| DEFAULT_AGENT.to_string())
    }

    /// The agent whose workspace holds `sessions/<id>.jsonl`, if any.
    fn holding_transcript(&self, session: &str) -> Option<String> {
        validate_id(session).ok()?;
        let config = &self.common.config;
        if !config.has_agents() {
            return None;
        }
        config.agent_names().into_iter().find(|name| {
            let workspace = match self.states.get(name) {
                Some(shared) => shared.workspace.clone(),
                None => config.agent_workspace(name),
            };
            Transcript::path(&workspace, session).is_file()
        })
    }

    /// The agent's state, built on its first use; one line saying why not.
    pub fn state(&mut self, name: &str) -> Result<Arc<Shared>, String> {
        if let Some(shared) = self.states.get(name) {
            return Ok(shared.clone());
        }
        let shared = start::agent_state(&self.common, name)?;
        self.states.insert(name.to_string(), shared.clone());
        Ok(shared)
    }

    /// Whether the config declares `name`; else the one line saying so.
    pub fn check(&self, name: &str) -> Result<(), String> {
        match self.common.config.knows_agent(name) {
            true => Ok(()),
            false => Err(start::unknown_agent(&self.common.config, name)),
        }
    }

    /// The session's worker, started when it has none or when the one it
    /// had let the session go (idle) and takes no more work.
    pub fn session(
        &mut self,
        shared: &Arc<Shared>,
        session: &str,
        busy: &Arc<watch::Sender<usize>>,
        shutdown: &CancellationToken,
    ) -> &SessionHandle {
        self.sweep();
        let agent = shared.agent.clone();
        if self.session_agent.get(session) != Some(&agent) {
            self.session_agent
                .insert(session.to_string(), agent.clone());
        }
        let key = (agent, session.to_string());
        let released = self.sessions.get(&key).is_some_and(|h| h.work.is_closed());
        let before = if released {
            self.sessions.remove(&key)
        } else {
            None
        };
        let unwritten = self.resting.remove(&key);
        self.sessions.entry(key).or_insert_with(|| {
            start_session(
                shared,
                session.to_string(),
                busy,
                shutdown,
                (before, unwritten),
                &self.released,
            )
        })
    }

    /// The handles of the workers that let their session go and ended
    /// give way to what their sessions held. Only the sessions their
    /// workers named are looked at: a core with thousands of sessions
    /// pays nothing per op for the ones that are open or already swept.
    fn sweep(&mut self) {
        let named = std::mem::take(&mut *lock(&self.released));
        for (key, task) in named {
            match self.sessions.get(&key) {
                // A successor took its place (it waits for the ended one).
                Some(handle) if handle.task.id() != task => {}
                // Named just before its task returned: the next sweep.
                Some(handle) if !handle.task.is_finished() => {
                    lock(&self.released).push((key, task));
                }
                Some(_) => {
                    let ended = self.sessions.remove(&key).and_then(SessionHandle::ended);
                    if let Some(unwritten) = ended {
                        self.resting.insert(key, unwritten);
                    }
                }
                None => {}
            }
        }
    }

    /// Hands `work` to the session's worker. One that lets its session go
    /// as the work comes hands it back, and the next worker takes it.
    pub fn send(
        &mut self,
        shared: &Arc<Shared>,
        session: &str,
        mut work: Work,
        busy: &Arc<watch::Sender<usize>>,
        shutdown: &CancellationToken,
    ) {
        // A new worker's channel stays open for `session_idle_release`:
        // the second try always lands.
        while let Err(back) = self
            .session(shared, session, busy, shutdown)
            .work
            .send(work)
        {
            work = back.0;
        }
    }

    /// The live session of `agent`, if it has one.
    pub fn live(&self, agent: &str, session: &str) -> Option<&SessionHandle> {
        self.sessions.get(&(agent.to_string(), session.to_string()))
    }

    /// An op that cannot run (an unknown agent, a workspace that cannot be
    /// made) as one `error` line; a message's turn also ends, so whoever
    /// waits for it stops waiting.
    pub fn refuse(&self, agent: &str, session: &str, origin: &Origin, message: String, turn: bool) {
        let config = &self.common.config;
        let bus = self
            .common
            .bus
            .for_agent(config.has_agents().then_some(agent));
        bus.emit(session, origin, EventKind::Error(ErrorEvent { message }));
        if turn {
            let ended = TurnEnded { interrupted: false };
            bus.emit(session, origin, EventKind::TurnEnded(ended));
        }
    }

    /// After `Op::Shutdown`: every session's running turn ends, slots are
    /// saved on every pool, the MCP servers (shared) stop once.
    pub async fn stop(mut self) {
        for (_, handle) in self.sessions.drain() {
            drop(handle.work);
            let _ = handle.task.await;
        }
        // After every turn has stopped, so each slot holds its final state.
        slots::save_all(&self.common.pools(), &self.common.slot_owners).await;
        // No server outlives egirl.
        self.common.mcp.shutdown().await;
    }
}

#[cfg(test)]
mod tests;
