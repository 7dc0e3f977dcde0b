//! The `delegate` tool driving a real ACP agent, through the real binary
//! (`egirl -m`, headless) and the scripted fake model: Claude Code's ACP
//! adapter (`@zed-industries/claude-agent-acp`, installed by
//! scripts/install-acp-agents.sh) against the fake Anthropic API the
//! delegation tests use, and tests/acp/fs_agent.mjs (an agent on the ACP
//! SDK scripts/install-acp.sh installs) for file requests and an agent
//! that will not stop.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::delegate::API_KEY;
use crate::delegate::fake_claude_api::FakeClaudeApi;
use crate::support::cli::{Cli, events, of_type, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

/// The installed agents' node_modules; a test that needs it fails with
/// one line naming the script when it is missing.
pub fn node_modules() -> PathBuf {
    let cache = std::env::var_os("EGIRL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/egirl")
        });
    let dir = cache.join("acp-agents/node_modules");
    assert!(
        dir.join("@zed-industries/claude-agent-acp/dist/index.js")
            .exists(),
        "the ACP agents are not installed: run scripts/install-acp-agents.sh"
    );
    dir
}

/// `[delegate.agents.claude]`: Claude Code through its ACP adapter, its
/// API and key from egirl's environment (IS_SANDBOX lets the adapter run
/// as root, as CI containers do).
fn claude_config(permissions: &str) -> String {
    let adapter = node_modules().join("@zed-industries/claude-agent-acp/dist/index.js");
    format!(
        "[delegate.agents.claude]\ncommand = \"node\"\nargs = [\"{}\"]\n\
         env = [\"ANTHROPIC_BASE_URL\", \"ANTHROPIC_API_KEY\", \"IS_SANDBOX\", \"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC\"]\n\
         permissions = \"{permissions}\"\ndescription = \"Claude Code\"\n",
        adapter.display()
    )
}

/// The ACP SDK tests/acp/fs_agent.mjs is written against: the one
/// scripts/install-acp.sh installs for tests/acp/client.mjs.
pub fn fs_agent_sdk() -> PathBuf {
    super::agent::sdk_modules().join("@agentclientprotocol/sdk/dist/v1/stable/acp.js")
}

/// `[delegate.agents.scripted]`: tests/acp/fs_agent.mjs; `marker` is an
/// extra argument that names its process in /proc.
pub fn scripted_config(marker: &str, timeout: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/fs_agent.mjs");
    let sdk = fs_agent_sdk();
    format!(
        "[delegate.agents.scripted]\ncommand = \"node\"\nargs = [\"{}\", \"{}\", \"{marker}\"]\ntimeout = \"{timeout}\"\n",
        script.display(),
        sdk.display()
    )
}

pub fn delegate_call(agent: &str, task: &str) -> Reply {
    let args = json!({"agent": agent, "task": task}).to_string();
    Reply::tool_calls(&[("delegate", &args)])
}

/// Runs `egirl -m … --json --approve-exec` (the delegation itself
/// approved) with the fake API's URL and key; its events.
pub async fn run(cli: &Cli, api_url: &str) -> Vec<Value> {
    let out = cli
        .run_with_env(
            &["-m", "hand it over", "--json", "--approve-exec"],
            &[
                ("ANTHROPIC_BASE_URL", api_url),
                ("ANTHROPIC_API_KEY", API_KEY),
                ("IS_SANDBOX", "1"),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    events(&out)
}

/// The progress lines shown under call `id`.
pub fn progress(ev: &[Value], id: &str) -> Vec<String> {
    of_type(ev, "tool_progress")
        .into_iter()
        .filter(|e| e["id"] == id)
        .map(|e| e["text"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A Cli whose workspace exists, and that workspace, canonical.
pub fn cli_with_workspace(fake: &FakeLlama, config: &str) -> (Cli, PathBuf) {
    let cli = Cli::new(fake, config);
    std::fs::create_dir_all(cli.workspace()).unwrap();
    let ws = std::fs::canonicalize(cli.workspace()).unwrap();
    (cli, ws)
}

#[tokio::test]
async fn claude_code_streams_progress_asks_and_writes_when_the_local_model_allows() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        delegate_call("claude", "Write hello.txt saying hi"),
        Reply::text("ALLOW: the task asks for exactly this file"),
        Reply::text("Claude wrote it."),
    ]);
    let (cli, ws) = cli_with_workspace(&fake, &claude_config("local-model"));
    let target = ws.join("hello.txt");
    let api = FakeClaudeApi::start(target.clone(), false).await;
    let ev = run(&cli, &api.url).await;

    let (ok, output) = tool_outcome(&ev, "fake_call_0");
    assert!(ok, "{output}");
    assert!(output.starts_with("claude finished:"), "{output}");
    // Its final text, which quotes the Write tool's result.
    assert!(output.contains("Finished:"), "{output}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "hi from claude\n"
    );
    let shown = progress(&ev, "fake_call_0");
    assert!(
        shown.iter().any(|l| l.contains("Using Write.")),
        "{shown:?}"
    );
    assert!(shown.iter().any(|l| l.starts_with("→ Write")), "{shown:?}");
    assert!(
        shown.iter().any(|l| l.starts_with("allowed Write")),
        "{shown:?}"
    );
    // The model saw the agents it may delegate to.
    let offered = fake.requests()[0]["tools"].to_string();
    assert!(offered.contains("\"claude\""), "{offered}");
    assert!(offered.contains("Claude Code"), "{offered}");
}

#[tokio::test]
async fn a_permission_denied_in_egirls_approval_keeps_the_write_from_happening() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        delegate_call("claude", "Write hello.txt saying hi"),
        Reply::text("Claude was not allowed."),
    ]);
    // `ask`: the request reaches egirl's approval, which headless denies
    // even with --approve-exec (nobody saw what the agent wants).
    let (cli, ws) = cli_with_workspace(&fake, &claude_config("ask"));
    let target = ws.join("hello.txt");
    let api = FakeClaudeApi::start(target.clone(), false).await;
    let ev = run(&cli, &api.url).await;

    let asked: Vec<&Value> = of_type(&ev, "approval_request")
        .into_iter()
        .filter(|e| e["tool"] == "delegate_permission")
        .collect();
    assert_eq!(asked.len(), 1, "{ev:?}");
    let what = asked[0]["command"].as_str().unwrap_or("");
    assert!(what.starts_with("claude: Write"), "{what}");
    assert!(what.contains("hello.txt"), "{what}");
    let (_, output) = tool_outcome(&ev, "fake_call_0");
    assert!(!target.exists(), "{output}");
    let shown = progress(&ev, "fake_call_0");
    assert!(
        shown.iter().any(|l| l.starts_with("denied Write")),
        "{shown:?}"
    );
}

#[tokio::test]
async fn doctor_names_each_agent_its_program_and_its_sandbox() {
    let fake = FakeLlama::start().await;
    let missing = "[delegate.agents.gone]\ncommand = \"no-such-acp-agent\"\n";
    let cli = Cli::new(&fake, &(claude_config("ask") + missing));
    let out = cli.run(&["doctor"]).await;
    let report = String::from_utf8_lossy(&out.stdout);
    let line = |name: &str| {
        report
            .lines()
            .find(|l| l.contains(&format!("delegate: {name}:")))
            .unwrap_or_default()
            .to_string()
    };
    let claude = line("claude");
    assert!(claude.contains("permissions: ask"), "{report}");
    assert!(
        claude.contains("sandbox: workspace-write, network"),
        "{report}"
    );
    let gone = line("gone");
    assert!(gone.starts_with("FAIL"), "{report}");
    assert!(
        gone.contains("cannot start: `no-such-acp-agent` is not on PATH"),
        "{report}"
    );
}
