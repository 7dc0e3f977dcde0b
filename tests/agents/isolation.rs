//! Agents kept apart: workspaces, memory, tools, sessions (agents-core).
//! Through the real binary (`egirl --agent NAME -m`) with the scripted
//! fake model: `home` (the fast model, no `exec`) and `work` (the main one).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::cli::{Cli, events, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

/// Two fake servers (main, fast) and a config declaring `home` and
/// `work`; `<dir>/agents` (both workspaces) is an allowed path, so only
/// the protection of another agent's workspace keeps `work` out of
/// `home`'s.
struct TwoAgents {
    main: FakeLlama,
    fast: FakeLlama,
    cli: Cli,
}

impl TwoAgents {
    async fn start() -> Self {
        let main = FakeLlama::start().await;
        let fast = FakeLlama::start().await;
        // `AGENTS` becomes `<the Cli's dir>/agents` once it exists.
        let extra = format!(
            "[local.fast]\nendpoint = \"{}\"\n\
             [tools]\nallowed_paths = [\"AGENTS\"]\n\
             [agents.home]\nmodel = \"fast\"\n[agents.home.tools]\ndeny = [\"exec\"]\n\
             [agents.work]\n",
            fast.url()
        );
        let cli = Cli::new(&main, &extra);
        let agents = cli.dir.path().join("agents");
        let config = std::fs::read_to_string(cli.config()).expect("config");
        let config = config.replace("AGENTS", &agents.display().to_string());
        std::fs::write(cli.config(), config).expect("config");
        // Each agent's own soul, written before its first use (the
        // templates never overwrite a file).
        for (name, soul) in [("home", "HOME-SOUL cosy"), ("work", "WORK-SOUL terse")] {
            let workspace = agents.join(name).join("workspace");
            std::fs::create_dir_all(&workspace).expect("workspace");
            std::fs::write(workspace.join("SOUL.md"), soul).expect("SOUL.md");
        }
        Self { main, fast, cli }
    }

    fn workspace(&self, agent: &str) -> PathBuf {
        self.cli
            .dir
            .path()
            .join("agents")
            .join(agent)
            .join("workspace")
    }

    /// One `-m` turn as `agent` in `session`: its `--json` events.
    async fn turn(&self, agent: &str, session: &str, text: &str) -> Vec<Value> {
        self.turn_with(agent, session, text, &[]).await
    }

    async fn turn_with(&self, agent: &str, session: &str, text: &str, more: &[&str]) -> Vec<Value> {
        let mut args = vec!["--agent", agent, "--session", session, "-m", text, "--json"];
        args.extend_from_slice(more);
        let out = self.cli.run(&args).await;
        assert!(out.status.success(), "{agent}: {}", stderr(&out));
        events(&out)
    }
}

/// The system prompt and the tool names of a chat request.
fn system_and_tools(request: &Value) -> (String, Vec<String>) {
    let system = request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let tools = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    (system, tools)
}

/// The snippets of a `memory_search` result (its query left out).
fn snippets(output: &str) -> String {
    let result: Value = serde_json::from_str(output).unwrap_or_default();
    result["hits"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|hit| hit["snippet"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn each_agent_has_its_soul_model_tools_memory_files_and_transcripts() {
    let two = TwoAgents::start().await;
    // home saves a fact, on the fast model.
    two.fast.push_replies([
        Reply::tool_calls(&[("memory_save", r#"{"text": "The heron is named Ottoline."}"#)]),
        Reply::text("saved"),
    ]);
    let home = two.turn("home", "home-1", "remember the heron").await;
    assert!(home.iter().all(|e| e["agent"] == "home"), "{home:?}");
    assert!(tool_outcome(&home, "fake_call_0").0, "{home:?}");
    assert_eq!(
        two.main.requests().len(),
        0,
        "home never reached the main model"
    );

    // work searches for it, then reads a file of home's, on the main model.
    let home_soul = two.workspace("home").join("SOUL.md");
    let read = format!(r#"{{"path": "{}"}}"#, home_soul.display());
    two.main.push_replies([
        Reply::tool_calls(&[("memory_search", r#"{"query": "heron Ottoline"}"#)]),
        Reply::tool_calls(&[("read_file", read.as_str())]),
        Reply::text("nothing"),
    ]);
    let work = two
        .turn("work", "work-1", "what is the heron called?")
        .await;
    assert!(work.iter().all(|e| e["agent"] == "work"), "{work:?}");
    let (_, found) = tool_outcome(&work, "fake_call_0");
    assert!(
        !snippets(&found).contains("Ottoline"),
        "work found home's fact: {found}"
    );
    let (ok, refused) = tool_outcome(&work, "fake_call_1");
    assert!(!ok, "work read home's SOUL.md: {refused}");
    assert!(refused.contains("agent `home`'s workspace"), "{refused}");

    // home finds its own fact.
    two.fast.push_replies([
        Reply::tool_calls(&[("memory_search", r#"{"query": "heron Ottoline"}"#)]),
        Reply::text("Ottoline"),
    ]);
    let home = two
        .turn("home", "home-1", "what is the heron called?")
        .await;
    let (_, found) = tool_outcome(&home, "fake_call_1");
    assert!(
        snippets(&found).contains("Ottoline"),
        "home lost its fact: {found}"
    );

    // Souls and tools, as each model was asked.
    for request in two.fast.requests() {
        let (system, tools) = system_and_tools(&request);
        assert!(system.contains("HOME-SOUL") && !system.contains("WORK-SOUL"));
        assert!(
            !tools.iter().any(|t| t == "exec"),
            "exec offered to home: {tools:?}"
        );
        assert!(!request["tools"].to_string().contains("\"exec\""));
    }
    for request in two.main.requests() {
        let (system, tools) = system_and_tools(&request);
        assert!(system.contains("WORK-SOUL") && !system.contains("HOME-SOUL"));
        assert!(
            tools.iter().any(|t| t == "exec"),
            "work keeps exec: {tools:?}"
        );
    }
    // Transcripts in each agent's own sessions/.
    let transcript = |agent: &str, id: &str| {
        two.workspace(agent)
            .join("sessions")
            .join(format!("{id}.jsonl"))
    };
    assert!(transcript("home", "home-1").is_file());
    assert!(transcript("work", "work-1").is_file());
    assert!(!transcript("work", "home-1").exists() && !transcript("home", "work-1").exists());
    let default = two.cli.workspace().join("sessions");
    assert!(!default.join("home-1.jsonl").exists() && !default.join("work-1.jsonl").exists());
}

#[tokio::test]
async fn exec_denied_is_refused_when_named_and_an_unknown_agent_is_one_line() {
    let two = TwoAgents::start().await;
    two.fast.push_replies([
        Reply::tool_calls(&[("exec", r#"{"command": "echo ran"}"#)]),
        Reply::text("could not"),
    ]);
    let home = two.turn("home", "home-2", "run echo").await;
    let (ok, why) = tool_outcome(&home, "fake_call_0");
    assert!(!ok && !why.contains("ran\n"), "{why}");
    assert!(why.contains("not available to this agent"), "{why}");

    // work's commands see home's workspace empty, and cannot write it.
    let home = two.workspace("home");
    let command = format!(
        "cat {0}/SOUL.md; echo planted > {0}/planted; ls {0}",
        home.display()
    );
    let call = serde_json::json!({ "command": command }).to_string();
    two.main.push_replies([
        Reply::tool_calls(&[("exec", call.as_str())]),
        Reply::text("done"),
    ]);
    let work = two
        .turn_with("work", "work-2", "look", &["--approve-exec"])
        .await;
    let (_, output) = tool_outcome(&work, "fake_call_0");
    assert!(output.contains("exit code 0"), "the command ran: {output}");
    assert!(!output.contains("HOME-SOUL"), "{output}");
    assert!(!home.join("planted").exists(), "{output}");

    let out = two.cli.run(&["--agent", "nope", "-m", "hi"]).await;
    // A usage error, refused before anything starts (exit 2, as a bad flag).
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no agent `nope` (known: default, home, work)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(two.main.requests().len(), 2, "nope's turn never ran");
    assert!(!two.cli.dir.path().join("agents").join("nope").exists());
}

/// The fixture was written by the binary of commit 081f1ff (before
/// agents existed) with this script, then copied without its lock files:
///
/// ```text
/// fake.push_replies([
///     Reply::tool_calls(&[("memory_save",
///         r#"{"text": "The legacy heron is named Ottoline.", "long_term": true}"#)]),
///     Reply::tool_calls(&[("cron_add",
///         r#"{"message": "water the legacy ferns", "every": "1d", "name": "ferns"}"#)]),
///     Reply::text("Saved the fact and the job."),
/// ]);
/// let cli = Cli::new(&fake, "");
/// cli.run(&["-m", "remember the heron, and add a job", "--session", "legacy-1", "--json"]).await;
/// cli.run(&["memory", "reindex"]).await;
/// // cp -r <cli.workspace()> tests/fixtures/legacy_workspace
/// ```
#[tokio::test]
async fn a_workspace_of_before_agents_keeps_its_session_memory_and_cron_jobs() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/legacy_workspace");
    copy_dir(&fixture, &cli.workspace());
    fake.push_replies([
        Reply::tool_calls(&[
            ("memory_search", r#"{"query": "legacy heron"}"#),
            ("cron_list", "{}"),
        ]),
        Reply::text("Ottoline, and the ferns"),
    ]);
    let args = [
        "--session",
        "legacy-1",
        "-m",
        "what is the heron called?",
        "--json",
    ];
    let out = cli.run(&args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let events = events(&out);
    assert!(
        events.iter().all(|e| e.get("agent").is_none()),
        "{events:?}"
    );
    let (_, found) = tool_outcome(&events, "fake_call_0");
    assert!(snippets(&found).contains("Ottoline"), "{found}");
    let (_, jobs) = tool_outcome(&events, "fake_call_1");
    assert!(jobs.contains("ferns"), "{jobs}");
    // Resumed: the first request carries the earlier turn.
    let history = fake.requests()[0]["messages"].to_string();
    assert!(
        history.contains("remember the heron, and add a job"),
        "{history}"
    );
    assert!(cli.workspace().join("sessions/legacy-1.jsonl").is_file());
    assert!(
        !cli.dir.path().join("agents").exists(),
        "no agent workspace made"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}
