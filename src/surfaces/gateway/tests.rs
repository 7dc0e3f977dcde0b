//! The gateway and the attached link together, in process: a fake core
//! (a bus and a submit that answers), the Unix listener, the client.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use super::unix::{self, UnixServer};
use super::{Bounds, Gateway, HelloFacts};
use crate::bus::{EventBus, EventReceiver};
use crate::link::client;
use crate::link::{CoreLink, LinkState};
use crate::protocol::wire::CoreStatus;

/// The gateway token the socket of these tests asks for.
const TOKEN: &str = "egt_test-token";
use crate::protocol::{
    AnswerDelta, Event, EventKind, FinalAnswer, Op, Origin, Submission, TurnEnded, TurnStarted,
};

/// A core that answers each user message with `turn_started`, its text
/// as two deltas, `final` and `turn_ended`.
fn fake_core() -> (CoreLink, EventBus, Arc<Mutex<Vec<Submission>>>) {
    let bus = EventBus::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (core_bus, log) = (bus.clone(), seen.clone());
    let submit = Arc::new(move |submission: Submission| {
        log.lock().unwrap().push(submission.clone());
        if let Op::UserMessage {
            session,
            origin,
            text,
            ..
        } = submission.op
        {
            let emit = |kind| {
                core_bus.send(Event {
                    agent: None,
                    submission: Some(submission.id.clone()),
                    session: session.clone(),
                    origin: origin.clone(),
                    kind,
                })
            };
            emit(EventKind::TurnStarted(TurnStarted {
                text: text.clone(),
                ..TurnStarted::default()
            }));
            for half in [&text[..text.len() / 2], &text[text.len() / 2..]] {
                emit(EventKind::Delta(AnswerDelta { text: half.into() }));
            }
            emit(EventKind::Final(FinalAnswer { text }));
            emit(EventKind::TurnEnded(TurnEnded { interrupted: false }));
        }
        true
    });
    let (_tx, status) = watch::channel(CoreStatus::default());
    let link = CoreLink::new(submit, bus.clone(), status, Arc::new(|| {}), None);
    (link, bus, seen)
}

fn facts() -> HelloFacts {
    HelloFacts {
        server: "egirl test".into(),
        mode: "serve".into(),
        ..HelloFacts::default()
    }
}

/// Connected to this process's gateway, after `resyncs` reloads.
fn connected(resyncs: u64) -> LinkState {
    LinkState::Connected {
        resyncs,
        label: format!("serve pid {}", std::process::id()),
    }
}

fn message(text: &str, origin: Origin) -> Submission {
    Submission::new(Op::UserMessage {
        session: "s".into(),
        origin,
        text: text.into(),
        images: Vec::new(),
    })
}

async fn next(events: &mut EventReceiver) -> Event {
    tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .expect("an event within 10 s")
        .expect("the bus is open")
}

/// The events up to and including the next `turn_ended`.
async fn turn(events: &mut EventReceiver) -> Vec<Event> {
    let mut got = Vec::new();
    loop {
        let event = next(events).await;
        let ended = matches!(event.kind, EventKind::TurnEnded(_));
        got.push(event);
        if ended {
            return got;
        }
    }
}

fn text_of(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Delta(d) => Some(d.text.as_str()),
            _ => None,
        })
        .collect()
}

/// Serves `gateway` in `dir` and attaches a client to it.
async fn attached(gateway: &Gateway, dir: &std::path::Path) -> (UnixServer, CoreLink) {
    let server = serve(gateway, dir);
    let link = client::connect_unix(server.path(), "test", TOKEN)
        .await
        .unwrap();
    (server, link)
}

fn serve(gateway: &Gateway, dir: &std::path::Path) -> UnixServer {
    unix::listen(gateway.clone(), &dir.join("egirl.sock"), TOKEN.into()).unwrap()
}

#[tokio::test]
async fn a_client_submits_and_reads_the_answer_under_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let (core, _bus, seen) = fake_core();
    let gateway = Gateway::start(core, facts(), Bounds::default());
    let server = serve(&gateway, dir.path());
    let (link, hello) = client::attach_unix(server.path(), "test", TOKEN)
        .await
        .unwrap();
    assert_eq!(hello.mode, "serve");
    assert_eq!(
        link.attached.as_deref(),
        Some(&*format!("serve pid {}", std::process::id()))
    );
    let mut events = link.subscribe();
    let submission = message("hello there", Origin::Tui);
    let id = submission.id.clone();
    assert!(link.submit_with(submission));
    let got = turn(&mut events).await;
    assert_eq!(text_of(&got), "hello there");
    assert!(got.iter().all(|e| e.submission.as_ref() == Some(&id)));
    assert_eq!(seen.lock().unwrap()[0].id, id);
    server.stop().await;
    assert!(!dir.path().join("egirl.sock").exists());
}

#[tokio::test]
async fn an_op_in_another_origin_s_name_is_rejected_in_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let (core, _bus, seen) = fake_core();
    let gateway = Gateway::start(core, facts(), Bounds::default());
    let (_server, link) = attached(&gateway, dir.path()).await;
    let mut events = link.subscribe();
    assert!(link.submit_with(message("x", Origin::Discord("1".into()))));
    let got = turn(&mut events).await;
    match &got[0].kind {
        EventKind::Error(e) => assert!(e.message.contains("discord:1"), "{}", e.message),
        other => panic!("{other:?}"),
    }
    assert!(seen.lock().unwrap().is_empty());
}

/// Only the editor's own link (the owner's socket) serves a session's
/// files: a paired device may not answer its reads or redirect them.
#[test]
fn a_paired_device_serves_no_session_s_files() {
    use super::admission::Admitted;
    use crate::protocol::Command;
    let device = Admitted::Device("phone".into());
    let command = |command| Op::Command {
        session: "acp-1".into(),
        command,
    };
    let serving = [
        Op::FileAnswer {
            id: "r1".into(),
            content: Some("not what the file says".into()),
            error: None,
        },
        command(Command::ClientFiles {
            read: true,
            write: true,
        }),
        command(Command::WorkIn { dir: "/tmp".into() }),
        command(Command::SessionMcp { servers: vec![] }),
    ];
    for op in &serving {
        let why = device.may_send(op).unwrap_err();
        assert!(why.contains("paired device"), "{why}");
        assert_eq!(Admitted::Owner.may_send(op), Ok(()));
    }
    let typed = message("hi", Origin::Web).op;
    assert_eq!(device.may_send(&typed), Ok(()));
}

/// `/model`'s commands pass the gateway's checks: an attached TUI pins
/// and lists models as one in process does.
#[tokio::test]
async fn model_commands_reach_the_core() {
    use crate::protocol::Command;
    let dir = tempfile::tempdir().unwrap();
    let (core, _bus, seen) = fake_core();
    let gateway = Gateway::start(core, facts(), Bounds::default());
    let (_server, link) = attached(&gateway, dir.path()).await;
    let sent = [
        Command::PinModel {
            model: "local.fast".into(),
        },
        Command::ListModels,
    ];
    for command in sent.clone() {
        let session = "s".to_string();
        assert!(link.submit(Op::Command { session, command }));
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while seen.lock().unwrap().len() < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let got: Vec<Command> = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|s| match &s.op {
            Op::Command { command, .. } => Some(command.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(got, sent);
}

#[tokio::test]
async fn a_cut_connection_resumes_with_every_event_once() {
    let dir = tempfile::tempdir().unwrap();
    let (core, bus, _seen) = fake_core();
    let gateway = Gateway::start(core.clone(), facts(), Bounds::default());
    let (server, link) = attached(&gateway, dir.path()).await;
    let mut events = link.subscribe();
    let mut state = link.connection.clone().unwrap();
    assert!(link.submit_with(message("before", Origin::Tui)));
    assert_eq!(text_of(&turn(&mut events).await), "before");

    server.stop().await;
    state
        .wait_for(|s| matches!(s, LinkState::Reconnecting { .. }))
        .await
        .unwrap();
    // The core goes on while the client is away.
    core.submit_with(message("while away", Origin::Cli));
    drop(bus);
    let server = serve(&gateway, dir.path());
    // Submitted while disconnected: sent once the link is back.
    assert!(link.submit_with(message("after", Origin::Tui)));
    assert_eq!(text_of(&turn(&mut events).await), "while away");
    assert_eq!(text_of(&turn(&mut events).await), "after");
    assert_eq!(*state.borrow(), connected(0));
    assert!(events.try_recv().is_err());
    server.stop().await;
}

#[tokio::test]
async fn a_resume_from_before_the_ring_is_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let (core, _bus, _seen) = fake_core();
    let bounds = Bounds {
        events: 4,
        bytes: usize::MAX,
    };
    let gateway = Gateway::start(core.clone(), facts(), bounds);
    let (server, link) = attached(&gateway, dir.path()).await;
    let mut events = link.subscribe();
    let mut state = link.connection.clone().unwrap();
    server.stop().await;
    state
        .wait_for(|s| matches!(s, LinkState::Reconnecting { .. }))
        .await
        .unwrap();
    // More events than the ring holds (waiting deltas merge on the bus).
    core.submit_with(message("lost while away", Origin::Cli));
    core.submit_with(message("and this too", Origin::Cli));
    let server = serve(&gateway, dir.path());
    let seen = state.clone();
    let resynced = state.wait_for(|s| *s == connected(1));
    tokio::time::timeout(Duration::from_secs(20), resynced)
        .await
        .unwrap_or_else(|_| panic!("no resync: {:?}", *seen.borrow()))
        .unwrap();
    assert!(link.submit_with(message("next", Origin::Tui)));
    assert_eq!(text_of(&turn(&mut events).await), "next");
    server.stop().await;
}

#[tokio::test]
async fn probe_finds_a_live_server_and_nothing_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("egirl.sock");
    assert!(client::probe(&path, TOKEN).await.is_none());
    let (core, _bus, _seen) = fake_core();
    let gateway = Gateway::start(core, facts(), Bounds::default());
    let server = serve(&gateway, dir.path());
    let hello = client::probe(&path, TOKEN).await.unwrap();
    assert_eq!(
        (hello.mode.as_str(), hello.pid),
        ("serve", std::process::id())
    );
    // A live socket is not taken over; a stale one is.
    let err = unix::listen(gateway.clone(), &path, TOKEN.into())
        .err()
        .unwrap();
    assert!(format!("{err:#}").contains("answers on"), "{err:#}");
    server.stop().await;
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let server = serve(&gateway, dir.path());
    assert!(client::probe(&path, TOKEN).await.is_some());
    server.stop().await;
    assert!(client::probe(&path, TOKEN).await.is_none());
}

#[tokio::test]
async fn an_op_past_the_server_s_bound_is_refused_by_the_client_itself() {
    let dir = tempfile::tempdir().unwrap();
    let (core, _bus, seen) = fake_core();
    let gateway = Gateway::start(core, facts(), Bounds::default());
    let (server, link) = attached(&gateway, dir.path()).await;
    let mut events = link.subscribe();
    let huge = "x".repeat(crate::protocol::wire::MAX_CLIENT_FRAME);
    assert!(link.submit_with(message(&huge, Origin::Tui)));
    let got = turn(&mut events).await;
    assert!(
        matches!(&got[0].kind, EventKind::Error(_)),
        "{:?}",
        got[0].kind
    );
    // Still connected: the next one goes through.
    assert!(link.submit_with(message("small", Origin::Tui)));
    assert_eq!(text_of(&turn(&mut events).await), "small");
    assert_eq!(seen.lock().unwrap().len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn after_a_gap_the_open_approval_reaches_the_client_again() {
    let dir = tempfile::tempdir().unwrap();
    let (core, bus, _seen) = fake_core();
    let bounds = Bounds {
        events: 4,
        bytes: usize::MAX,
    };
    let gateway = Gateway::start(core, facts(), bounds);
    let (server, link) = attached(&gateway, dir.path()).await;
    let mut events = link.subscribe();
    let mut state = link.connection.clone().unwrap();
    let emit = |session: &str, kind| {
        bus.send(Event {
            agent: None,
            submission: None,
            session: session.into(),
            origin: Origin::Cli,
            kind,
        })
    };
    emit(
        "a",
        EventKind::ApprovalRequest(crate::protocol::ApprovalRequest {
            id: "r1".into(),
            tool: "exec".into(),
            command: "make".into(),
            cwd: ".".into(),
            rule: None,
            rule_covers: None,
            sandbox: None,
            escalation: None,
        }),
    );
    assert!(matches!(
        next(&mut events).await.kind,
        EventKind::ApprovalRequest(_)
    ));

    server.stop().await;
    state
        .wait_for(|s| matches!(s, LinkState::Reconnecting { .. }))
        .await
        .unwrap();
    for i in 0..8 {
        emit(
            &format!("s{i}"),
            EventKind::TurnEnded(TurnEnded { interrupted: false }),
        );
    }
    let server = serve(&gateway, dir.path());
    match next(&mut events).await.kind {
        EventKind::ApprovalRequest(request) => assert_eq!(request.id, "r1"),
        other => panic!("{other:?}"),
    }
    assert_eq!(*state.borrow(), connected(1));
    server.stop().await;
}

#[tokio::test]
async fn a_status_change_reaches_the_attached_link() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, status) = watch::channel(CoreStatus::default());
    let core = CoreLink::new(
        Arc::new(|_| true),
        EventBus::new(),
        status,
        Arc::new(|| {}),
        None,
    );
    let gateway = Gateway::start(core, facts(), Bounds::default());
    let (server, link) = attached(&gateway, dir.path()).await;
    let local = crate::protocol::wire::LocalHealth { up: 1, total: 2 };
    tx.send_replace(CoreStatus {
        local: Some(local),
        ..CoreStatus::default()
    });
    let mut status = link.watch_status();
    let changed = status.wait_for(|s| s.local == Some(local));
    tokio::time::timeout(Duration::from_secs(10), changed)
        .await
        .expect("the status within 10 s")
        .unwrap();
    server.stop().await;
}

#[tokio::test]
async fn a_restarted_server_is_not_resumed_from_the_old_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (core, bus, _seen) = fake_core();
    let gateway = Gateway::start(core, facts(), Bounds::default());
    let (server, link) = attached(&gateway, dir.path()).await;
    let mut events = link.subscribe();
    let mut state = link.connection.clone().unwrap();
    assert!(link.submit_with(message("before", Origin::Tui)));
    assert_eq!(text_of(&turn(&mut events).await), "before");
    // A turn the old run never finishes: it dies with it.
    bus.send(Event {
        agent: None,
        submission: None,
        session: "cut".into(),
        origin: Origin::Cli,
        kind: EventKind::TurnStarted(TurnStarted {
            text: "cut".into(),
            ..TurnStarted::default()
        }),
    });
    assert!(matches!(
        next(&mut events).await.kind,
        EventKind::TurnStarted(_)
    ));
    server.stop().await;
    drop(gateway);
    state
        .wait_for(|s| matches!(s, LinkState::Reconnecting { .. }))
        .await
        .unwrap();

    // Another run of the server: its numbers start at 1 again, and it has
    // streamed more events than the client saw of the old one before the
    // client is back. Resuming after the old last number would skip the
    // first of them and go on mid-stream as if nothing was missed.
    let (core, _bus, _seen) = fake_core();
    let gateway = Gateway::start(core.clone(), facts(), Bounds::default());
    core.submit_with(message("first while away", Origin::Cli));
    core.submit_with(message("second while away", Origin::Cli));
    let server = serve(&gateway, dir.path());
    let seen = state.clone();
    let reloaded = state.wait_for(|s| *s == connected(1));
    tokio::time::timeout(Duration::from_secs(20), reloaded)
        .await
        .unwrap_or_else(|_| panic!("no reload: {:?}", *seen.borrow()))
        .unwrap();
    // Its end is said, so that no surface waits for it for ever.
    let ended = next(&mut events).await;
    assert_eq!(ended.session, "cut");
    assert!(
        matches!(
            ended.kind,
            EventKind::TurnEnded(TurnEnded { interrupted: true })
        ),
        "{ended:?}"
    );
    assert!(link.submit_with(message("next", Origin::Tui)));
    assert_eq!(text_of(&turn(&mut events).await), "next");
    server.stop().await;
}
