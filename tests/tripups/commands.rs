//! The input box and the slash commands: sessions and the input agree, a
//! message may start with `/`, completion, commands that say what they do
//! (defects 3, 4, 5, 6, 10, 14) and the signs of life while a turn runs.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use egirl::protocol::{
    Event, EventKind, MemoryHit, MemoryHits, Notice, Op, Origin, Submission, ToolCallEvent,
    ToolResultEvent, TurnEnded, TurnStarted,
};
use egirl::surfaces::tui::{App, Effect, Focus};

use crate::support::fake_llama::{FakeLlama, Reply};
use crate::tui::pty::{Launch, Pty};
use crate::tui::{SESSION, app, apply_all, ev, ev_from, key, ops, press, screen, turn, type_text};

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Types `text` and presses Enter; the submissions that went out.
fn send(app: &mut App, text: &str) -> Vec<Submission> {
    type_text(app, text);
    submissions(press(app, key(KeyCode::Enter)))
}

pub(crate) fn submissions(effects: Vec<Effect>) -> Vec<Submission> {
    effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Submit(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// The text of the one user message among `sent`, and its session.
fn message(sent: &[Submission]) -> Option<(String, String)> {
    sent.iter().find_map(|s| match &s.op {
        Op::UserMessage { session, text, .. } => Some((session.clone(), text.clone())),
        _ => None,
    })
}

/// A Discord session that spoke a moment ago.
fn discord_spoke(app: &mut App) {
    let discord = |kind| ev_from("discord-general", Origin::Discord("general".into()), kind);
    apply_all(
        app,
        [
            discord(EventKind::TurnStarted(TurnStarted {
                text: "deploy?".into(),
                ..Default::default()
            })),
            discord(EventKind::TurnEnded(TurnEnded { interrupted: false })),
        ],
    );
}

/// Defect 3: after `/new` and Ctrl+T the conversation showed the session
/// that spoke last (Discord here, the MCP pseudo-session in the report)
/// while the input went to the new one: the message just sent was hidden.
#[test]
fn defect_3_after_new_and_ctrl_t_the_view_shows_where_the_input_goes() {
    let mut app = app();
    apply_all(&mut app, turn("hello", "Hi from the desk!"));
    discord_spoke(&mut app);
    assert!(send(&mut app, "/new").is_empty());
    press(&mut app, ctrl('t'));

    let sent = send(&mut app, "where did this go?");
    let (session, text) = message(&sent).expect("a message went out");
    assert_ne!(session, SESSION, "/new moved the input");
    app.apply(ev_from(
        &session,
        Origin::Tui,
        EventKind::TurnStarted(TurnStarted {
            text,
            ..Default::default()
        }),
    ));
    let shown = screen(&app, 120, 30);
    assert!(
        shown.contains("where did this go?"),
        "the message just sent is not shown:\n{shown}"
    );
    // The header names the session the input goes to.
    assert!(shown.contains(&format!("· {session} · Ctrl+T")), "{shown}");
}

/// Defect 4: a message that starts with `/` could not be sent.
#[test]
fn defect_4_a_message_may_start_with_a_slash() {
    let mut app = app();
    let sent = send(&mut app, "/etc/hosts has a wrong entry");
    assert_eq!(
        message(&sent).map(|m| m.1).as_deref(),
        Some("/etc/hosts has a wrong entry"),
        "a path is not a command:\n{}",
        screen(&app, 120, 30)
    );
    // `//` sends the rest with one slash; a leading space sends it as is.
    let sent = send(&mut app, "//help is what I need");
    assert_eq!(
        message(&sent).map(|m| m.1).as_deref(),
        Some("/help is what I need")
    );
    let sent = send(&mut app, " /help me");
    assert_eq!(message(&sent).map(|m| m.1).as_deref(), Some(" /help me"));
    // A known command still runs.
    send(&mut app, "/help");
    assert!(app.overlay.is_some());
    press(&mut app, key(KeyCode::Esc));
    // An unknown `/word` is not sent: the notice says how to send it, and
    // the text stays in the box (nothing typed is lost).
    let sent = send(&mut app, "/hepl");
    assert!(sent.is_empty(), "{sent:?}");
    let shown = screen(&app, 120, 30);
    assert!(shown.contains("unknown command /hepl"), "{shown}");
    assert!(shown.contains("//hepl"), "the escape is offered:\n{shown}");
    assert_eq!(app.input.text(), "/hepl");
}

/// Defect 5: Tab on a partial command moved the focus (`/f` matches
/// `/find` and `/fork`, so there was nothing to complete).
#[test]
fn defect_5_tab_completes_from_a_list_and_never_moves_focus() {
    let mut app = app();
    type_text(&mut app, "/f");
    press(&mut app, key(KeyCode::Down));
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.focus, Focus::Input, "Tab moved the focus away");
    // Down selected the second of /fork and /find (help's order); Tab
    // took it, with a space: it needs an argument.
    assert_eq!(app.input.text(), "/find ");
    // A list above the input: each command with what it does.
    app.input.clear();
    type_text(&mut app, "/f");
    let shown = screen(&app, 120, 30);
    assert!(
        shown.contains("/find TEXT") && shown.contains("highlight TEXT in the conversation"),
        "{shown}"
    );
    assert!(
        shown.contains("/fork") && shown.contains("copy this session into a new one"),
        "{shown}"
    );
    press(&mut app, key(KeyCode::Down));
    // The selected row (the second) reversed.
    let drawn = crate::tui::buffer(&app, 100, 24);
    let shown = format!(
        "{}\n{}",
        crate::tui::text(&drawn),
        crate::tui::styles(&drawn, 17..19)
    );
    insta::assert_snapshot!("completion_list", shown);
    press(&mut app, key(KeyCode::Up));
    // Tab takes the first.
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.input.text(), "/fork");
    assert_eq!(app.focus, Focus::Input);
    // Every command listed at once, drawn at any size without a panic.
    app.input.clear();
    type_text(&mut app, "/");
    for (w, h) in [(20, 5), (10, 3), (40, 8), (200, 60)] {
        let shown = screen(&app, w, h);
        assert!(h < 20 || shown.contains("/help"), "{w}x{h}:\n{shown}");
    }
    // Tab on a command nothing matches stays in the box too.
    app.input.clear();
    type_text(&mut app, "/zz");
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(
        (app.focus, app.input.text().as_str()),
        (Focus::Input, "/zz")
    );
    // Esc closes the list and leaves the text.
    app.input.clear();
    type_text(&mut app, "/th");
    assert!(screen(&app, 120, 30).contains("switch theme"));
    press(&mut app, key(KeyCode::Esc));
    assert!(!screen(&app, 120, 30).contains("switch theme"));
    assert_eq!(app.input.text(), "/th");
    // Enter takes the selection too: `/he` + Enter opens the help.
    app.input.clear();
    type_text(&mut app, "/he");
    press(&mut app, key(KeyCode::Enter));
    assert!(app.overlay.is_some(), "{}", screen(&app, 120, 30));
    press(&mut app, key(KeyCode::Esc));
    // A command recalled from history leaves Up to the history.
    send(&mut app, "an older message");
    send(&mut app, "/help");
    press(&mut app, key(KeyCode::Esc));
    press(&mut app, key(KeyCode::Up));
    assert_eq!(app.input.text(), "/help");
    press(&mut app, key(KeyCode::Up));
    assert_eq!(app.input.text(), "an older message");
}

/// Defect 10: MCP failure notices made a session of their own, which the
/// picker listed and the input could be pointed at.
#[test]
fn defect_10_notices_of_no_session_make_no_session() {
    let mut app = app();
    app.apply(Event {
        agent: None,
        submission: None,
        session: egirl::mcp::NOTICE_SESSION.into(),
        origin: Origin::Tui,
        kind: EventKind::Notice(Notice {
            message: "MCP server `web` failed: connection refused".into(),
        }),
    });
    // Still shown where the user is looking.
    let shown = screen(&app, 120, 30);
    assert!(shown.contains("MCP server `web` failed"), "{shown}");
    assert_eq!(
        app.sessions.keys().collect::<Vec<_>>(),
        [SESSION],
        "a notice became a session"
    );
    // Ctrl+T has only the TUI's own session to show.
    press(&mut app, ctrl('t'));
    let shown = screen(&app, 120, 30);
    assert!(!shown.contains("· mcp ·"), "{shown}");
    assert_eq!(app.session, SESSION);
}

/// Defect 14: below 100x30 the side panes fold into tabs, and the hits of
/// `/memory Q` landed in a tab nobody was looking at.
#[test]
fn defect_14_memory_hits_show_on_a_small_terminal() {
    let mut app = app();
    let sent = send(&mut app, "/memory dentist");
    let asked = sent
        .iter()
        .find(|s| matches!(s.op, Op::Command { .. }))
        .expect("the search went out");
    app.apply(Event {
        agent: None,
        submission: Some(asked.id.clone()),
        session: SESSION.into(),
        origin: Origin::Tui,
        kind: EventKind::MemoryHits(MemoryHits {
            query: "dentist".into(),
            hits: vec![MemoryHit {
                path: "memory/2026-11-20.md".into(),
                start_line: 3,
                end_line: 4,
                best_line: 3,
                score: 0.91,
                snippet: "dentist on Tuesday at 9".into(),
                ..Default::default()
            }],
        }),
    });
    for (w, h) in [(99, 29), (80, 24), (60, 16)] {
        let shown = screen(&app, w, h);
        assert!(
            shown.contains("memory/2026-11-20.md") || shown.contains("1 memory hit"),
            "{w}x{h}: the hits are nowhere to be seen:\n{shown}"
        );
    }
}

/// Defect 6: with no remote provider `/remote` said "next turn: remote" and
/// the turn ran locally; `/escalate` sent a made-up message to the local
/// model. Both say there is none, and send nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defect_6_remote_and_escalate_say_there_is_no_remote() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text("local answer"));
    let dir = crate::tui::pty::fake_model_dir(&fake);
    let mut pty = Pty::spawn(dir.path());
    pty.wait_for("Type a message").await;
    pty.send("hi\r");
    pty.wait_for("local answer").await;
    let chats = || fake.requests_to("/v1/chat/completions").len();
    let before = chats();

    pty.send("/escalate\r");
    pty.wait_for("/escalate: no remote provider").await;
    pty.send("/remote\r");
    pty.wait_for("/remote: no remote provider").await;
    let shown = pty.contents();
    assert!(!shown.contains("next turn: remote"), "{shown}");
    assert!(!shown.contains("Please escalate"), "{shown}");
    // Give a wrongly sent message time to reach the model.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(chats(), before, "something was sent to the local model");
    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));
}

/// The status line's row.
fn status_row(app: &App, width: u16, height: u16) -> String {
    screen(app, width, height)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string()
}

/// Gap "signs of life": while a turn runs the status line counts its
/// seconds, and a running tool's, and says Esc interrupts; the loop wakes
/// once a second only then (an idle TUI has no timer).
#[test]
fn gap_a_running_turn_shows_its_time_and_that_esc_interrupts() {
    let mut app = app();
    assert_eq!(app.next_deadline(), None);
    app.apply(ev(EventKind::TurnStarted(TurnStarted {
        text: "list the files".into(),
        ..Default::default()
    })));
    // The clock the timers count to moves only with ticks: half a second
    // past each whole one, so the labels are the same on a slow machine.
    let t0 = Instant::now();
    let first = app.next_deadline().expect("a timer while the turn runs");
    assert!(first <= t0 + Duration::from_secs(1));
    app.tick(t0 + Duration::from_secs(7));
    app.apply(ev(EventKind::ToolCall(ToolCallEvent {
        id: "c1".into(),
        name: "exec".into(),
        arguments: serde_json::json!({"command": "ls -la"}),
        sandbox: None,
    })));
    app.tick(t0 + Duration::from_millis(65_500));
    insta::assert_snapshot!("working_timer", status_row(&app, 160, 30));
    // Narrower, the tool's timer gives way to the context meter.
    let row = status_row(&app, 120, 30);
    assert!(
        row.contains("ctx 0/32.8k") && row.contains("working… 1m 05s · esc to interrupt"),
        "{row}"
    );
    // From JSON: fields other branches add to results keep their defaults.
    let result: ToolResultEvent = serde_json::from_value(serde_json::json!({
        "id": "c1", "name": "exec", "success": true, "output": "Cargo.toml", "duration_ms": 58_000
    }))
    .expect("a tool result");
    app.apply(ev(EventKind::ToolResult(result)));
    let row = status_row(&app, 120, 30);
    assert!(row.contains("working… 1m 05s · esc to interrupt"), "{row}");
    app.apply(ev(EventKind::TurnEnded(TurnEnded { interrupted: false })));
    assert!(!status_row(&app, 120, 30).contains("working"));
    assert_eq!(app.next_deadline(), None, "idle: no timer");
}

/// Gap: Esc interrupts a running turn (as in codex and Claude Code), but
/// what is open on top takes it first: the completion list, the help.
#[test]
fn gap_esc_interrupts_a_running_turn_after_closing_what_is_open() {
    let mut app = app();
    // Idle, Esc sends nothing.
    assert!(ops(press(&mut app, key(KeyCode::Esc))).is_empty());
    app.apply(ev(EventKind::TurnStarted(TurnStarted {
        text: "go".into(),
        ..Default::default()
    })));
    type_text(&mut app, "/th");
    assert!(
        ops(press(&mut app, key(KeyCode::Esc))).is_empty(),
        "closes the list"
    );
    app.input.clear();
    press(&mut app, key(KeyCode::Char('?')));
    assert!(
        ops(press(&mut app, key(KeyCode::Esc))).is_empty(),
        "closes the help"
    );
    assert_eq!(app.overlay, None);
    let sent = ops(press(&mut app, key(KeyCode::Esc)));
    assert!(
        matches!(sent.as_slice(), [Op::Interrupt { session }] if session == SESSION),
        "{sent:?}"
    );
}

/// Gap: the picker names each session by its first message, the live ones
/// and those only on disk.
#[test]
fn gap_picker_rows_show_the_first_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).expect("sessions dir");
    std::fs::write(
        sessions.join("tui-earlier.jsonl"),
        concat!(
            r#"{"ts":"2026-11-20T10:00:00Z","origin":"tui","role":"user","content":"plan the trip to Porto\nwith the kids"}"#,
            "\n",
            r#"{"ts":"2026-11-20T10:00:05Z","origin":"tui","role":"assistant","content":"Sure."}"#,
            "\n"
        ),
    )
    .expect("transcript");
    let mut app = app();
    app.sessions_dir = Some(sessions);
    apply_all(&mut app, turn("what's the weather", "Sunny."));
    press(&mut app, ctrl('s'));
    let shown = screen(&app, 120, 30);
    // The titles line up in one column after the ids.
    let row = |id: &str, title: &str| {
        shown.lines().any(|l| {
            l.split_once(id)
                .is_some_and(|(_, rest)| rest.trim_start().starts_with(title))
        })
    };
    assert!(row("tui-earlier", "plan the trip to Porto"), "{shown}");
    assert!(row(SESSION, "what's the weather"), "{shown}");
}

/// Gap "prompt history across runs": `--session ID` brings back that
/// session's messages to Up; Esc interrupts the running turn; on exit the
/// command that resumes the session is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap_history_across_runs_esc_interrupts_and_the_resume_command() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::hang());
    let dir = crate::tui::pty::fake_model_dir(&fake);
    let sessions = dir.path().join("ws/sessions");
    std::fs::create_dir_all(&sessions).expect("sessions dir");
    let line = |role: &str, content: &str| {
        format!(
            "{{\"ts\":\"2026-11-20T10:00:00Z\",\"origin\":\"tui\",\"role\":\"{role}\",\"content\":\"{content}\"}}\n"
        )
    };
    let transcript = [
        line("user", "first question"),
        line("assistant", "first answer"),
        line("user", "second question"),
        line("assistant", "second answer"),
    ]
    .concat();
    std::fs::write(sessions.join("resume-me.jsonl"), transcript).expect("transcript");

    let mut pty = Pty::launch(Launch {
        bin: env!("CARGO_BIN_EXE_egirl").into(),
        args: vec![
            "--config".into(),
            dir.path().join("egirl.toml").display().to_string(),
            "--session".into(),
            "resume-me".into(),
        ],
        home: dir.path(),
        watch: Vec::new(),
    });
    pty.wait_for("resumed resume-me").await;
    // The input box's row starts with its thick border.
    pty.send("\x1b[A");
    pty.wait_for("┃ second question").await;
    pty.send("\x1b[A");
    pty.wait_for("┃ first question").await;
    pty.send("\x1b[B\x1b[B");
    pty.wait_for("Message egirl · Enter sends").await;

    pty.send("take your time\r");
    pty.wait_for("esc to interrupt").await;
    pty.send("\x1b");
    pty.wait_for("interrupted").await;

    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));
    pty.wait_for("resume this session: egirl --session resume-me")
        .await;
}

/// Review: an error that is no model request's (here `/fork` of a session
/// with no transcript yet) said the local server was failing on the status
/// line until the next answer, while `/health` answered all along.
#[test]
fn review_an_error_outside_a_turn_does_not_say_the_local_server_fails() {
    let mut app = app();
    app.set_local_health(true);
    app.apply(ev(EventKind::Error(egirl::protocol::ErrorEvent {
        message: "cannot fork: no session `tui-test` in ws/sessions".into(),
    })));
    let status = |app: &App| {
        let shown = screen(app, 120, 30);
        shown.lines().last().unwrap_or_default().to_string()
    };
    assert!(
        status(&app).contains("127.0.0.1:8080 up"),
        "{}",
        status(&app)
    );

    // A turn whose model request failed still says so.
    let mut failed = turn("hello", "");
    failed.truncate(2); // started and routed, no answer
    failed.push(ev(EventKind::Error(egirl::protocol::ErrorEvent {
        message: "connection refused".into(),
    })));
    apply_all(&mut app, failed);
    assert!(status(&app).contains("failing"), "{}", status(&app));
}

/// Review: a message sent as `//help me` is in the transcript as
/// `/help me`; recalled with Up after `--session ID` (or put back by
/// `/rewind`) and sent again, it ran `/help` instead of going to the model.
#[test]
fn review_a_recalled_message_that_starts_with_a_slash_is_sent_as_a_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.jsonl");
    let line = |role: &str, content: &str| {
        format!(
            "{{\"ts\":\"2026-11-20T10:00:00Z\",\"origin\":\"tui\",\"role\":\"{role}\",\"content\":\"{content}\"}}\n"
        )
    };
    let transcript = [
        line("user", "/etc/hosts is wrong"),
        line("assistant", "fixed"),
        line("user", "/help me"),
        line("assistant", "sure"),
    ]
    .concat();
    std::fs::write(&path, transcript).expect("transcript");
    let records = egirl::sessions::load(&path).expect("load");
    let mut app = app();
    app.load_history(SESSION, &records);

    press(&mut app, key(KeyCode::Up));
    let sent = submissions(press(&mut app, key(KeyCode::Enter)));
    assert!(app.overlay.is_none(), "the recalled message ran /help");
    assert_eq!(message(&sent).map(|m| m.1).as_deref(), Some("/help me"));
    // A path was a message already: recalled as it was sent.
    press(&mut app, key(KeyCode::Up));
    press(&mut app, key(KeyCode::Up));
    assert_eq!(app.input.text(), "/etc/hosts is wrong");
}

/// Review: the picker's columns did not fit their width: at 80 columns
/// the last one read `on dis`; at 40 the title was left out and every row
/// read `TUI  tui-202…  1m`, the same for every session. On a narrow
/// picker the title wins over the generated id, and nothing is cut.
#[test]
fn review_picker_rows_fit_a_narrow_terminal_and_keep_the_title() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).expect("sessions dir");
    std::fs::write(
        sessions.join("tui-20261120-100000-abcdef.jsonl"),
        concat!(
            r#"{"ts":"2026-11-20T10:00:00Z","origin":"tui","role":"user","content":"plan the trip"}"#,
            "\n",
        ),
    )
    .expect("transcript");
    let mut app = app();
    app.sessions_dir = Some(sessions);
    apply_all(&mut app, turn("weather", "Sunny."));
    press(&mut app, ctrl('s'));
    let shown = screen(&app, 80, 24);
    assert!(shown.contains("on disk "), "the state is cut:\n{shown}");
    assert!(shown.contains("plan the trip"), "{shown}");
    let shown = screen(&app, 40, 12);
    assert!(shown.contains("TUI  plan the trip"), "{shown}");
    assert!(shown.contains("TUI  weather"), "{shown}");
}

/// Review: a command that takes no argument ran with the rest of the
/// line thrown away: `/new plan for the app` started a session and the
/// words were gone from the box, `/clear what I said about X` cleared the
/// history. Such a line stays in the box with a notice, as an unknown
/// `/word` does.
#[test]
fn review_a_command_that_takes_no_argument_does_not_run_with_one() {
    let mut app = app();
    apply_all(&mut app, turn("hello", "Hi."));
    for line in ["/new plan for the app", "/clear what I said about X"] {
        let sent = send(&mut app, line);
        assert!(sent.is_empty(), "{line}: {sent:?}");
        assert_eq!(app.session, SESSION, "{line}");
        assert_eq!(app.input.text(), line, "the text stays in the box");
        let shown = screen(&app, 120, 30);
        let name = line.split(' ').next().unwrap_or_default();
        assert!(
            shown.contains(&format!("{name} takes no argument")),
            "{shown}"
        );
        assert!(shown.contains(&format!("/{name} …")), "the escape: {shown}");
        app.input.clear();
    }
    // Alone, they run; a command with an argument takes it.
    assert!(send(&mut app, "/new").is_empty());
    assert_ne!(app.session, SESSION);
}

/// Review: Ctrl+F replaced the message being typed with `/find `: the
/// draft was gone for good (it was never sent, so not in the history).
/// It goes to the history now, and Up brings it back.
#[test]
fn review_ctrl_f_keeps_the_message_being_typed() {
    let mut app = app();
    apply_all(&mut app, turn("hello", "Hi there."));
    type_text(&mut app, "a long draft I was writing");
    press(&mut app, ctrl('f'));
    assert_eq!(app.input.text(), "/find ");
    type_text(&mut app, "Hi");
    press(&mut app, key(KeyCode::Enter));
    let shown = screen(&app, 120, 30);
    assert!(shown.contains("Up brings it back"), "{shown}");
    press(&mut app, key(KeyCode::Esc));
    press(&mut app, key(KeyCode::Up));
    press(&mut app, key(KeyCode::Up));
    assert_eq!(app.input.text(), "a long draft I was writing");
}

/// Review: Ctrl+F then Esc (leaving the find before running it) while a
/// turn ran interrupted the turn: the find prompt in the box was not
/// taken for something open. Esc closes it first; the next Esc interrupts.
#[test]
fn review_esc_leaves_a_find_being_typed_before_it_interrupts() {
    let mut app = app();
    app.apply(ev(EventKind::TurnStarted(TurnStarted {
        text: "think hard".into(),
        ..Default::default()
    })));
    press(&mut app, ctrl('f'));
    type_text(&mut app, "porto");
    let sent = ops(press(&mut app, key(KeyCode::Esc)));
    assert!(sent.is_empty(), "Esc interrupted the turn: {sent:?}");
    assert!(app.input.is_empty(), "{}", app.input.text());
    let sent = ops(press(&mut app, key(KeyCode::Esc)));
    assert!(
        matches!(sent.as_slice(), [Op::Interrupt { session }] if session == SESSION),
        "{sent:?}"
    );
}
