//! Which agent an op goes to, through a core without a model: commands
//! answered beside the turns (`/approvals`) and a worker's (`fork`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::bus::EventReceiver;
use crate::config::{Config, parse};
use crate::protocol::{Command, Event, EventKind, Op, Submission};

fn config(root: &Path, agents: bool) -> Config {
    let mut text = format!(
        "[workspace]\npath = \"{}\"\n[local]\nendpoint = \"http://127.0.0.1:9\"\n",
        root.join("workspace").display()
    );
    if agents {
        text.push_str("[agents.work]\n[agents.home]\n");
    }
    parse(&text, Path::new("egirl.toml")).unwrap()
}

/// A core on `config`, its default workspace made as start-up makes it.
fn core(config: Config) -> (super::super::AgentHandle, EventReceiver, PathBuf) {
    let path = crate::config::expand_home(&config.workspace.path);
    let (workspace, _) = crate::workspace::ensure(&path).unwrap();
    let (handle, _task) = super::super::spawn(config, workspace.clone(), Vec::new());
    let events = handle.bus.subscribe();
    (handle, events, workspace)
}

fn list(session: &str) -> Op {
    Op::Command {
        session: session.into(),
        command: Command::ListApprovals,
    }
}

/// The next event that is not a notice (memory, MCP) of no session.
async fn next(events: &mut EventReceiver) -> Event {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), events.recv())
            .await
            .expect("an event in time")
            .expect("the bus is open");
        if !matches!(event.kind, EventKind::Notice(_)) {
            return event;
        }
    }
}

#[tokio::test]
async fn a_named_agent_answers_and_only_its_workspace_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, mut events, _) = core(config(dir.path(), true));
    let agents_dir = dir.path().join("agents");
    assert!(
        !agents_dir.join("work").exists(),
        "nothing before its first op"
    );
    assert!(handle.submit_to("work", list("s1")));
    let event = next(&mut events).await;
    assert_eq!(event.agent.as_deref(), Some("work"));
    assert!(
        matches!(event.kind, EventKind::ApprovalRules(_)),
        "{event:?}"
    );
    let work = agents_dir.join("work").join("workspace");
    assert!(work.join("SOUL.md").is_file(), "made from the templates");
    assert!(!agents_dir.join("home").exists(), "home was never used");
    // Unnamed, a session of no agent is the default's.
    handle.submit(list("s2"));
    assert_eq!(next(&mut events).await.agent.as_deref(), Some("default"));
    assert_eq!(handle.agents(), ["default", "home", "work"]);
}

#[tokio::test]
async fn a_live_session_stays_with_its_agent() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, mut events, _) = core(config(dir.path(), true));
    let fork = Op::Command {
        session: "live".into(),
        command: Command::Fork,
    };
    handle.submit_to("home", fork);
    let forked = next(&mut events).await;
    assert_eq!(forked.agent.as_deref(), Some("home"), "{forked:?}");
    handle.submit(list("live"));
    let event = next(&mut events).await;
    assert_eq!(
        (event.session.as_str(), event.agent.as_deref()),
        ("live", Some("home"))
    );
}

#[tokio::test]
async fn a_session_not_live_goes_to_the_agent_holding_its_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), true);
    let sessions = config.agent_workspace("work").join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join("old-1.jsonl"), "").unwrap();
    let (handle, mut events, _) = core(config);
    handle.submit(list("old-1"));
    assert_eq!(next(&mut events).await.agent.as_deref(), Some("work"));
}

#[tokio::test]
async fn an_unknown_agent_is_one_error_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, mut events, _) = core(config(dir.path(), true));
    let message = Op::UserMessage {
        session: "s".into(),
        origin: crate::protocol::Origin::Cli,
        text: "hello".into(),
        images: Vec::new(),
    };
    handle.submit_with(Submission::to_agent("x", message));
    let event = next(&mut events).await;
    let EventKind::Error(error) = &event.kind else {
        panic!("not an error: {event:?}");
    };
    assert_eq!(
        error.message,
        "no agent `x`: the config declares default, home, work"
    );
    assert!(matches!(
        next(&mut events).await.kind,
        EventKind::TurnEnded(_)
    ));
    // Counted out: nothing is left running.
    tokio::time::timeout(Duration::from_secs(5), handle.idle())
        .await
        .expect("idle");
    assert!(!dir.path().join("agents").join("x").exists());
    handle.submit_to("x", list("s"));
    assert!(matches!(next(&mut events).await.kind, EventKind::Error(_)));
}

#[tokio::test]
async fn without_agents_events_name_none() {
    let dir = tempfile::tempdir().unwrap();
    let (handle, mut events, _) = core(config(dir.path(), false));
    handle.submit(list("s"));
    let event = next(&mut events).await;
    assert!(matches!(event.kind, EventKind::ApprovalRules(_)));
    assert_eq!(event.agent, None);
    handle.submit_to("work", list("s"));
    let EventKind::Error(error) = next(&mut events).await.kind else {
        panic!("not an error");
    };
    assert_eq!(
        error.message,
        "no agent `work`: the config declares default"
    );
}

#[tokio::test]
async fn agents_on_the_same_endpoints_share_one_pool() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[workspace]\npath = \"{}\"\n[local]\nendpoint = \"http://127.0.0.1:9\"\n\
         [local.fast]\nendpoint = \"http://127.0.0.1:10\"\n\
         [agents.work]\n[agents.home]\nmodel = \"fast\"\n",
        dir.path().join("workspace").display()
    );
    let config = parse(&text, Path::new("egirl.toml")).unwrap();
    let (workspace, _) = crate::workspace::ensure(&dir.path().join("workspace")).unwrap();
    let common = super::super::start::Common::new(
        config,
        workspace.clone(),
        Vec::new(),
        Default::default(),
        crate::tools::sandbox::ProtectedPaths::new(&workspace, None, &[]),
        Default::default(),
    );
    let state = |name| super::super::start::agent_state(&common, name).unwrap();
    let (default, work, home) = (state("default"), state("work"), state("home"));
    assert!(std::sync::Arc::ptr_eq(&default.main, &work.main));
    let fast = default.fast.as_ref().expect("[local.fast]");
    assert!(
        std::sync::Arc::ptr_eq(fast, &home.main),
        "home's main is the fast pool"
    );
    assert_eq!(common.pools().len(), 2);
    // Each agent's protection names the others' workspaces, not its own.
    let home_file = home.workspace.join("SOUL.md");
    assert!(work.protected.read_refusal(&home_file, "x").is_some());
    assert!(home.protected.read_refusal(&home_file, "x").is_none());
}

#[tokio::test]
async fn another_agents_workspace_in_an_allowed_path_exists_before_any_command() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), true);
    let path = crate::config::expand_home(&config.workspace.path);
    let (workspace, _) = crate::workspace::ensure(&path).unwrap();
    // Every agent's workspace lies in this allowed path.
    let allowed = vec![dir.path().canonicalize().unwrap()];
    let (handle, _task) = super::super::spawn(config, workspace, allowed);
    let mut events = handle.bus.subscribe();
    assert!(handle.submit_to("work", list("s1")));
    assert_eq!(next(&mut events).await.agent.as_deref(), Some("work"));
    // Made empty, so the sandbox can lay its empty read-only directory
    // over it: work's commands cannot plant a SOUL.md for home.
    let home = dir.path().join("agents").join("home").join("workspace");
    assert!(home.is_dir(), "home's workspace is reserved");
    assert!(
        !home.join("SOUL.md").exists(),
        "home's templates wait for home"
    );
}
