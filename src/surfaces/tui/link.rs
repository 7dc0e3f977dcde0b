//! The TUI attached to a core in another process (`egirl` beside a
//! running `egirl serve`): the status line names the process it is
//! attached to and says when the connection is lost; after the server
//! resynchronised the stream (the view missed events), the sessions shown
//! are reloaded from their transcripts, which the core keeps on disk.

use tokio::sync::{mpsc, watch};

use super::app::App;
use super::conversation::Level;
use super::driver::AppEvent;
use super::sessions::SessionInfo;
use crate::link::LinkState;
use crate::protocol::Origin;
use crate::protocol::wire::LiveSession;

/// What the status line says about the link to the core.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum LinkLine {
    /// In process: nothing to say.
    #[default]
    InProcess,
    /// `attached: serve pid 1234`.
    Attached(String),
    /// `connection lost, retrying (attempt N)`.
    Retrying(u32),
    /// The server refused this client for good: why.
    Closed(String),
}

impl LinkLine {
    /// The status line's words (empty in process).
    pub fn text(&self) -> String {
        match self {
            LinkLine::InProcess => String::new(),
            LinkLine::Attached(to) => format!("attached: {to}"),
            LinkLine::Retrying(attempt) => {
                format!("connection lost, retrying (attempt {attempt})")
            }
            LinkLine::Closed(why) => format!("connection closed: {why}"),
        }
    }

    /// Whether it reports a problem (shown in the warning color).
    pub fn is_trouble(&self) -> bool {
        matches!(self, LinkLine::Retrying(_) | LinkLine::Closed(_))
    }
}

/// The link state as the App keeps it.
#[derive(Clone, Debug, Default)]
pub struct LinkView {
    pub line: LinkLine,
    /// What `attached` says (the latest label the link gave).
    label: Option<String>,
    /// Resyncs already reloaded for.
    resyncs: u64,
}

impl App {
    /// Attached to `label` (`serve pid 1234`); the sessions the core has
    /// open join the session list.
    pub fn attach(&mut self, label: String, live: &[LiveSession]) {
        self.link = LinkView {
            line: LinkLine::Attached(label.clone()),
            label: Some(label),
            resyncs: 0,
        };
        for session in live {
            let origin = session.origin.parse().unwrap_or(Origin::Tui);
            let info = self
                .sessions
                .entry(session.id.clone())
                .or_insert_with(|| SessionInfo::new(origin));
            info.running = session.busy;
            if let Some(agent) = &session.agent {
                self.agents.note(&session.id, agent);
            }
        }
    }

    /// The link's new state; true when the screen changes.
    pub fn link_changed(&mut self, state: LinkState) -> bool {
        let line = match state {
            LinkState::Connected { resyncs, label } => {
                if resyncs > self.link.resyncs {
                    self.link.resyncs = resyncs;
                    self.reload_shown_sessions();
                }
                // After a restart of the daemon: its new pid.
                self.link.label = Some(label.clone());
                LinkLine::Attached(label)
            }
            LinkState::Reconnecting { attempt, why } => {
                tracing::info!("connection to the core lost ({why}); retrying");
                LinkLine::Retrying(attempt)
            }
            LinkState::Closed(why) => {
                self.notice(
                    Level::Error,
                    format!("the core closed the connection: {why}"),
                );
                LinkLine::Closed(why)
            }
        };
        if self.link.line == line {
            return false;
        }
        self.link.line = line;
        true
    }

    /// Events were missed: every session the view knows that has a
    /// transcript is shown again as the transcript holds it.
    fn reload_shown_sessions(&mut self) {
        if self.sessions_dir.is_none() {
            return;
        }
        let ids: Vec<String> = self
            .sessions
            .keys()
            .filter(|id| self.transcript_of(id).is_some_and(|p| p.exists()))
            .cloned()
            .collect();
        for id in ids {
            self.reload_session(&id);
        }
        self.notice(
            Level::Warning,
            "the view missed events from the core; reloaded the sessions' transcripts",
        );
    }
}

/// Forwards the link's state to the loop as it changes (attached only).
pub fn watch_connection(
    connection: Option<watch::Receiver<LinkState>>,
    tx: mpsc::UnboundedSender<AppEvent>,
) {
    let Some(mut connection) = connection else {
        return;
    };
    tokio::spawn(async move {
        loop {
            let state = connection.borrow_and_update().clone();
            if tx.send(AppEvent::Link(state)).is_err() {
                return;
            }
            if connection.changed().await.is_err() {
                return;
            }
        }
    });
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
