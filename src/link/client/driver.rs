//! The attached link's task: pumps one connection (frames in, ops out),
//! and when it is lost, reconnects with backoff and resumes from the last
//! `seq` applied. A reconnect that finds another run of the server (the
//! daemon restarted: its `seq` counts from 1 again) does not resume: the
//! old numbers mean nothing there, so the link starts afresh from the new
//! server's `hello` and the surface reloads its view.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::{Dialer, Handshake, dial_and_hello};
use crate::bus::EventBus;
use crate::link::LinkState;
use crate::link::frames::Framed;
use crate::protocol::wire::{
    ClientFrame, ClientHello, CoreStatus, MAX_CLIENT_FRAME, ServerFrame, ServerHello,
};
use crate::protocol::{
    Command, ErrorEvent, Event, EventKind, Op, Origin, SessionId, Submission, SubmissionId,
    TurnEnded,
};

const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Ops remembered by id, so that a `rejected` one is reported in its session.
const REMEMBERED_OPS: usize = 64;

pub(super) struct Parts {
    pub dial: Dialer,
    pub hello: ClientHello,
    pub bus: EventBus,
    pub status: watch::Sender<CoreStatus>,
    pub state: watch::Sender<LinkState>,
    pub outbox: mpsc::Receiver<Submission>,
    /// The `seq` the view starts after (the first `hello`'s).
    pub last: u64,
    /// The server's `hello` (the latest): which run of it `last` counts in.
    pub server: ServerHello,
    /// A fixed status-line label (a URL); None: `<mode> pid <pid>` of the
    /// server connected to now.
    pub label: Option<String>,
}

/// What the status line says about a server by default: `serve pid 1234`.
pub(super) fn label_of(server: &ServerHello) -> String {
    format!("{} pid {}", server.mode, server.pid)
}

/// The sessions `hello` says have a turn running or queued.
fn busy_sessions(server: &ServerHello) -> BTreeMap<SessionId, Origin> {
    server
        .sessions
        .iter()
        .filter(|s| s.busy)
        .map(|s| (s.id.clone(), s.origin.parse().unwrap_or(Origin::Tui)))
        .collect()
}

/// Whether `now` is the same run of the server as `before`, so that `seq`
/// numbers of one mean the same in the other.
fn same_run(before: &ServerHello, now: &ServerHello) -> bool {
    if before.instance.is_empty() || now.instance.is_empty() {
        // A server that does not say its instance: its process tells.
        return before.pid == now.pid;
    }
    before.instance == now.instance
}

pub(super) struct Driver {
    parts: Parts,
    /// An op taken from the outbox but not yet written: sent first on
    /// the next connection.
    unsent: Option<Submission>,
    resyncs: u64,
    /// Right after `hello` or `resync`: the open approvals come with
    /// numbers at or below `last`, and are applied all the same.
    resent_approvals: bool,
    sent: VecDeque<(SubmissionId, SessionId, Origin, bool)>,
    /// Sessions whose turn started and has not ended, as far as this
    /// link saw: when the server's process restarts, their `turn_ended`
    /// never comes, and the link says they ended.
    running: BTreeMap<SessionId, Origin>,
}

/// Why a connection ended.
enum End {
    /// Lost; worth reconnecting (why).
    Lost(String),
    /// The server closed it for good (why), or every link is gone.
    Closed(Option<String>),
}

impl Driver {
    pub fn new(parts: Parts) -> Self {
        let running = busy_sessions(&parts.server);
        Driver {
            parts,
            unsent: None,
            resyncs: 0,
            resent_approvals: true,
            sent: VecDeque::new(),
            running,
        }
    }

    pub async fn run(mut self, mut framed: Framed) {
        loop {
            let why = match self.pump(&mut framed).await {
                End::Lost(why) => why,
                End::Closed(why) => {
                    if let Some(why) = why {
                        self.parts.state.send_replace(LinkState::Closed(why));
                    }
                    return;
                }
            };
            tracing::info!("link: connection lost: {why}");
            match self.reconnect(why).await {
                Some(next) => framed = next,
                None => return,
            }
        }
    }

    async fn pump(&mut self, framed: &mut Framed) -> End {
        if let Some(submission) = self.unsent.take()
            && let Err(end) = self.send_op(framed, submission).await
        {
            return end;
        }
        loop {
            tokio::select! {
                frame = framed.reader.read_frame() => match frame {
                    Ok(Some(line)) => {
                        if let Some(end) = self.apply(&line) {
                            return end;
                        }
                    }
                    Ok(None) => return End::Lost("the server closed the connection".into()),
                    Err(e) => return End::Lost(e.to_string()),
                },
                op = self.parts.outbox.recv() => match op {
                    Some(submission) => {
                        if let Err(end) = self.send_op(framed, submission).await {
                            return end;
                        }
                    }
                    None => return End::Closed(None),
                },
            }
        }
    }

    async fn send_op(&mut self, framed: &mut Framed, submission: Submission) -> Result<(), End> {
        let line = match serde_json::to_string(&ClientFrame::Op(submission.clone())) {
            Ok(line) => line,
            Err(e) => {
                tracing::warn!("link: an op could not be written: {e}");
                return Ok(());
            }
        };
        if line.len() > MAX_CLIENT_FRAME {
            // The server would close the connection over it: refused here.
            self.remember(&submission);
            let why = format!("an op is longer than {MAX_CLIENT_FRAME} bytes");
            self.report_rejected(Some(submission.id.0), &why);
            return Ok(());
        }
        let wrote = framed.writer.write_frame(&line).await;
        if let Err(e) = wrote.and(framed.writer.flush().await) {
            self.unsent = Some(submission);
            return Err(End::Lost(e.to_string()));
        }
        self.remember(&submission);
        Ok(())
    }

    /// Applies one server frame; Some when the connection ends.
    fn apply(&mut self, line: &str) -> Option<End> {
        let frame = match serde_json::from_str::<ServerFrame>(line) {
            Ok(frame) => frame,
            Err(e) => {
                tracing::warn!("link: a frame the client does not read: {e}");
                return None;
            }
        };
        match frame {
            ServerFrame::Event(sequenced) => {
                let resent = self.resent_approvals
                    && matches!(sequenced.event.kind, EventKind::ApprovalRequest(_));
                if sequenced.seq > self.parts.last {
                    self.parts.last = sequenced.seq;
                    self.resent_approvals = false;
                    self.track(&sequenced.event);
                    self.parts.bus.send(sequenced.event);
                } else if resent {
                    self.parts.bus.send(sequenced.event);
                }
            }
            ServerFrame::Status(status) => {
                self.parts.status.send_replace(status);
            }
            ServerFrame::Resync(resync) => {
                tracing::info!(reason = %resync.reason, seq = resync.seq, "link: resync");
                self.parts.last = resync.seq;
                self.resyncs += 1;
                self.resent_approvals = true;
                self.connected();
            }
            ServerFrame::Rejected(rejected) => {
                tracing::warn!("link: the server rejected an op: {}", rejected.message);
                self.report_rejected(rejected.id, &rejected.message);
            }
            ServerFrame::Error(error) => return Some(End::Closed(Some(error.message))),
            // The link asks no queries: an answer is not for it.
            ServerFrame::Hello(_) | ServerFrame::Paired(_) | ServerFrame::Answer(_) => {}
        }
        None
    }

    fn track(&mut self, event: &Event) {
        match event.kind {
            EventKind::TurnStarted(_) | EventKind::Queued(_) => {
                self.running
                    .insert(event.session.clone(), event.origin.clone());
            }
            EventKind::TurnEnded(_) => {
                self.running.remove(&event.session);
            }
            _ => {}
        }
    }

    /// Another run of the server answered: the turns the old one ran died
    /// with it. Each ends, interrupted, so no surface waits for it.
    fn end_turns_of_the_old_run(&mut self, server: &ServerHello) {
        let still = busy_sessions(server);
        let ended = std::mem::replace(&mut self.running, still.clone());
        for (session, origin) in ended {
            if still.contains_key(&session) {
                continue;
            }
            self.parts.bus.send(Event {
                agent: None,
                submission: None,
                session,
                origin,
                kind: EventKind::TurnEnded(TurnEnded { interrupted: true }),
            });
        }
    }

    fn connected(&self) {
        let label = self
            .parts
            .label
            .clone()
            .unwrap_or_else(|| label_of(&self.parts.server));
        self.parts.state.send_replace(LinkState::Connected {
            resyncs: self.resyncs,
            label,
        });
    }

    fn remember(&mut self, submission: &Submission) {
        let (session, origin, is_message) = match &submission.op {
            Op::UserMessage {
                session, origin, ..
            } => (session.clone(), origin.clone(), true),
            Op::Command {
                session,
                command: Command::Compact { origin, .. },
            } => (session.clone(), origin.clone(), false),
            Op::Command { session, .. } | Op::Interrupt { session } => {
                (session.clone(), Origin::Tui, false)
            }
            Op::ApprovalDecision { .. } | Op::FileAnswer { .. } | Op::Shutdown => return,
        };
        if self.sent.len() == REMEMBERED_OPS {
            self.sent.pop_front();
        }
        self.sent
            .push_back((submission.id.clone(), session, origin, is_message));
    }

    /// A rejected op shows as an `error` in its session (and a rejected
    /// message ends its turn, so a surface waiting for it stops waiting).
    fn report_rejected(&mut self, id: Option<String>, message: &str) {
        let Some(id) = id else { return };
        let Some((submission, session, origin, is_message)) =
            self.sent.iter().find(|(s, ..)| s.0 == id).cloned()
        else {
            return;
        };
        let event = |kind| Event {
            agent: None,
            submission: Some(submission.clone()),
            session: session.clone(),
            origin: origin.clone(),
            kind,
        };
        self.parts.bus.send(event(EventKind::Error(ErrorEvent {
            message: format!("the core refused this: {message}"),
        })));
        if is_message {
            self.parts.bus.send(event(EventKind::TurnEnded(TurnEnded {
                interrupted: false,
            })));
        }
    }

    /// Dials again with backoff until connected (the new connection) or
    /// refused for good, or nobody holds the link any more (None).
    async fn reconnect(&mut self, mut why: String) -> Option<Framed> {
        let mut backoff = FIRST_BACKOFF;
        // False once a server of another run answered: the next hello
        // asks for no replay, and the view starts from its `hello`.
        let mut resume = true;
        let mut wait = true;
        for attempt in 1u32.. {
            if self.parts.state.is_closed() && self.parts.outbox.is_closed() {
                return None;
            }
            self.parts.state.send_replace(LinkState::Reconnecting {
                attempt,
                why: why.clone(),
            });
            if wait {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
            wait = true;
            let mut hello = self.parts.hello.clone();
            hello.resume_after = resume.then_some(self.parts.last);
            match dial_and_hello(&self.parts.dial, &hello).await {
                Ok((framed, server)) => {
                    let same = same_run(&self.parts.server, &server);
                    if resume && !same {
                        // It replays from our number in its own stream:
                        // events would be skipped. Asked again, afresh.
                        tracing::info!(pid = server.pid, "link: the server restarted");
                        self.parts.server = server;
                        resume = false;
                        wait = false;
                        why = "the server restarted".into();
                        continue;
                    }
                    if resume {
                        self.resent_approvals = false;
                    } else {
                        // Fresh: the open approvals follow, at or below
                        // its `seq`; what came before is in the transcripts.
                        self.parts.last = server.seq;
                        self.resyncs += 1;
                        self.resent_approvals = true;
                        self.end_turns_of_the_old_run(&server);
                    }
                    self.parts.server = server;
                    self.connected();
                    return Some(framed);
                }
                Err(Handshake::Refused(message)) => {
                    self.parts.state.send_replace(LinkState::Closed(message));
                    return None;
                }
                Err(Handshake::Failed(failed)) => why = failed,
            }
        }
        None
    }
}
