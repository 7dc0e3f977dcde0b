//! Sessions taking turns on real llama-server replicas through the agent
//! core (shared by the e2e test and `benches/fleet_cache.rs`).

use std::path::Path;
use std::time::Duration;

use egirl::config::{Balance, Config, ExecApproval, ToolFormat};
use egirl::protocol::{ErrorEvent, EventKind, Op, Origin, TokenUsage};

/// One turn's first request, as its `usage` event reported it.
#[derive(Clone, Debug)]
pub struct TurnUsage {
    pub session: String,
    pub round: usize,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub endpoint: String,
}

const QUESTIONS: [&str; 6] = [
    "Name a fruit.",
    "Name a color.",
    "Name an animal.",
    "Name a city.",
    "Name a number.",
    "Name a tree.",
];

/// `sessions` sessions alternate, `rounds` turns each, against `urls`
/// behind one `[local]`; the first usage of every turn, in order. Each
/// round starts one session later (round 1: 1, 2, …, 0), as sessions
/// that take turns do; with an even number of sessions a fixed order would
/// make round-robin keep every session on one endpoint by accident.
pub fn alternate(
    urls: &[String],
    balance: Balance,
    sessions: usize,
    rounds: usize,
    dir: &Path,
) -> Vec<TurnUsage> {
    let mut config = Config::default();
    config.local.endpoints = urls.to_vec();
    config.local.model = "SmolLM2-135M-Instruct".into();
    config.local.context_length = 8192;
    config.local.max_tokens = 16;
    config.local.tool_format = ToolFormat::Qwen3;
    config.local.balance = balance;
    config.agent.max_turns = 2;
    config.tools.exec.approval = ExecApproval::Deny;
    config.memory.watch = false;
    config.skills.watch = false;
    let workspace = dir.join(format!("ws-{balance:?}"));
    let (workspace, _) = egirl::workspace::ensure(&workspace).expect("workspace");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let (agent, _core) = egirl::agent::spawn(config, workspace, Vec::new());
        let mut events = agent.bus.subscribe();
        let mut out = Vec::new();
        for round in 0..rounds {
            for k in 0..sessions {
                let s = (k + round) % sessions;
                let session = format!("fleet-{s}");
                assert!(agent.submit(Op::UserMessage {
                    session: session.clone(),
                    origin: Origin::Cli,
                    text: QUESTIONS[(round + s) % QUESTIONS.len()].into(),
                    images: Vec::new(),
                }));
                let mut first = None;
                loop {
                    let event = tokio::time::timeout(Duration::from_secs(600), events.recv())
                        .await
                        .expect("an event within 600s")
                        .expect("the bus is open");
                    if event.session != session {
                        continue;
                    }
                    match event.kind {
                        EventKind::Usage(TokenUsage {
                            input_tokens,
                            cached_tokens,
                            endpoint,
                            ..
                        }) if first.is_none() => {
                            first = Some(TurnUsage {
                                session: session.clone(),
                                round,
                                input_tokens,
                                cached_tokens,
                                endpoint: endpoint.unwrap_or_default(),
                            });
                        }
                        // SmolLM2 sometimes keeps calling tools until max_turns:
                        // the turn's first request (the one measured) went out
                        // and was answered, which is what affinity is about.
                        EventKind::Error(ErrorEvent { message })
                            if !message.contains("without a final answer") =>
                        {
                            panic!("{session}: {message}")
                        }
                        EventKind::TurnEnded(_) => break,
                        _ => {}
                    }
                }
                out.push(first.unwrap_or_else(|| panic!("{session}: no usage")));
            }
        }
        agent.submit(Op::Shutdown);
        out
    })
}
