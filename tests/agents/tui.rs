//! Agents in the TUI (agents-tui): which agent the input goes to
//! (`/agent`), the agent beside each header's origin and on the status
//! line, `/sessions` grouped by agent, `/cron` of the current agent, and
//! `egirl stats` split by agent. App-level: events are built here, as the
//! core stamps them (`Event.agent`), and the submissions are the App's
//! effects, as the loop hands them to the link.

use std::collections::BTreeMap;
use std::path::Path;

use crossterm::event::KeyCode;
use egirl::protocol::{
    ApprovalRequest, EventKind, FinalAnswer, Op, Origin, Submission, TurnEnded, TurnStarted,
};
use egirl::surfaces::tui::agents::{AgentDirectory, ONE_AGENT};
use egirl::surfaces::tui::{App, Overlay};
use insta::assert_snapshot;

use crate::tripups::commands::submissions;
use crate::tui::{SESSION, app, arm, ev_from, key, press, screen, type_text};

/// `default`, `home` and `work`, the TUI bound to `work`, cron to `home`;
/// workspaces under `root` when given.
fn agents(root: Option<&Path>) -> AgentDirectory {
    let names = ["default", "home", "work"].map(String::from).to_vec();
    let workspaces: BTreeMap<String, std::path::PathBuf> = match root {
        Some(root) => names
            .iter()
            .map(|n| (n.clone(), root.join(n).join("workspace")))
            .collect(),
        None => BTreeMap::new(),
    };
    AgentDirectory {
        names,
        workspaces,
        tui: "work".into(),
        cron: "home".into(),
    }
}

pub(super) fn with_agents(root: Option<&Path>) -> App {
    let mut app = app();
    app.set_agents(agents(root), Vec::new());
    app
}

pub(super) fn send(app: &mut App, text: &str) -> Vec<Submission> {
    type_text(app, text);
    submissions(press(app, key(KeyCode::Enter)))
}

/// An event of `session` stamped with `agent`, as the core sends it.
pub(super) fn of_agent(
    agent: &str,
    session: &str,
    origin: Origin,
    kind: EventKind,
) -> egirl::protocol::Event {
    let mut event = ev_from(session, origin, kind);
    event.agent = Some(agent.into());
    event
}

pub(super) fn last_notice(app: &App) -> String {
    app.conversation
        .entries
        .last()
        .map(|e| e.text.clone())
        .unwrap_or_default()
}

#[test]
fn agent_home_then_typing_sends_to_home_and_the_first_session_is_the_tui_bindings() {
    let mut app = with_agents(None);
    let first = send(&mut app, "hello work");
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].agent.as_deref(), Some("work"));
    assert!(matches!(&first[0].op, Op::UserMessage { session, .. } if session == SESSION));

    assert!(send(&mut app, "/agent home").is_empty());
    assert_ne!(
        app.session, SESSION,
        "a new session of home takes the input"
    );
    let sent = send(&mut app, "hello home");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].agent.as_deref(), Some("home"));
    assert!(matches!(&sent[0].op, Op::UserMessage { session, text, .. }
        if *session == app.session && text == "hello home"));
    // Ctrl+C on a running turn interrupts it at its own agent.
    let home_session = app.session.clone();
    app.apply(of_agent(
        "home",
        &home_session,
        Origin::Tui,
        EventKind::TurnStarted(TurnStarted {
            text: "hello home".into(),
            ..Default::default()
        }),
    ));
    let ctrl_c = crossterm::event::KeyEvent::new(
        KeyCode::Char('c'),
        crossterm::event::KeyModifiers::CONTROL,
    );
    let interrupt = submissions(press(&mut app, ctrl_c));
    assert!(
        matches!(&interrupt[..], [s] if s.agent.as_deref() == Some("home")
        && matches!(s.op, Op::Interrupt { .. }))
    );
}

#[test]
fn a_session_of_another_agent_is_answered_as_that_agent() {
    let mut app = with_agents(None);
    let discord = Origin::Discord("general".into());
    app.apply(of_agent(
        "home",
        "discord-1",
        discord.clone(),
        EventKind::TurnStarted(TurnStarted {
            text: "from discord".into(),
            ..Default::default()
        }),
    ));
    app.pick_session("discord-1");
    assert_eq!(app.current_agent(), Some("home"));
    let sent = send(&mut app, "from the desk");
    assert_eq!(sent[0].agent.as_deref(), Some("home"));
    // An approval it asks for is answered at its agent too.
    app.apply(of_agent(
        "home",
        "discord-1",
        discord,
        EventKind::ApprovalRequest(ApprovalRequest {
            id: "ap-1".into(),
            tool: "exec".into(),
            command: "ls".into(),
            cwd: "/w".into(),
            rule: None,
            rule_covers: None,
            sandbox: None,
            escalation: None,
        }),
    ));
    arm(&mut app);
    let decided = submissions(press(&mut app, key(KeyCode::Char('y'))));
    assert!(
        matches!(&decided[..], [s] if s.agent.as_deref() == Some("home")
        && matches!(s.op, Op::ApprovalDecision { .. }))
    );
}

#[test]
fn an_unknown_agent_leaves_the_input_and_lists_the_agents() {
    let mut app = with_agents(None);
    let before = app.session.clone();
    assert!(send(&mut app, "/agent x").is_empty());
    assert_eq!(app.session, before);
    assert_eq!(app.input.text(), "/agent x");
    assert_eq!(
        last_notice(&app),
        "unknown agent x: the agents are default, home, work"
    );
    assert_eq!(app.current_agent(), Some("work"));
}

#[test]
fn without_agents_agent_says_how_to_add_one_and_nothing_names_an_agent() {
    let mut app = app();
    assert!(send(&mut app, "/agent home").is_empty());
    assert_eq!(last_notice(&app), ONE_AGENT);
    assert!(ONE_AGENT.contains("docs/agents.md"));
    let sent = send(&mut app, "hi");
    assert_eq!(sent[0].agent, None);
    let shown = screen(&app, 100, 30);
    let status = shown.lines().last().unwrap_or_default();
    assert!(!status.contains("agent"), "{status}");
    // Help and completion do not offer it.
    assert!(egirl::surfaces::tui::commands::matches(&app, "/ag").is_empty());
    type_text(&mut app, "/ag");
    let shown = screen(&app, 100, 30);
    assert!(!shown.contains("what you type next"), "{shown}");
}

#[test]
fn agent_alone_opens_a_picker_and_enter_switches() {
    let mut app = with_agents(None);
    assert!(send(&mut app, "/agent").is_empty());
    assert_eq!(app.overlay, Some(Overlay::Agents));
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("Agent · Enter"), "{shown}");
    assert!(shown.contains("● work"), "{shown}");
    assert_snapshot!("agent_picker", shown);
    press(&mut app, key(KeyCode::Up));
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.overlay, None);
    assert_eq!(app.current_agent(), Some("home"));
}

/// Two agents' sessions side by side: each header names its agent, the
/// status line the one the input goes to.
#[test]
fn badges_name_the_agent_beside_the_origin() {
    let mut app = with_agents(None);
    let discord = Origin::Discord("123".into());
    let mut events = Vec::new();
    for (agent, session, origin, asked, answer) in [
        (
            "work",
            SESSION,
            Origin::Tui,
            "build the release",
            "Building it now.",
        ),
        (
            "home",
            "discord-123",
            discord,
            "what's for dinner?",
            "Pasta, from the list.",
        ),
    ] {
        events.push(of_agent(
            agent,
            session,
            origin.clone(),
            EventKind::TurnStarted(TurnStarted {
                text: asked.into(),
                ..Default::default()
            }),
        ));
        events.push(of_agent(
            agent,
            session,
            origin.clone(),
            EventKind::Final(FinalAnswer {
                text: answer.into(),
            }),
        ));
        events.push(of_agent(
            agent,
            session,
            origin,
            EventKind::TurnEnded(TurnEnded { interrupted: false }),
        ));
    }
    for event in events {
        app.apply(event);
    }
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("you  work · TUI"), "{shown}");
    assert!(shown.contains("egirl  home · Discord #123"), "{shown}");
    assert!(shown.contains("agent work"), "{shown}");
    assert_snapshot!("agents_badges", shown);
    // Each agent in its own color, the same on the status line.
    let buf = crate::tui::buffer(&app, 100, 30);
    let (work, home) = (buf[(7, 1)].fg, buf[(9, 7)].fg);
    assert_ne!(work, home);
    assert_eq!(buf[(9, 4)].fg, work);
    assert_eq!(buf[(17, 29)].fg, work);
}

/// A transcript of one question in `workspace/sessions/ID.jsonl`.
fn transcript(workspace: &Path, id: &str, origin: &str, said: &str) {
    let dir = workspace.join("sessions");
    std::fs::create_dir_all(&dir).expect("sessions dir");
    let lines = [
        serde_json::json!({"ts": "2026-11-20T10:00:00Z", "origin": origin, "role": "user", "content": said}),
        serde_json::json!({"ts": "2026-11-20T10:00:01Z", "origin": origin, "role": "assistant", "content": format!("answer to {said}")}),
    ];
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(dir.join(format!("{id}.jsonl")), text.join("\n") + "\n").expect("write");
}

#[test]
fn sessions_group_by_agent_and_resume_as_their_agent() {
    let root = tempfile::tempdir().expect("tempdir");
    let ws = |agent: &str| root.path().join(agent).join("workspace");
    transcript(&ws("home"), "tui-home-old", "tui", "groceries for the week");
    transcript(
        &ws("work"),
        "discord-work-old",
        "discord:123",
        "the deploy failed",
    );
    transcript(
        &ws("default"),
        "tui-default-old",
        "tui",
        "hello from before agents",
    );
    let mut app = with_agents(Some(root.path()));
    assert!(send(&mut app, "/sessions").is_empty());
    assert_eq!(app.overlay, Some(Overlay::Sessions));
    let mut rows: Vec<(String, String)> = app
        .picker
        .rows
        .iter()
        .map(|r| (r.agent.clone().unwrap_or_default(), r.id.clone()))
        .collect();
    // Grouped in the config's order (default, home, work).
    let agents: Vec<&str> = rows.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(agents, ["default", "home", "work", "work"], "{rows:?}");
    rows.sort();
    let want = [
        ("default", "tui-default-old"),
        ("home", "tui-home-old"),
        ("work", "discord-work-old"),
        ("work", SESSION),
    ]
    .map(|(a, i)| (a.to_string(), i.to_string()));
    assert_eq!(rows, want);
    let shown = screen(&app, 100, 30);
    for heading in [
        "default  1 sessions",
        "home  1 sessions",
        "work  2 sessions",
    ] {
        assert!(shown.contains(heading), "{heading}: {shown}");
    }
    let (home, work) = (
        shown.find("home  1").unwrap_or(usize::MAX),
        shown.find("work  2").unwrap_or(0),
    );
    assert!(home < work, "{shown}");
    // Resumed as its agent: its transcript shows, the input goes to home.
    let at = app
        .picker
        .rows
        .iter()
        .position(|r| r.id == "tui-home-old")
        .expect("listed");
    press(&mut app, key(KeyCode::Home));
    for _ in 0..at {
        press(&mut app, key(KeyCode::Down));
    }
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.session, "tui-home-old");
    assert_eq!(app.current_agent(), Some("home"));
    assert!(screen(&app, 100, 30).contains("groceries for the week"));
    let sent = send(&mut app, "and milk");
    assert_eq!(sent[0].agent.as_deref(), Some("home"));
}

#[test]
fn cron_lists_the_cron_bindings_agent_until_agent_picks_one() {
    use egirl::cron::{CronStore, Job, Schedule};
    let root = tempfile::tempdir().expect("tempdir");
    let ws = |agent: &str| root.path().join(agent).join("workspace");
    for (agent, id) in [("home", "groceries"), ("work", "standup")] {
        std::fs::create_dir_all(ws(agent)).expect("workspace");
        let store = CronStore::in_workspace(&ws(agent));
        let now = chrono::Utc::now();
        store
            .add(Job {
                id: id.into(),
                schedule: Schedule::every("30m").expect("schedule"),
                message: "m".into(),
                deliver: egirl::config::Delivery::Tui,
                enabled: true,
                created_at: now,
                next_run: Some(now + chrono::Duration::minutes(30)),
                last_run: None,
                last_status: None,
                consecutive_errors: 0,
            })
            .expect("add job");
    }
    let mut app = with_agents(Some(root.path()));
    app.sessions_dir = Some(ws("default").join("sessions"));
    send(&mut app, "/cron");
    let listed = last_notice(&app);
    assert!(
        listed.starts_with("cron jobs of agent home (1)"),
        "{listed}"
    );
    assert!(
        listed.contains("groceries") && !listed.contains("standup"),
        "{listed}"
    );
    send(&mut app, "/agent work");
    send(&mut app, "/cron");
    let listed = last_notice(&app);
    assert!(
        listed.contains("standup") && !listed.contains("groceries"),
        "{listed}"
    );
}
