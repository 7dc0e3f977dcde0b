use super::*;
use crate::protocol::Submission;
use crate::surfaces::tui::app::AppOptions;
use crate::surfaces::tui::theme::Theme;

fn app() -> App {
    App::new(AppOptions {
        session: "s".into(),
        theme: Theme::default(),
        theme_dirs: Vec::new(),
        model: "m".into(),
        endpoint: "http://127.0.0.1:1".into(),
        context_length: 1024,
    })
}

fn two_agents() -> AgentDirectory {
    AgentDirectory {
        names: vec!["default".into(), "home".into(), "work".into()],
        workspaces: BTreeMap::new(),
        tui: "work".into(),
        cron: "home".into(),
    }
}

fn message(session: &str) -> Effect {
    Effect::submit(Op::UserMessage {
        session: session.into(),
        origin: Origin::Tui,
        text: "hi".into(),
        images: Vec::new(),
    })
}

fn agent_of(effects: &[Effect]) -> Vec<Option<String>> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Submit(Submission { agent, .. }) => Some(agent.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn without_agents_nothing_is_addressed_and_agent_says_so() {
    let mut app = app();
    assert_eq!(app.current_agent(), None);
    assert_eq!(agent_of(&app.address(vec![message("s")])), [None]);
    app.agent_command("work");
    let last = app.conversation.entries.last().map(|e| e.text.clone());
    assert_eq!(last.as_deref(), Some(ONE_AGENT));
    assert!(app.agents.tag("s").is_none());
}

#[test]
fn the_tui_binding_picks_the_first_agent_and_ops_go_to_their_sessions_agent() {
    let mut app = app();
    app.set_agents(two_agents(), Vec::new());
    assert_eq!(app.current_agent(), Some("work"));
    assert_eq!(app.cron_agent(), Some("home"));
    app.agents.note("discord-1", "home");
    let effects = app.address(vec![message("s"), message("discord-1"), message("new")]);
    let want = [Some("work"), Some("home"), Some("work")].map(|a| a.map(String::from));
    assert_eq!(agent_of(&effects), want);
    // Already addressed: kept.
    let named = Effect::Submit(Submission::to_agent(
        "default",
        Op::Interrupt {
            session: "s".into(),
        },
    ));
    assert_eq!(
        agent_of(&app.address(vec![named])),
        [Some("default".into())]
    );
}

#[test]
fn agent_name_starts_a_session_of_that_agent_and_unknown_changes_nothing() {
    let mut app = app();
    app.set_agents(two_agents(), Vec::new());
    app.agent_command("nobody");
    assert_eq!(app.session, "s");
    let last = app.conversation.entries.last().map(|e| e.text.clone());
    assert_eq!(
        last.as_deref(),
        Some("unknown agent nobody: the agents are default, home, work")
    );
    app.agent_command("home");
    assert_ne!(app.session, "s");
    assert_eq!(app.current_agent(), Some("home"));
    assert_eq!(app.cron_agent(), Some("home"));
    assert_eq!(app.agents.of("s"), Some("work"));
}

#[test]
fn the_picker_opens_on_the_current_agent_and_enter_switches() {
    let mut app = app();
    app.set_agents(two_agents(), Vec::new());
    app.agent_command("");
    assert_eq!(app.overlay, Some(Overlay::Agents));
    assert_eq!(app.agents.picker, 2);
    let key = |code| KeyEvent::new(code, crossterm::event::KeyModifiers::NONE);
    app.agent_picker_key(key(KeyCode::Up));
    app.agent_picker_key(key(KeyCode::Enter));
    assert_eq!(app.overlay, None);
    assert_eq!(app.current_agent(), Some("home"));
}

#[test]
fn colors_are_stable_per_agent_and_distinct_for_the_first_ones() {
    let mut app = app();
    app.set_agents(two_agents(), Vec::new());
    let t = Theme::default();
    let colors: Vec<_> = ["default", "home", "work"]
        .iter()
        .map(|a| t.agent_color(app.agents.color_slot(a)))
        .collect();
    assert_ne!(colors[0], colors[1]);
    assert_ne!(colors[1], colors[2]);
    assert_ne!(colors[0], colors[2]);
    assert_eq!(
        app.agents.color_slot("elsewhere"),
        app.agents.color_slot("elsewhere")
    );
}

#[test]
fn attached_the_daemons_agents_show_and_its_sessions_keep_their_agent() {
    use crate::protocol::wire::{CoreStatus, LiveSession};
    // An older daemon says nothing of agents: nothing changes.
    let old: CoreStatus = serde_json::from_str(r#"{"mcp": []}"#).expect("status");
    assert!(old.agents.is_empty());
    assert!(
        !serde_json::to_string(&old)
            .expect("json")
            .contains("agents")
    );
    let mut app = app();
    assert!(!app.agents_declared(old.agents));
    assert_eq!(app.current_agent(), None);
    // A daemon with agents: they show; the first session is `default`'s
    // (this config binds nothing), a live one keeps its own.
    app.attach(
        "serve pid 7".into(),
        &[LiveSession {
            id: "discord-1".into(),
            origin: "discord:1".into(),
            busy: false,
            agent: Some("home".into()),
        }],
    );
    assert!(app.agents_declared(vec!["default".into(), "home".into()]));
    assert_eq!(app.current_agent(), Some("default"));
    assert_eq!(app.agents.of("discord-1"), Some("home"));
    assert!(!app.agents_declared(vec!["default".into(), "home".into()]));
}

#[test]
fn a_resumed_session_is_found_in_its_agents_workspace_and_stays_its_agents() {
    let root = tempfile::tempdir().expect("tempdir");
    let mut directory = two_agents();
    for name in &directory.names {
        directory
            .workspaces
            .insert(name.clone(), root.path().join(name));
    }
    let home = root.path().join("home").join("sessions");
    std::fs::create_dir_all(&home).expect("dir");
    std::fs::write(home.join("s.jsonl"), "").expect("transcript");
    let mut app = app();
    app.agents.directory = directory;
    assert_eq!(app.find_transcript(), Some(home.join("s.jsonl")));
    assert_eq!(app.agents.of("s"), Some("home"));
    assert_eq!(app.current_agent(), Some("home"));
    assert_eq!(app.transcript_of("s"), Some(home.join("s.jsonl")));
    // A session not on disk anywhere: the start agent's workspace.
    std::fs::remove_file(home.join("s.jsonl")).expect("remove");
    let mut fresh = self::app();
    fresh.set_agents(app.agents.directory.clone(), Vec::new());
    assert_eq!(fresh.find_transcript(), None);
    let work = root.path().join("work").join("sessions").join("s.jsonl");
    assert_eq!(fresh.transcript_of("s"), Some(work));
}
