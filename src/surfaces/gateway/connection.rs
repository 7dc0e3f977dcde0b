//! One client's connection: `hello` both ways, then a reader task taking
//! the client's ops and a writer sending the stream from the client's
//! cursor in the ring, the status when it changes, and the answers to ops
//! it refused. The writer is the only one waiting on the client: when the
//! client reads slowly, its cursor falls behind, never the core.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{mpsc, watch};

use super::Shared;
use super::admission::{Admission, Admitted};
use super::budget::TurnBudget;
use super::merge::merge_batch;
use crate::link::frames::{FrameReader, FrameWriter, Framed};
use crate::protocol::wire::{
    Answer, ClientFrame, ClientHello, CoreStatus, Rejected, Resync, ServerFrame, WIRE_VERSION,
    WireError,
};
use crate::protocol::{Command, Event, Op, Origin};

/// How long a client may take to send `hello`.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Events a writer takes from the ring at a time (and at most holds).
const BATCH: usize = 256;
/// How often a connection that reads without sending asks its admission
/// again: a device revoked while it only listens stops receiving within
/// this time, not at its next op.
const RECHECK_EVERY: Duration = Duration::from_secs(2);
/// The most of a peer's text an error line quotes.
const SHOWN_CHARS: usize = 300;

/// What the reader asks the writer to send.
enum Reply {
    Frame(ServerFrame),
    /// Send it, then close the connection.
    Close(ServerFrame),
}

pub(super) async fn serve(shared: Arc<Shared>, framed: Framed, admission: Arc<dyn Admission>) {
    let Framed {
        mut reader,
        mut writer,
    } = framed;
    let Some((hello, who)) = handshake(&mut *reader, &mut *writer, &*admission).await else {
        return;
    };
    // Taken before `status` is sent: a change after that one is sent too.
    let mut status = shared.link.watch_status();
    let Some(cursor) = greet(&shared, &hello, &mut status, &mut *writer).await else {
        return;
    };
    let (replies, replies_rx) = mpsc::channel(64);
    let link = shared.link.clone();
    // Aborted with this connection, however it ends (the listener aborts
    // the connection's task when it stops).
    let ops = read_ops(
        reader,
        link,
        shared.clone(),
        admission.clone(),
        who.clone(),
        replies,
    );
    let _ops = AbortOnDrop(tokio::spawn(ops));
    let admitted = Recheck::new(admission, who);
    let _ = write_stream(&shared, cursor, status, &mut *writer, replies_rx, admitted).await;
}

/// The writer's side of "still admitted": asked again every
/// [`RECHECK_EVERY`] while the connection only receives. Only a paired
/// device can stop being admitted; the owner's connections have no timer.
struct Recheck {
    admission: Arc<dyn Admission>,
    who: Admitted,
    /// When to ask next; None when the answer cannot change.
    next: Option<tokio::time::Instant>,
}

impl Recheck {
    fn new(admission: Arc<dyn Admission>, who: Admitted) -> Self {
        let next =
            matches!(who, Admitted::Device(_)).then(|| tokio::time::Instant::now() + RECHECK_EVERY);
        Self {
            admission,
            who,
            next,
        }
    }

    /// False once the client is no longer admitted (checked when due).
    fn still_admitted(&mut self) -> bool {
        let now = tokio::time::Instant::now();
        match self.next {
            Some(next) if now >= next => {
                self.next = Some(now + RECHECK_EVERY);
                self.admission.still_admitted(&self.who)
            }
            _ => true,
        }
    }

    /// Ready when the next check is due (never for the owner).
    async fn due(&self) {
        match self.next {
            Some(next) => tokio::time::sleep_until(next).await,
            None => std::future::pending().await,
        }
    }
}

fn no_longer_admitted() -> ServerFrame {
    ServerFrame::Error(WireError {
        message: "this client is no longer admitted".into(),
    })
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Reads the first frame: `hello` admitted, or `pair` answered (then the
/// connection ends); None when the connection ends here.
async fn handshake(
    reader: &mut dyn FrameReader,
    writer: &mut dyn FrameWriter,
    admission: &dyn Admission,
) -> Option<(ClientHello, Admitted)> {
    let first = tokio::time::timeout(HELLO_TIMEOUT, reader.read_frame()).await;
    let line = match first {
        Err(_) => return refuse(writer, "no hello within 10 s".into()).await,
        Ok(Ok(Some(line))) => line,
        Ok(Ok(None)) => return None,
        Ok(Err(e)) => return refuse(writer, e.to_string()).await,
    };
    match serde_json::from_str::<ClientFrame>(&line) {
        Ok(ClientFrame::Hello(hello)) if hello.version != WIRE_VERSION => {
            let why = format!(
                "this server speaks wire version {WIRE_VERSION}; the client speaks {}",
                hello.version
            );
            refuse(writer, why).await
        }
        Ok(ClientFrame::Hello(hello)) => match admission.admit(hello.token.as_deref()) {
            Ok(who) => {
                tracing::info!(client = %hello.client, ?who, "gateway: client connected");
                Some((hello, who))
            }
            Err(why) => refuse(writer, why).await,
        },
        Ok(ClientFrame::Pair(request)) => {
            let frame = match admission.pair(&request) {
                Ok(paired) => ServerFrame::Paired(paired),
                Err(message) => ServerFrame::Error(WireError { message }),
            };
            let _ = send(writer, &frame).await;
            let _ = writer.flush().await;
            None
        }
        Ok(ClientFrame::Op(_) | ClientFrame::Query(_)) => {
            refuse(writer, "the first frame must be hello".into()).await
        }
        Err(e) => refuse(writer, format!("the first frame must be hello: {e}")).await,
    }
}

/// Tells a client over [`super::MAX_CLIENTS`] so, and ends it.
pub(super) async fn refuse_busy(framed: Framed) {
    let Framed { mut writer, .. } = framed;
    let message = format!("too many clients ({} connected)", super::MAX_CLIENTS);
    let _ = refuse::<()>(&mut *writer, message).await;
}

/// Sends `error` and ends the connection. The message may quote what an
/// unauthenticated peer sent (a parse error names the value): the log
/// gets it escaped and cut, never as lines or escape sequences of the
/// peer's choosing.
async fn refuse<T>(writer: &mut dyn FrameWriter, message: String) -> Option<T> {
    let message = shown(&message);
    tracing::info!("gateway: refused a client: {message}");
    let _ = send(writer, &ServerFrame::Error(WireError { message })).await;
    let _ = writer.flush().await;
    None
}

/// Sends `hello`, `status`, and where the client's view starts: a replay
/// from its `resume_after`, or (fresh, or resuming from what the ring no
/// longer holds) the open approvals; the cursor the stream goes on from.
async fn greet(
    shared: &Shared,
    hello: &ClientHello,
    status: &mut watch::Receiver<CoreStatus>,
    writer: &mut dyn FrameWriter,
) -> Option<u64> {
    let (server_hello, resumable, approvals) = {
        let state = shared.stream.lock();
        let newest = state.ring.newest();
        let resumable = hello
            .resume_after
            .filter(|after| state.ring.holds_after(*after));
        let hello = shared.hello(newest, state.tracker.sessions());
        (hello, resumable, state.tracker.approvals())
    };
    let newest = server_hello.seq;
    send(writer, &ServerFrame::Hello(server_hello)).await.ok()?;
    let now = status.borrow_and_update().clone();
    send(writer, &ServerFrame::Status(now)).await.ok()?;
    if let Some(after) = resumable {
        writer.flush().await.ok()?;
        return Some(after);
    }
    if hello.resume_after.is_some() {
        let resync = Resync {
            reason: "gap".into(),
            seq: newest,
        };
        send(writer, &ServerFrame::Resync(resync)).await.ok()?;
    }
    for (seq, event) in approvals {
        send_event(writer, seq, &event).await.ok()?;
    }
    writer.flush().await.ok()?;
    Some(newest)
}

/// Sends the stream from `cursor` on, until the client or the reader goes.
async fn write_stream(
    shared: &Shared,
    mut cursor: u64,
    mut status: watch::Receiver<CoreStatus>,
    writer: &mut dyn FrameWriter,
    mut replies: mpsc::Receiver<Reply>,
    mut admitted: Recheck,
) -> std::io::Result<()> {
    let mut newest = shared.stream.watch();
    // The status's sender can go before the core (its task ends first).
    let mut status_open = true;
    loop {
        if !admitted.still_admitted() {
            send(writer, &no_longer_admitted()).await?;
            return writer.flush().await;
        }
        loop {
            match replies.try_recv() {
                Ok(Reply::Frame(frame)) => send(writer, &frame).await?,
                Ok(Reply::Close(frame)) => {
                    send(writer, &frame).await?;
                    return writer.flush().await;
                }
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => return writer.flush().await,
            }
        }
        if status_open && status.has_changed().unwrap_or(false) {
            let now = status.borrow_and_update().clone();
            send(writer, &ServerFrame::Status(now)).await?;
        }
        let batch = shared.stream.lock().ring.after(cursor, BATCH);
        match batch {
            Ok(batch) if batch.is_empty() => {}
            Ok(batch) => {
                for (seq, event) in merge_batch(batch) {
                    send_event(writer, seq, &event).await?;
                    cursor = seq;
                }
                writer.flush().await?;
                continue;
            }
            Err(super::ring::Lost) => {
                cursor = resync_lagged(shared, writer).await?;
                continue;
            }
        }
        writer.flush().await?;
        newest.mark_unchanged();
        // Checked again after marking: an event appended in between wakes us.
        if shared.stream.lock().ring.newest() != cursor {
            continue;
        }
        tokio::select! {
            _ = newest.changed() => {}
            // Wakes an idle connection to ask its admission again.
            () = admitted.due() => {}
            // `changed` marks the value seen: it is sent here, not above.
            changed = status.changed(), if status_open => match changed {
                Ok(()) => {
                    let now = status.borrow_and_update().clone();
                    send(writer, &ServerFrame::Status(now)).await?;
                }
                Err(_) => status_open = false,
            },
            reply = replies.recv() => match reply {
                Some(Reply::Frame(frame)) => send(writer, &frame).await?,
                Some(Reply::Close(frame)) => {
                    send(writer, &frame).await?;
                    return writer.flush().await;
                }
                None => return writer.flush().await,
            },
        }
    }
}

/// The client fell out of the ring: `resync` (lagged), then the approvals
/// still open; the cursor to go on from.
async fn resync_lagged(shared: &Shared, writer: &mut dyn FrameWriter) -> std::io::Result<u64> {
    let (newest, approvals) = {
        let state = shared.stream.lock();
        (state.ring.newest(), state.tracker.approvals())
    };
    tracing::info!(seq = newest, "gateway: a client fell behind; resync");
    let resync = Resync {
        reason: "lagged".into(),
        seq: newest,
    };
    send(writer, &ServerFrame::Resync(resync)).await?;
    for (seq, event) in approvals {
        send_event(writer, seq, &event).await?;
    }
    writer.flush().await?;
    Ok(newest)
}

/// Reads ops (and queries) until the client goes or is refused.
async fn read_ops(
    mut reader: Box<dyn FrameReader>,
    link: crate::link::CoreLink,
    shared: Arc<Shared>,
    admission: Arc<dyn Admission>,
    who: Admitted,
    replies: mpsc::Sender<Reply>,
) {
    let mut turns = TurnBudget::default();
    loop {
        let line = match reader.read_frame().await {
            Ok(Some(line)) => line,
            Ok(None) => return,
            Err(e) => {
                let error = ServerFrame::Error(WireError {
                    message: e.to_string(),
                });
                let _ = replies.send(Reply::Close(error)).await;
                return;
            }
        };
        let submission = match serde_json::from_str::<ClientFrame>(&line) {
            Ok(ClientFrame::Op(submission)) => submission,
            Ok(ClientFrame::Query(query)) => {
                if !admission.still_admitted(&who) {
                    let _ = replies.send(Reply::Close(no_longer_admitted())).await;
                    return;
                }
                // Awaited here: the client's next frame waits for this answer.
                let answer = answer_query(&shared, query).await;
                let _ = replies
                    .send(Reply::Frame(ServerFrame::Answer(answer)))
                    .await;
                continue;
            }
            Ok(ClientFrame::Hello(_)) => {
                reject(&replies, None, "hello was already sent".into()).await;
                continue;
            }
            Ok(ClientFrame::Pair(_)) => {
                reject(&replies, None, "pair is sent instead of hello".into()).await;
                continue;
            }
            Err(e) => {
                let why = shown(&format!("not a frame: {e}"));
                reject(&replies, raw_id(&line), why).await;
                continue;
            }
        };
        if !admission.still_admitted(&who) {
            let _ = replies.send(Reply::Close(no_longer_admitted())).await;
            return;
        }
        let id = Some(submission.id.0.clone());
        let checked = who
            .may_send(&submission.op)
            .and_then(|()| check_op(&submission.op));
        if let Err(why) = checked.and_then(|()| turns.take(&submission.op)) {
            reject(&replies, id, why).await;
        } else if !link.submit_with(submission) {
            reject(&replies, id, "the core is stopping".into()).await;
        }
    }
}

/// Answers `query` from the core's workspace and its live sessions now.
async fn answer_query(shared: &Shared, query: crate::protocol::wire::Query) -> Answer {
    let live = shared.stream.lock().tracker.sessions();
    super::queries::answer(shared.facts.workspace.clone(), live, query).await
}

/// `text` cut to [`SHOWN_CHARS`] characters, control characters escaped.
fn shown(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(SHOWN_CHARS)
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect();
    if text.chars().nth(SHOWN_CHARS).is_some() {
        out.push('…');
    }
    out
}

async fn reject(replies: &mpsc::Sender<Reply>, id: Option<String>, message: String) {
    let frame = ServerFrame::Rejected(Rejected { id, message });
    let _ = replies.send(Reply::Frame(frame)).await;
}

/// What a client may send: a session id fit for a file name (the wire's
/// ids are untrusted, unlike the ones the in-process surfaces make), and
/// speaking as the user at a keyboard, a script or the web page (`tui`,
/// `cli` or `web`), never as Discord, Telegram, cron or the webhook.
fn check_op(op: &Op) -> Result<(), String> {
    if let Op::UserMessage { session, .. }
    | Op::Interrupt { session }
    | Op::Command { session, .. } = op
    {
        crate::sessions::validate_id(session).map_err(|_| {
            let shown: String = session.chars().take(64).collect();
            format!(
                "invalid session id `{}`: use letters, digits, `-`, `_` and `.` (max 128)",
                shown.escape_debug()
            )
        })?;
    }
    let origin = match op {
        Op::UserMessage { origin, .. } => origin,
        Op::ApprovalDecision { by, .. } => by,
        Op::Command {
            command: Command::Compact { origin, .. },
            ..
        } => origin,
        _ => return Ok(()),
    };
    match origin {
        Origin::Tui | Origin::Cli | Origin::Web | Origin::Acp => Ok(()),
        other => Err(format!(
            "a client speaks as `tui`, `cli`, `web` or `acp`, not as `{other}`"
        )),
    }
}

/// The `id` of a frame that did not parse, when it has one.
fn raw_id(line: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let id = value.get("id")?;
    Some(match id {
        serde_json::Value::String(s) => s.chars().take(128).collect(),
        other => other.to_string().chars().take(128).collect(),
    })
}

async fn send(writer: &mut dyn FrameWriter, frame: &ServerFrame) -> std::io::Result<()> {
    let line = serde_json::to_string(frame)?;
    writer.write_frame(&line).await
}

/// An `event` frame, serialized from the ring's event without a copy.
#[derive(Serialize)]
struct EventFrame<'a> {
    frame: &'static str,
    seq: u64,
    event: &'a Event,
}

async fn send_event(writer: &mut dyn FrameWriter, seq: u64, event: &Event) -> std::io::Result<()> {
    let frame = EventFrame {
        frame: "event",
        seq,
        event,
    };
    let line = serde_json::to_string(&frame)?;
    writer.write_frame(&line).await
}
