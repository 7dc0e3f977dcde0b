use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::server::{self, RealServer};

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A config for the real server at `url`; `extra` is appended verbatim.
    fn config(&self, url: &str, tool_format: &str, extra: &str) -> PathBuf {
        let path = self.path().join("egirl.toml");
        let text = format!(
            "[workspace]\npath = \"{ws}\"\n\n[log]\ndir = \"{logs}\"\n\n[agent]\nmax_turns = 3\n\n\
             [local]\nendpoint = \"{url}\"\nmodel = \"SmolLM2-135M-Instruct\"\ncontext_length = 8192\n\
             max_tokens = 48\ntool_format = \"{tool_format}\"\n{extra}",
            ws = self.path().join("ws").display(),
            logs = self.path().join("logs").display(),
        );
        std::fs::write(&path, text).expect("write config");
        path
    }

    fn egirl(&self, config: &Path, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_egirl"))
            .arg("--config")
            .arg(config)
            .args(args)
            .env_remove("EGIRL_CONFIG")
            .env("HOME", self.path())
            .output()
            .expect("run egirl")
    }
}

fn events(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn describe(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn streamed_chat_through_headless() {
    let setup = Setup::new();
    let server = RealServer::start(setup.path());
    let config = setup.config(&server.url(), "qwen3", "");
    let out = setup.egirl(
        &config,
        &["-m", "Say hello in one short sentence.", "--json"],
    );
    assert!(out.status.success(), "{}", describe(&out));
    let ev = events(&out);
    assert_eq!(ev[0]["type"], "turn_started", "{}", describe(&out));
    for e in &ev {
        assert!(e["session"].is_string() && e["origin"] == "cli", "{e}");
    }
    assert!(!of_type(&ev, "delta").is_empty(), "{}", describe(&out));
    let usage = of_type(&ev, "usage");
    assert!(
        usage[0]["input_tokens"].as_u64().unwrap_or(0) > 0,
        "{}",
        describe(&out)
    );
    assert!(
        usage[0]["output_tokens"].as_u64().unwrap_or(0) > 0,
        "{}",
        describe(&out)
    );
    let finals = of_type(&ev, "final");
    assert_eq!(finals.len(), 1, "{}", describe(&out));
    // The streamed deltas are the final text.
    let streamed: String = of_type(&ev, "delta")
        .iter()
        .filter_map(|d| d["text"].as_str())
        .collect();
    assert_eq!(
        streamed.trim(),
        finals[0]["text"].as_str().unwrap_or("").trim()
    );

    // Without --json only the answer is printed.
    let plain = setup.egirl(&config, &["-m", "Hi!"]);
    assert!(plain.status.success(), "{}", describe(&plain));
    assert!(!String::from_utf8_lossy(&plain.stdout).trim().is_empty());
}

#[test]
fn five_turn_session_reuses_the_prefix_cache() {
    let setup = Setup::new();
    let server = RealServer::start(setup.path());
    let config = setup.config(&server.url(), "qwen3", "");
    let questions = [
        "My name is Ada. Remember it.",
        "What is two plus two?",
        "Name a color.",
        "Name an animal.",
        "What is my name?",
    ];
    let mut cached = Vec::new();
    for q in questions {
        let out = setup.egirl(&config, &["-m", q, "--json", "--session", "e2e-five"]);
        assert!(out.status.success(), "{}", describe(&out));
        let ev = events(&out);
        let usage = of_type(&ev, "usage");
        let first = usage
            .first()
            .unwrap_or_else(|| panic!("no usage: {}", describe(&out)));
        cached.push(first["cached_tokens"].as_u64().unwrap_or(0));
    }
    eprintln!("cached_tokens per turn: {cached:?}");
    for (turn, c) in cached.iter().enumerate().skip(1) {
        assert!(
            *c > 0,
            "turn {} reused no cached tokens: {cached:?}",
            turn + 1
        );
    }
    // The transcript holds every message of the five turns.
    let transcript = setup.path().join("ws/sessions/e2e-five.jsonl");
    let lines = std::fs::read_to_string(&transcript).unwrap_or_default();
    assert!(lines.lines().count() >= 10, "{lines}");
}

#[test]
fn token_count_matches_the_server() {
    use egirl::chat::ChatMessage;
    use egirl::config::{LocalConfig, ToolFormat};
    use egirl::providers::llamacpp::{ChatRequest, LlamaCpp};

    let setup = Setup::new();
    let server = RealServer::start(setup.path());
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let cfg = LocalConfig {
            endpoint: server.url(),
            tool_format: ToolFormat::Native,
            max_tokens: 8,
            ..LocalConfig::default()
        };
        let provider = LlamaCpp::new(&cfg);
        let workspace = setup.path().join("ws");
        egirl::workspace::ensure(&workspace).expect("workspace");
        let request = ChatRequest {
            messages: vec![
                ChatMessage::system(egirl::agent::system_prompt(&workspace)),
                ChatMessage::user("What files are in the workspace?"),
                ChatMessage::assistant("I can check that for you."),
                ChatMessage::user(egirl::agent::user_message(
                    "Please list them.",
                    chrono::Local::now(),
                )),
            ],
            tools: egirl::tools::specs().into(),
            max_tokens: 8,
            slot: None,
            images: Default::default(),
        };
        let counted = provider.count_prompt(&request).await.expect("count_prompt");
        let cancel = tokio_util::sync::CancellationToken::new();
        let reply = provider
            .chat(&request, &cancel, &mut |_| {})
            .await
            .expect("chat");
        let served = reply.usage.evaluated_tokens + reply.usage.cached_tokens;
        let diff = (counted as f64 - served as f64).abs() / served as f64;
        eprintln!(
            "egirl counted {counted}, server prompt_n + cache_n = {served} ({:.2}%)",
            diff * 100.0
        );
        assert!(diff <= 0.02, "egirl counted {counted}, server saw {served}");
    });
}

#[test]
fn doctor_is_green_against_a_running_server() {
    let setup = Setup::new();
    let server = RealServer::start(setup.path());
    let config = setup.config(&server.url(), "auto", "");
    let out = setup.egirl(&config, &["doctor"]);
    assert!(out.status.success(), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ok   local /health"), "{text}");
    assert!(text.contains("n_ctx 8192"), "{text}");
    assert!(!text.contains("FAIL"), "{text}");
}

#[test]
fn egirl_starts_the_managed_server_and_stops_it_on_exit() {
    let setup = Setup::new();
    let port = server::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let args: Vec<String> = server::SERVER_ARGS
        .iter()
        .map(|a| format!("\"{a}\""))
        .collect();
    let managed = format!(
        "\n[local.server]\nbinary = \"{}\"\nmodel = \"{}\"\nargs = [{}]\n",
        server::binary().display(),
        server::model().display(),
        args.join(", ")
    );
    let config = setup.config(&url, "qwen3", &managed);
    assert!(!server::health(port));
    let out = setup.egirl(&config, &["-m", "Hello!", "--json"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        of_type(&events(&out), "final").len(),
        1,
        "{}",
        describe(&out)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("starting llama-server"), "{stderr}");
    // Gone with egirl: nothing answers and no process is left on that port.
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && !server::processes_on_port(port).is_empty() {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!server::health(port), "the managed server outlived egirl");
    assert_eq!(
        server::processes_on_port(port),
        Vec::<u32>::new(),
        "orphaned llama-server"
    );
}

#[test]
fn server_killed_mid_stream_then_back() {
    use egirl::protocol::{ErrorEvent, EventKind, Op, Origin};

    let setup = Setup::new();
    let mut server = RealServer::start(setup.path());
    let port = server.port;
    let config_path = setup.config(&server.url(), "qwen3", "");
    let loaded = egirl::config::load(Some(&config_path)).expect("config");
    let mut config = loaded.config;
    config.local.max_tokens = 400;
    let (workspace, _) =
        egirl::workspace::ensure(Path::new(&config.workspace.path)).expect("workspace");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let (agent, _core) = egirl::agent::spawn(config, workspace, Vec::new());
        let mut events = agent.bus.subscribe();
        agent.submit(Op::UserMessage {
            session: "killed".into(),
            origin: Origin::Cli,
            text: "Write a long story about a fox, at least three paragraphs.".into(),
            images: Vec::new(),
        });
        let mut error = None;
        let mut killed = false;
        while let Ok(Some(event)) =
            tokio::time::timeout(Duration::from_secs(60), events.recv()).await
        {
            match event.kind {
                EventKind::Delta(_) if !killed => {
                    server.kill();
                    killed = true;
                }
                EventKind::Error(ErrorEvent { message }) => error = Some(message),
                EventKind::TurnEnded(_) => break,
                _ => {}
            }
        }
        assert!(killed, "no delta arrived before the turn ended");
        let message = error.expect("an error event after the server died");
        eprintln!("error shown: {message}");
        assert!(!message.contains('\n'), "one line: {message}");
        assert!(
            message.contains(&port.to_string()) || message.contains("ended early"),
            "{message}"
        );

        let _back = tokio::task::block_in_place(|| RealServer::start_on(port, setup.path()));
        agent.submit(Op::UserMessage {
            session: "killed".into(),
            origin: Origin::Cli,
            text: "Say hi.".into(),
            images: Vec::new(),
        });
        let mut answered = false;
        while let Ok(Some(event)) =
            tokio::time::timeout(Duration::from_secs(60), events.recv()).await
        {
            match event.kind {
                EventKind::Final(_) => answered = true,
                EventKind::Error(ErrorEvent { message }) => panic!("second turn failed: {message}"),
                EventKind::TurnEnded(_) => break,
                _ => {}
            }
        }
        assert!(answered, "no answer after the server came back");
    });
}

#[test]
fn resumed_session_restores_its_slot_after_a_restart() {
    let setup = Setup::new();
    let slots = setup.path().join("slots");
    std::fs::create_dir_all(&slots).expect("slot dir");
    let slot_dir = slots.display().to_string();
    let extra = ["--slot-save-path", slot_dir.as_str()];
    let port = server::free_port();
    let mut server = RealServer::start_with(port, setup.path(), &extra);
    let config = setup.config(&server.url(), "qwen3", "");
    // The first request of one `egirl -m` run: (input_tokens, cached_tokens).
    let run = |text: &str| {
        let out = setup.egirl(&config, &["-m", text, "--json", "--session", "resumed"]);
        assert!(out.status.success(), "{}", describe(&out));
        let ev = events(&out);
        let usage = of_type(&ev, "usage");
        let first = usage
            .first()
            .unwrap_or_else(|| panic!("no usage: {}", describe(&out)));
        (
            first["input_tokens"].as_u64().unwrap_or(0),
            first["cached_tokens"].as_u64().unwrap_or(0),
        )
    };

    run("My name is Ada. Remember it.");
    // Shutdown saved the session's slot.
    let file = slots.join(egirl::agent::slot_file_name("resumed"));
    assert!(file.is_file(), "no {}", file.display());

    server.kill();
    server = RealServer::start_with(port, setup.path(), &extra);
    let (restored_in, restored_cached) = run("What is my name?");

    // The same, without the saved file: a cold first turn.
    server.kill();
    std::fs::remove_file(&file).expect("remove the slot file");
    server = RealServer::start_with(port, setup.path(), &extra);
    let (cold_in, cold_cached) = run("Name a color.");
    drop(server);

    eprintln!(
        "first turn after a restart: restored {restored_cached} of {restored_in} prompt tokens cached; \
         without the slot file {cold_cached} of {cold_in}"
    );
    assert!(
        restored_cached > 0 && restored_cached * 2 > restored_in,
        "restored {restored_cached} of {restored_in}"
    );
    assert_eq!(
        cold_cached, 0,
        "without restore, {cold_cached} of {cold_in}"
    );
}

/// Skills on a real server: the `<available_skills>` block is in the
/// system prompt, and being byte-identical from turn to turn it is served
/// from llama.cpp's prefix cache on the next turn.
#[test]
fn skills_block_is_reused_from_the_prefix_cache() {
    let setup = Setup::new();
    let server = RealServer::start(setup.path());
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skills");
    let extra = format!(
        "\n[skills]\ndirs = [\"{}\", \"{}\"]\n",
        fixtures.display(),
        fixtures.join("edge").display()
    );
    let config = setup.config(&server.url(), "qwen3", &extra);
    let listed = setup.egirl(&config, &["skills", "list", "--json"]);
    assert!(listed.status.success(), "{}", describe(&listed));
    let skills: Value = serde_json::from_slice(&listed.stdout).expect("skills JSON");
    let available = skills["skills"]
        .as_array()
        .map_or(0, |s| s.iter().filter(|s| s["available"] == true).count());
    assert!(available > 0, "{skills}");

    let mut usage = Vec::new();
    for q in ["Name a color.", "Name an animal."] {
        let out = setup.egirl(&config, &["-m", q, "--json", "--session", "e2e-skills"]);
        assert!(out.status.success(), "{}", describe(&out));
        let ev = events(&out);
        let first = of_type(&ev, "usage")
            .first()
            .map(|u| {
                (
                    u["input_tokens"].as_u64().unwrap_or(0),
                    u["cached_tokens"].as_u64().unwrap_or(0),
                )
            })
            .unwrap_or_else(|| panic!("no usage: {}", describe(&out)));
        usage.push(first);
    }
    eprintln!("(input_tokens, cached_tokens) per turn: {usage:?}");
    let (first_input, _) = usage[0];
    let (_, second_cached) = usage[1];
    // The block (hundreds of tokens) sits before the history: a changed
    // block would cut the cached prefix far below the first prompt.
    assert!(
        second_cached + 64 >= first_input,
        "turn 2 reused {second_cached} of turn 1's {first_input} prompt tokens"
    );
}
