//! server-everything and server-filesystem over stdio: read-only tools run
//! unasked, the others ask (and a headless run denies), schemas on demand,
//! the compact listing in the prompt, and no process left after exit.

use serde_json::{Value, json};

use super::{everything, filesystem, no_processes_left};
use crate::support::cli::{Cli, events, of_type, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

/// The `tool_result` of the call to `name` (each test calls a tool once).
pub fn result_of<'a>(events: &'a [Value], name: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["name"] == name)
        .unwrap_or_else(|| panic!("no result for {name}: {events:#?}"))
}

#[tokio::test]
async fn a_read_only_tool_runs_unasked_and_the_prompt_lists_tools_by_name() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[
            ("mcp__everything__echo", r#"{"message":"hello mcp"}"#),
            (
                "mcp",
                r#"{"name":"fs__list_directory","arguments":{"path":"."}}"#,
            ),
        ]),
        Reply::text("done"),
    ]);
    let root = tempfile::tempdir().expect("temp dir");
    std::fs::write(root.path().join("note.txt"), "x").expect("file");
    let config = format!("{}{}", everything(root.path()), filesystem(root.path()));
    let cli = Cli::new(&fake, &config);
    let out = cli.run(&["-m", "echo it", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);

    let echo = result_of(&ev, "mcp__everything__echo");
    assert_eq!(echo["success"], true, "{echo}");
    assert_eq!(echo["output"], "Echo: hello mcp");
    let listed = result_of(&ev, "mcp");
    assert_eq!(listed["success"], true, "{listed}");
    assert!(
        listed["output"].as_str().unwrap().contains("note.txt"),
        "{listed}"
    );
    assert!(
        of_type(&ev, "approval_request").is_empty(),
        "read-only tools never ask: {ev:#?}"
    );

    // Past the listing's budget the prompt names the servers and their
    // tool counts, in one tool; no MCP tool is listed one by one.
    let request = &fake.requests()[0];
    let tools = request["tools"].as_array().expect("tools");
    let mcp = tools
        .iter()
        .find(|t| t["function"]["name"] == "mcp")
        .expect("mcp offered");
    let listing = mcp["function"]["description"].as_str().unwrap();
    let servers = listing.lines().last().unwrap();
    assert!(
        servers.starts_with("Servers: everything (") && servers.contains(" tools), fs ("),
        "{listing}"
    );
    assert!(!listing.contains("get-sum"), "{listing}");
    assert!(
        !tools
            .iter()
            .any(|t| t["function"]["name"].as_str().unwrap().starts_with("mcp__")),
        "MCP tools are not listed one by one"
    );
    assert_eq!(no_processes_left(root.path()).await, Vec::<String>::new());
}

#[tokio::test]
async fn a_tool_that_changes_things_asks_and_a_headless_run_denies_it() {
    let fake = FakeLlama::start().await;
    let root = tempfile::tempdir().expect("temp dir");
    let target = root.path().join("made.txt");
    let args = json!({"path": target.display().to_string(), "content": "written"});
    fake.push_replies([
        Reply::tool_calls(&[("mcp__fs__write_file", &args.to_string())]),
        Reply::text("ok"),
    ]);
    let cli = Cli::new(&fake, &filesystem(root.path()));
    let out = cli.run(&["-m", "write it", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);

    let asked = of_type(&ev, "approval_request");
    assert_eq!(asked.len(), 1, "{ev:#?}");
    assert_eq!(asked[0]["tool"], "mcp__fs__write_file");
    assert_eq!(asked[0]["rule"], "mcp__fs__write_file");
    // The arguments, pretty-printed, and which server and tool.
    let shown = asked[0]["command"].as_str().unwrap();
    assert!(shown.contains("\n  \"content\": \"written\""), "{shown}");
    assert!(
        asked[0]["cwd"]
            .as_str()
            .unwrap()
            .contains("server `fs`, tool `write_file`"),
        "{}",
        asked[0]
    );
    let decision = of_type(&ev, "approval_decision");
    assert_eq!(decision[0]["decision"], "denied");
    let result = result_of(&ev, "mcp__fs__write_file");
    assert_eq!(result["success"], false);
    assert_eq!(result["output"], "denied by user");
    assert!(!target.exists(), "a denied call never reaches the server");

    // --approve-exec approves commands, never an MCP tool.
    fake.push_replies([
        Reply::tool_calls(&[("mcp__fs__write_file", &args.to_string())]),
        Reply::text("ok"),
    ]);
    let out = cli
        .run(&["-m", "write it", "--json", "--approve-exec"])
        .await;
    let ev = events(&out);
    assert_eq!(result_of(&ev, "mcp__fs__write_file")["success"], false);
    assert!(!target.exists());
}

#[tokio::test]
async fn a_trusted_server_runs_its_tools_without_asking() {
    let fake = FakeLlama::start().await;
    let root = tempfile::tempdir().expect("temp dir");
    let target = root.path().join("made.txt");
    let args = json!({"path": target.display().to_string(), "content": "written"});
    fake.push_replies([
        Reply::tool_calls(&[("mcp__fs__write_file", &args.to_string())]),
        Reply::text("ok"),
    ]);
    let config = filesystem(root.path()).replace(
        "[mcp.servers.fs]\n",
        "[mcp.servers.fs]\napproval = \"allow\"\n",
    );
    let cli = Cli::new(&fake, &config);
    let out = cli.run(&["-m", "write it", "--json"]).await;
    let ev = events(&out);
    assert!(of_type(&ev, "approval_request").is_empty(), "{ev:#?}");
    assert_eq!(result_of(&ev, "mcp__fs__write_file")["success"], true);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "written");
}

#[tokio::test]
async fn a_schema_is_fetched_on_demand_and_bad_arguments_go_back_to_the_model() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[
            ("mcp", r#"{"name":"everything"}"#),
            ("mcp", r#"{"name":"mcp__everything__get-sum"}"#),
            ("mcp__everything__get-sum", r#"{"a":"two","b":3}"#),
        ]),
        Reply::text("done"),
    ]);
    let root = tempfile::tempdir().expect("temp dir");
    let cli = Cli::new(&fake, &everything(root.path()));
    let out = cli.run(&["-m", "add", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);

    // A server's name lists its tools, one line each.
    let results: Vec<&Value> = of_type(&ev, "tool_result")
        .into_iter()
        .filter(|e| e["name"] == "mcp")
        .collect();
    let tools = results[0]["output"].as_str().unwrap();
    assert!(
        tools.contains("\neverything__get-sum [read-only]: "),
        "{tools}"
    );
    let schema = results[1];
    assert_eq!(schema["success"], true, "{schema}");
    let text = schema["output"].as_str().unwrap();
    assert!(text.starts_with("mcp__everything__get-sum"), "{text}");
    assert!(
        text.contains(r#""a":{"#) && text.contains(r#""type":"number""#),
        "{text}"
    );

    let sum = result_of(&ev, "mcp__everything__get-sum");
    assert_eq!(sum["success"], false);
    let why = sum["output"].as_str().unwrap();
    assert!(
        why.contains("arguments.a: expected number, got string"),
        "{why}"
    );
    // The model got both results in its next request.
    let second = &fake.requests()[1];
    let tool_messages: Vec<&Value> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(tool_messages.len(), 3, "{second}");
}

#[tokio::test]
async fn a_server_gets_no_secret_but_the_ones_its_env_names() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("mcp__everything__get-env", "{}")]),
        Reply::text("done"),
    ]);
    let root = tempfile::tempdir().expect("temp dir");
    let config = everything(root.path()).replace(
        "[mcp.servers.everything]\n",
        "[mcp.servers.everything]\nenv = { GIVEN_TOKEN = \"${EGIRL_MCP_TEST_TOKEN}\", PLAIN = \"visible\" }\n",
    );
    let cli = Cli::new(&fake, &config);
    let out = cli
        .run_with_env(
            &["-m", "env", "--json"],
            &[
                ("EGIRL_MCP_TEST_TOKEN", "s3cr3t-named-value"),
                ("OTHER_API_KEY", "s3cr3t-unnamed-value"),
            ],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let env = result_of(&ev, "mcp__everything__get-env");
    assert_eq!(env["success"], true, "{env}");
    let text = env["output"].as_str().unwrap();
    // egirl's own secrets stay with egirl ...
    assert!(!text.contains("OTHER_API_KEY"), "{text}");
    assert!(!text.contains("\"EGIRL_MCP_TEST_TOKEN\":"), "{text}");
    assert!(!text.contains("s3cr3t-unnamed-value"), "{text}");
    // ... the one the config names reaches the server, and its value is
    // still redacted in what the model and the screen get.
    assert!(
        text.contains("\"GIVEN_TOKEN\": \"[redacted:EGIRL_MCP_TEST_TOKEN]\""),
        "{text}"
    );
    assert!(!text.contains("s3cr3t-named-value"), "{text}");
    assert!(
        text.contains("\"PLAIN\": \"visible\"") || text.contains("\"PLAIN\":\"visible\""),
        "{text}"
    );
}
