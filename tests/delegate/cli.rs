//! Delegation through the real egirl binary, headless.

use std::time::Duration;

use serde_json::Value;

use super::fake_claude_api::FakeClaudeApi;
use super::{API_KEY, claude_bin, config, delegate_call};
use crate::support::cli::{Cli, events, of_type, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

async fn run(cli: &Cli, api: &FakeClaudeApi, flags: &[&str]) -> Vec<Value> {
    let mut argv = vec!["-m", "write hello.txt with Claude Code", "--json"];
    argv.extend_from_slice(flags);
    let out = cli
        .run_with_env(
            &argv,
            &[
                ("ANTHROPIC_BASE_URL", &api.url),
                ("ANTHROPIC_API_KEY", API_KEY),
            ],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    events(&out)
}

#[tokio::test]
async fn the_local_model_approves_the_write_and_the_result_reaches_the_model() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        delegate_call("Write hello.txt saying hi"),
        Reply::text("ALLOW: the task asks for exactly this file"),
        Reply::text("Claude Code wrote it."),
    ]);
    let cli = Cli::new(&fake, &config("local-model"));
    std::fs::create_dir_all(cli.workspace()).unwrap();
    let target = std::fs::canonicalize(cli.workspace())
        .unwrap()
        .join("hello.txt");
    let api = FakeClaudeApi::start(target.clone(), false).await;
    let ev = run(&cli, &api, &["--approve-exec"]).await;

    let (ok, output) = tool_outcome(&ev, "fake_call_0");
    assert!(ok, "{output}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "hi from claude\n"
    );
    assert!(
        output.starts_with("Claude Code finished in 2 turns (session "),
        "{output}"
    );
    assert!(
        output.contains("Finished: File created successfully"),
        "{output}"
    );
    assert!(output.contains("cost $"), "{output}");
    // Progress arrived under the call, the local model's reason with it.
    let progress: Vec<&str> = of_type(&ev, "tool_progress")
        .iter()
        .map(|e| e["text"].as_str().unwrap_or(""))
        .collect();
    assert!(
        progress.iter().any(|t| t.starts_with("→ Write ")),
        "{progress:?}"
    );
    assert!(
        progress
            .iter()
            .any(|t| t.contains("local model allowed Write")
                && t.contains("the task asks for exactly this file")),
        "{progress:?}"
    );
    // The cost goes to the stats under claude-code.
    let usage = of_type(&ev, "usage");
    let claude = usage
        .iter()
        .find(|u| u["provider"] == "claude-code")
        .expect("a claude-code usage event");
    assert!(claude["cost_usd"].as_f64().unwrap_or(0.0) > 0.0, "{claude}");
    // The model got the result, cost and session id.
    let requests = fake.requests();
    let last = requests.last().unwrap().to_string();
    assert!(
        last.contains("Claude Code finished") && last.contains("cost $"),
        "{last}"
    );
    // Claude Code reached the fake API with the key egirl passed on.
    assert!(!api.bodies().is_empty());
}

#[tokio::test]
async fn headless_denies_claude_codes_own_request_and_nothing_is_written() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        delegate_call("Write hello.txt saying hi"),
        Reply::text("It was not allowed."),
    ]);
    let cli = Cli::new(&fake, &config("ask"));
    std::fs::create_dir_all(cli.workspace()).unwrap();
    let target = std::fs::canonicalize(cli.workspace())
        .unwrap()
        .join("hello.txt");
    let api = FakeClaudeApi::start(target.clone(), false).await;
    let ev = run(&cli, &api, &["--approve-exec"]).await;

    assert!(!target.exists());
    let requests = of_type(&ev, "approval_request");
    let tools: Vec<&str> = requests
        .iter()
        .map(|r| r["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["delegate_claude_code", "claude_code"]);
    assert!(
        requests[1]["command"]
            .as_str()
            .unwrap()
            .starts_with("Write {"),
        "{requests:?}"
    );
    let decisions: Vec<&str> = of_type(&ev, "approval_decision")
        .iter()
        .map(|d| d["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["approved", "denied"]);
    let (ok, output) = tool_outcome(&ev, "fake_call_0");
    assert!(ok, "{output}");
    assert!(output.contains("denied by user"), "{output}");
}

#[tokio::test]
async fn allowed_tools_pass_through_and_are_not_asked_about() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        delegate_call("Write hello.txt saying hi"),
        Reply::text("done"),
    ]);
    let cli = Cli::new(
        &fake,
        &format!("{}allowed_tools = [\"Write\"]\n", config("ask")),
    );
    std::fs::create_dir_all(cli.workspace()).unwrap();
    let target = std::fs::canonicalize(cli.workspace())
        .unwrap()
        .join("hello.txt");
    let api = FakeClaudeApi::start(target.clone(), false).await;
    let ev = run(&cli, &api, &["--approve-exec"]).await;
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "hi from claude\n"
    );
    let tools: Vec<&str> = of_type(&ev, "approval_request")
        .iter()
        .map(|r| r["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["delegate_claude_code"]);
}

#[tokio::test]
async fn without_approve_exec_the_delegation_never_starts() {
    let fake = FakeLlama::start().await;
    fake.push_replies([delegate_call("Write hello.txt"), Reply::text("ok")]);
    let cli = Cli::new(&fake, &config("local-model"));
    let api = FakeClaudeApi::start("/nonexistent/hello.txt".into(), false).await;
    let ev = run(&cli, &api, &[]).await;
    let (ok, output) = tool_outcome(&ev, "fake_call_0");
    assert!(!ok && output.contains("denied by user"), "{output}");
    assert!(api.bodies().is_empty());
}

#[tokio::test]
async fn a_missing_claude_is_not_offered_and_doctor_says_why() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("hi")]);
    let cli = Cli::new(&fake, "[delegate.claude_code]\nbinary = \"claude\"\n");
    let path = [("PATH", "/nonexistent-bin")];
    let out = cli.run_with_env(&["-m", "hi", "--json"], &path).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let tools: Vec<String> = fake.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    assert!(
        !tools.contains(&"delegate_claude_code".to_string()),
        "{tools:?}"
    );
    assert!(tools.contains(&"exec".to_string()));

    let out = cli.run_with_env(&["doctor"], &path).await;
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("delegate_claude_code: not offered: `claude` is not on PATH"),
        "{report}"
    );

    // Installed: offered.
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("hi")]);
    let cli = Cli::new(&fake, &config("ask"));
    cli.run(&["-m", "hi", "--json"]).await;
    assert!(
        fake.requests()[0]["tools"]
            .to_string()
            .contains("delegate_claude_code")
    );
    let _ = claude_bin();
}

/// Processes whose working directory is `dir` (Claude Code runs there).
fn processes_in(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let cwd = entry.path().join("cwd");
        if std::fs::read_link(&cwd).is_ok_and(|c| c == dir) {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

#[tokio::test]
async fn an_interrupted_delegation_leaves_no_process_behind() {
    let fake = FakeLlama::start().await;
    fake.push_replies([delegate_call("Write hello.txt"), Reply::text("stopped")]);
    let cli = Cli::new(&fake, &config("ask"));
    std::fs::create_dir_all(cli.workspace()).unwrap();
    let workspace = std::fs::canonicalize(cli.workspace()).unwrap();
    let api = FakeClaudeApi::start(workspace.join("hello.txt"), true).await;
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
        .arg("--config")
        .arg(cli.config())
        .args(["-m", "go", "--json", "--approve-exec"])
        .env("HOME", cli.dir.path())
        .env("ANTHROPIC_BASE_URL", &api.url)
        .env("ANTHROPIC_API_KEY", API_KEY)
        .env("OPENAI_API_KEY", "sk-openai-must-not-reach-claude")
        .env("SOME_SERVICE_TOKEN", "token-must-not-reach-claude")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Claude Code is running once the API has its request.
    let mut waited = 0;
    while api.bodies().is_empty() {
        assert!(waited < 600, "Claude Code never called the API");
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    let running = processes_in(&workspace);
    assert!(!running.is_empty());
    // Claude Code got its key and base URL, not egirl's other secrets.
    // The sandbox's keeper (egirl's fork that waits for the command's PID
    // namespace) runs in the workspace too, with egirl's memory: skip it.
    let egirl_exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_egirl")).unwrap();
    let claude = running
        .iter()
        .find(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).ok() != Some(egirl_exe.clone()))
        .expect("Claude Code among the processes in the workspace");
    let environ = std::fs::read(format!("/proc/{claude}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    let names: Vec<&str> = environ
        .split('\0')
        .filter_map(|kv| kv.split_once('=').map(|(k, _)| k))
        .collect();
    assert!(names.contains(&"ANTHROPIC_API_KEY") && names.contains(&"ANTHROPIC_BASE_URL"));
    assert!(!names.contains(&"OPENAI_API_KEY") && !names.contains(&"SOME_SERVICE_TOKEN"));
    // SAFETY: signalling the child this test started.
    unsafe {
        libc::kill(child.id().unwrap() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().await.unwrap();
    let ev = events(&out);
    let (ok, output) = tool_outcome(&ev, "fake_call_0");
    assert!(!ok && output.contains("interrupted"), "{output}");
    // The sandbox's namespace dies by parent-death signals, which the
    // kernel delivers as egirl exits, not before: give a loaded machine a
    // moment to finish tearing it down.
    let mut left = processes_in(&workspace);
    for _ in 0..50 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = processes_in(&workspace);
    }
    assert_eq!(left, Vec::<String>::new());
    assert!(!workspace.join("hello.txt").exists());
}
