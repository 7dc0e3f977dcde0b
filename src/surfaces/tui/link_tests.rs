//! The attached TUI's view of its link: the status line's words as the
//! connection comes and goes, the daemon's live sessions in the list, and
//! a resync reloading what the transcripts hold.

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::LinkLine;
use crate::link::LinkState;
use crate::protocol::wire::LiveSession;
use crate::protocol::{AnswerDelta, Event, EventKind, Origin};
use crate::surfaces::tui::{App, AppOptions, Theme, draw};

fn app() -> App {
    App::new(AppOptions {
        session: "tui-1".into(),
        theme: Theme::default(),
        theme_dirs: Vec::new(),
        model: "fake".into(),
        endpoint: "http://127.0.0.1:8080".into(),
        context_length: 4096,
    })
}

fn status_line(app: &App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(160, 20)).expect("terminal");
    terminal.draw(|f| draw(app, f)).expect("draw");
    let buf = terminal.backend().buffer();
    let y = buf.area.bottom() - 1;
    (0..buf.area.width)
        .map(|x| buf[(x, y)].symbol().to_string())
        .collect()
}

fn connected(resyncs: u64) -> LinkState {
    LinkState::Connected {
        resyncs,
        label: "serve pid 4242".into(),
    }
}

#[test]
fn the_status_line_names_the_daemon_and_says_when_the_link_is_lost() {
    let mut app = app();
    assert!(!status_line(&app).contains("attached"));
    app.attach("serve pid 4242".into(), &[]);
    assert!(status_line(&app).contains("attached: serve pid 4242"));

    let lost = LinkState::Reconnecting {
        attempt: 3,
        why: "reset".into(),
    };
    assert!(app.link_changed(lost.clone()));
    assert!(!app.link_changed(lost), "the same state draws nothing new");
    let line = status_line(&app);
    assert!(
        line.contains("connection lost, retrying (attempt 3)"),
        "{line}"
    );

    assert!(app.link_changed(connected(0)));
    assert!(status_line(&app).contains("attached: serve pid 4242"));

    app.link_changed(LinkState::Closed("revoked".into()));
    assert_eq!(app.link.line, LinkLine::Closed("revoked".into()));
}

#[test]
fn the_daemons_live_sessions_join_the_session_list() {
    let mut app = app();
    let live = [
        LiveSession {
            id: "discord-5001".into(),
            origin: "discord:5001".into(),
            busy: true,
            agent: None,
        },
        LiveSession {
            id: "cron-daily".into(),
            origin: "cron:daily".into(),
            busy: false,
            agent: None,
        },
    ];
    app.attach("serve pid 1".into(), &live);
    let discord = &app.sessions["discord-5001"];
    assert_eq!(discord.origin, Origin::Discord("5001".into()));
    assert!(discord.running);
    assert_eq!(
        app.sessions["cron-daily"].origin,
        Origin::Cron("daily".into())
    );
    app.open_session_picker();
    let ids: Vec<&str> = app.picker.rows.iter().map(|r| r.id.as_str()).collect();
    assert!(
        ids.contains(&"discord-5001") && ids.contains(&"tui-1"),
        "{ids:?}"
    );
}

#[test]
fn a_resync_reloads_the_sessions_from_their_transcripts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let line = |role: &str, text: &str| {
        format!(
            "{{\"ts\":\"2026-11-20T10:00:00Z\",\"origin\":\"discord:5001\",\"role\":\"{role}\",\"content\":\"{text}\"}}\n"
        )
    };
    let transcript = format!(
        "{}{}",
        line("user", "hello daemon"),
        line("assistant", "the whole answer")
    );
    std::fs::write(dir.path().join("discord-5001.jsonl"), transcript).expect("write");
    let mut app = app();
    app.sessions_dir = Some(dir.path().to_path_buf());
    app.attach("serve pid 4242".into(), &[]);
    // What the view had before it fell behind: half an answer.
    app.apply(Event {
        agent: None,
        submission: None,
        session: "discord-5001".into(),
        origin: Origin::Discord("5001".into()),
        kind: EventKind::Delta(AnswerDelta {
            text: "the wh".into(),
        }),
    });
    assert!(!app.link_changed(connected(0)));
    app.link_changed(connected(1));
    let shown = app.conversation.last_assistant().unwrap_or_default();
    assert_eq!(shown, "the whole answer");
}

#[test]
fn after_the_daemon_restarted_the_status_line_names_its_new_pid() {
    let mut app = app();
    app.attach("serve pid 4242".into(), &[]);
    app.link_changed(LinkState::Reconnecting {
        attempt: 1,
        why: "reset".into(),
    });
    let restarted = LinkState::Connected {
        resyncs: 1,
        label: "serve pid 5151".into(),
    };
    assert!(app.link_changed(restarted));
    let line = status_line(&app);
    assert!(line.contains("attached: serve pid 5151"), "{line}");
}
