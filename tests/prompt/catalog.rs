//! The tool catalog: rarely used tools by name, their schema on demand.
//! Through the real binary against the scripted fake model: what the
//! request lists whole and what the catalog names, a schema asked for, a
//! catalog call run as the tool it names (its events, approval and
//! transcript), an unknown name; and a webhook turn's catalog, through
//! the core.

use serde_json::{Value, json};

use egirl::protocol::{Op, Origin};

use crate::agent::{start, tool_results};
use crate::support::cli::{Cli, events, of_type, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

const CORE: [&str; 9] = [
    "read_file",
    "write_file",
    "edit_file",
    "glob",
    "exec",
    "memory_search",
    "memory_save",
    "web_fetch",
    "browser",
];

fn catalog_call(args: Value) -> Reply {
    Reply::tool_calls(&[("more_tools", &args.to_string())])
}

/// The request's tool names, and the catalog's description.
fn listed(request: &Value) -> (Vec<String>, String) {
    let tools = request["tools"].as_array().expect("tools");
    let names = tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    let catalog = tools
        .iter()
        .find(|t| t["function"]["name"] == "more_tools")
        .map(|t| t["function"]["description"].as_str().unwrap().to_string())
        .unwrap_or_default();
    (names, catalog)
}

/// `egirl -m go --json` with `flags`: its events.
async fn run(cli: &Cli, flags: &[&str]) -> Vec<Value> {
    let mut argv = vec!["-m", "go", "--json"];
    argv.extend_from_slice(flags);
    let out = cli.run(&argv).await;
    assert!(out.status.success(), "{}", stderr(&out));
    events(&out)
}

#[tokio::test]
async fn core_tools_are_whole_and_the_catalog_names_the_rest_in_every_request() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("glob", r#"{"pattern": "*"}"#)]),
        Reply::text("done"),
    ]);
    // The browser is offered when its executable exists (never started here).
    let search = "[tools.web.search]\nprovider = \"searxng\"\nendpoint = \"http://127.0.0.1:9\"\n\
                  [tools.browser]\nexecutable = \"/bin/sh\"\n";
    let cli = Cli::new(&fake, search);
    run(&cli, &[]).await;
    let requests = fake.requests();
    let (names, catalog) = listed(&requests[0]);
    let mut expected: Vec<String> = CORE.iter().map(|s| s.to_string()).collect();
    expected.push("more_tools".into());
    assert_eq!(names, expected);
    let named: Vec<&str> = catalog
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(": ").map(|(name, _)| name))
        .collect();
    assert_eq!(
        named,
        [
            "memory_get",
            "create_skill",
            "list_skills",
            "cron_add",
            "cron_list",
            "cron_remove",
            "web_search"
        ],
        "{catalog}"
    );
    assert!(catalog.contains("\ncron_add: schedule a message to yourself"));
    // The second request of the turn lists the same tools, byte for byte.
    assert_eq!(requests[1]["tools"], requests[0]["tools"]);
}

#[tokio::test]
async fn a_schema_on_demand_then_a_catalog_call_runs_as_the_tool_it_names() {
    let fake = FakeLlama::start().await;
    let every = json!({"message": "stretch", "every": "2h", "name": "stretch"});
    fake.push_replies([
        catalog_call(json!({"name": "cron_add"})),
        catalog_call(json!({"name": "cron_add", "arguments": every})),
        // The object as a JSON string, as small models send it.
        catalog_call(json!({"name": "cron_list", "arguments": "{}"})),
        // The same call by the tool's own name is a repeat of it.
        Reply::tool_calls(&[("cron_list", "{}")]),
        // Called by its own name, a catalog tool runs.
        Reply::tool_calls(&[("list_skills", "{}")]),
        Reply::text("done"),
    ]);
    let cli = Cli::new(&fake, "");
    let ev = run(&cli, &[]).await;

    let (ok, schema) = tool_outcome(&ev, "fake_call_0");
    assert!(ok, "{schema}");
    assert!(
        schema.starts_with("cron_add: Schedule a message"),
        "{schema}"
    );
    assert!(schema.contains(r#""every":{"type":"string"}"#), "{schema}");
    assert!(
        schema.contains(r#"more_tools {"name": "cron_add""#),
        "{schema}"
    );

    // The events name the real tool, with its own arguments.
    let calls = of_type(&ev, "tool_call");
    let names: Vec<&str> = calls.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "more_tools",
            "cron_add",
            "cron_list",
            "cron_list",
            "list_skills"
        ]
    );
    assert_eq!(calls[1]["arguments"], every);
    assert_eq!(calls[2]["arguments"], json!({}));
    let results = of_type(&ev, "tool_result");
    assert_eq!(results[1]["name"], "cron_add");
    let (ok, added) = tool_outcome(&ev, "fake_call_1");
    assert!(ok && added.starts_with("scheduled: stretch"), "{added}");
    let (ok, via_catalog) = tool_outcome(&ev, "fake_call_2");
    assert!(ok && via_catalog.contains("stretch"), "{via_catalog}");
    let (ok, repeat) = tool_outcome(&ev, "fake_call_3");
    assert!(
        !ok && repeat.starts_with("you already called `cron_list` with exactly these arguments"),
        "{repeat}"
    );
    let (ok, direct) = tool_outcome(&ev, "fake_call_4");
    assert!(ok, "{direct}");

    // The transcript keeps what the model sent (the prompt is rebuilt
    // from it, prefix cache) and each result.
    let sessions = cli.workspace().join("sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a transcript");
    let transcript = std::fs::read_to_string(file).unwrap();
    let records: Vec<Value> = transcript
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sent = json!({"name": "cron_add", "arguments": every});
    assert!(
        records
            .iter()
            .any(|r| r["tool_calls"].as_array().is_some_and(|calls| calls
                .iter()
                .any(|c| c["name"] == "more_tools" && c["arguments"] == sent))),
        "{transcript}"
    );
    assert!(
        records.iter().any(|r| r["role"] == "tool"
            && r["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("scheduled: stretch"))),
        "{transcript}"
    );
}

#[tokio::test]
async fn a_catalog_call_of_a_tool_that_asks_is_asked_about_as_that_tool() {
    let exec = json!({"name": "exec", "arguments": {"command": "echo hi > made.txt"}});
    let fake = FakeLlama::start().await;
    fake.push_replies([catalog_call(exec.clone()), Reply::text("ok")]);
    let cli = Cli::new(&fake, "");
    std::fs::create_dir_all(cli.workspace()).unwrap();
    // Headless without --approve-exec: asked, and denied.
    let ev = run(&cli, &[]).await;
    let asked = of_type(&ev, "approval_request");
    assert_eq!(asked.len(), 1, "{ev:?}");
    assert_eq!(asked[0]["tool"], "exec");
    let (ok, out) = tool_outcome(&ev, "fake_call_0");
    assert!(!ok && out.contains("denied by user"), "{out}");
    assert!(!cli.workspace().join("made.txt").exists());
    // The call shows as exec, sandbox and all.
    let call = of_type(&ev, "tool_call")[0];
    assert_eq!(call["name"], "exec");
    assert!(!call["sandbox"].is_null(), "{call}");

    let fake = FakeLlama::start().await;
    fake.push_replies([catalog_call(exec), Reply::text("ok")]);
    let cli = Cli::new(&fake, "");
    std::fs::create_dir_all(cli.workspace()).unwrap();
    let ev = run(&cli, &["--approve-exec"]).await;
    let (ok, out) = tool_outcome(&ev, "fake_call_0");
    assert!(ok, "{out}");
    assert!(cli.workspace().join("made.txt").exists());
}

#[tokio::test]
async fn an_unknown_name_fails_with_what_exists() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        catalog_call(json!({"name": "crontab"})),
        catalog_call(json!({"name": "crontab", "arguments": {}})),
        Reply::text("ok"),
    ]);
    let cli = Cli::new(&fake, "");
    let ev = run(&cli, &[]).await;
    let (ok, out) = tool_outcome(&ev, "fake_call_0");
    assert!(!ok, "{out}");
    assert!(
        out.starts_with("unknown tool `crontab`; more_tools has: memory_get, create_skill, "),
        "{out}"
    );
    assert!(
        out.contains("; listed whole: read_file, write_file, "),
        "{out}"
    );
    let (ok, out) = tool_outcome(&ev, "fake_call_1");
    assert!(!ok, "{out}");
    assert!(
        out.starts_with("unknown tool `crontab`; available tools: read_file, "),
        "{out}"
    );
    assert!(out.contains("cron_list"), "{out}");
}

#[tokio::test]
async fn a_webhook_turn_gets_a_catalog_of_what_it_may_run_and_no_more() {
    let fake = FakeLlama::start().await;
    let add = json!({"name": "cron_add", "arguments": {"message": "x", "every": "1h"}});
    fake.push_replies([
        Reply::tool_calls(&[
            ("more_tools", &add.to_string()),
            (
                "more_tools",
                &json!({"name": "cron_list", "arguments": {}}).to_string(),
            ),
        ]),
        Reply::text("ok"),
    ]);
    let mut h = start(&fake, |_| {});
    h.agent.submit(Op::UserMessage {
        images: Vec::new(),
        session: "hook".into(),
        origin: Origin::Webhook,
        text: "hi".into(),
    });
    let events = h.turn("hook").await;
    let results = tool_results(&events);
    assert_eq!(results[0].0, "cron_add");
    assert!(
        !results[0].1
            && results[0]
                .2
                .contains("not available in a webhook-started turn"),
        "{results:?}"
    );
    assert!(results[1].0 == "cron_list" && results[1].1, "{results:?}");
    let (_, catalog) = listed(&fake.requests()[0]);
    assert!(catalog.contains("\ncron_list: "), "{catalog}");
    assert!(!catalog.contains("cron_add"), "{catalog}");
}
