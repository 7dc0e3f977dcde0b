//! Prefix-cache reuse (docs/design.md §7) and slot restore on resume,
//! against the real llama-server `make install` puts in ~/.cache/egirl
//! (SmolLM2-135M-Instruct), started here with `--ctx-size 8192 --parallel 1
//! --slot-save-path <tmp>` so the one slot is deterministic.
//!
//! A fixed 10-turn session with tool calls (`prefix_cache/transcript.rs`) is
//! replayed request by request, built exactly as egirl builds them: system
//! prompt from `agent::system_prompt`, the tools of `tools::specs()` (in the
//! system prompt, Qwen3 format, when the chat template drops native tools,
//! as egirl's `auto` does), user messages from `agent::user_message` (the
//! volatile block inside the new user message), assistant messages with
//! their tool calls and the tool results. Each request generates 4 tokens,
//! which are thrown away: the transcript's reply goes into history instead.
//!
//! Per request: prompt tokens (`prompt_n + cache_n`), `cache_n`, evaluated
//! (`prompt_n`) and **new**: the tokens of this request's prompt after the
//! longest common token prefix with the previous request's prompt (both
//! rendered by `/apply-template` and tokenized by `/tokenize` as the server
//! does). With egirl's layout the previous prompt is a prefix of this one,
//! so new is exactly what was appended: the previous reply (the server
//! cached its own 4 generated tokens, not the transcript's reply), tool
//! results, the new user message with its volatile block, and the next
//! assistant header. A perfect prefix cache evaluates `new` tokens (at
//! least 1). Target from turn 2 on: evaluated ≤ 1.1 × new + 16.
//!
//! The naive layout for comparison puts the time (with seconds, per
//! request) and two memory hits (per turn) at the top of the system prompt.
//!
//! Slot restore: after the ordered session, slot 0 is saved, the server is
//! restarted, and the next turn is sent with and without restoring it.
//!
//! `cargo bench --bench prefix_cache`; prints "skipped: ..." and exits 0
//! when the server or model is missing or when not run by `cargo bench`.

#[allow(dead_code)]
#[path = "../tests/e2e/server.rs"]
mod server;
#[path = "prefix_cache/transcript.rs"]
mod transcript;

use std::path::Path;
use std::time::Instant;

use chrono::{DateTime, Local, TimeZone};
use egirl::chat::{ChatMessage, ToolCall, ToolSpec, Usage};
use egirl::config::{LocalConfig, ToolFormat};
use egirl::providers::llamacpp::{ChatRequest, LlamaCpp};
use egirl::providers::tool_call_text;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use server::RealServer;

const MAX_TOKENS: u64 = 4;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// egirl's: static system prompt, volatile block in the new user message.
    Ordered,
    /// Time and memory hits at the top of the system prompt.
    Naive,
}

struct Row {
    label: String,
    turn: usize,
    usage: Usage,
    tokens: usize,
    new: usize,
}

struct Client {
    llama: LlamaCpp,
    http: reqwest::Client,
}

impl Client {
    async fn connect(url: &str) -> Self {
        let cfg = LocalConfig {
            endpoint: url.to_string(),
            max_tokens: MAX_TOKENS,
            ..LocalConfig::default()
        };
        let llama = LlamaCpp::new(&cfg);
        // egirl's `auto`: tools in the system prompt when the template drops them.
        let props = llama.props().await.expect("/props");
        let format = if props.supports_tools == Some(false) {
            ToolFormat::Qwen3
        } else {
            ToolFormat::Auto
        };
        Self {
            llama: llama.with_tool_format(format),
            http: reqwest::Client::new(),
        }
    }

    /// The prompt's tokens exactly as the server sees them.
    async fn tokens(&self, req: &ChatRequest) -> Vec<u64> {
        let prompt = self
            .llama
            .render_prompt(req)
            .await
            .expect("/apply-template");
        let body = json!({ "content": prompt, "add_special": true, "parse_special": true });
        let reply: Value = self
            .http
            .post(format!("{}/tokenize", self.llama.endpoint()))
            .json(&body)
            .send()
            .await
            .expect("/tokenize")
            .json()
            .await
            .expect("/tokenize JSON");
        let tokens = reply["tokens"].as_array().expect("tokens");
        tokens.iter().map(|t| t.as_u64().unwrap_or(0)).collect()
    }

    async fn chat(&self, req: &ChatRequest) -> Usage {
        let cancel = CancellationToken::new();
        let reply = self.llama.chat(req, &cancel, &mut |_| {}).await;
        reply.expect("chat").usage
    }
}

fn at(turn: usize, step: usize) -> DateTime<Local> {
    let start = Local
        .with_ymd_and_hms(2025, 6, 2, 9, 0, 0)
        .single()
        .expect("a local time");
    start + chrono::Duration::seconds(turn as i64 * 173 + step as i64 * 9)
}

fn system(layout: Layout, workspace: &Path, turn: usize, step: usize) -> String {
    let base = egirl::agent::system_prompt(workspace);
    match layout {
        Layout::Ordered => base,
        Layout::Naive => {
            let hits = &transcript::MEMORY_HITS;
            format!(
                "now: {}\n\nRelevant memories:\n- {}\n- {}\n\n{base}",
                at(turn, step).format("%Y-%m-%d %H:%M:%S %Z (%A)"),
                hits[(2 * turn) % hits.len()],
                hits[(2 * turn + 1) % hits.len()],
            )
        }
    }
}

fn common_prefix(a: &[u64], b: &[u64]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Replays the session; one row per model request.
async fn replay(client: &Client, layout: Layout, workspace: &Path) -> Vec<Row> {
    let specs: Vec<ToolSpec> = egirl::tools::specs();
    let mut history: Vec<ChatMessage> = Vec::new();
    let mut previous: Vec<u64> = Vec::new();
    let mut rows = Vec::new();
    for (t, turn) in transcript::session().into_iter().enumerate() {
        let user = match layout {
            Layout::Ordered => egirl::agent::user_message(turn.typed, at(t, 0)),
            Layout::Naive => turn.typed.to_string(),
        };
        history.push(ChatMessage::user(user));
        for (s, step) in turn.steps.into_iter().enumerate() {
            let mut messages = vec![ChatMessage::system(system(layout, workspace, t, s))];
            messages.extend(history.iter().cloned());
            let request = ChatRequest {
                messages,
                tools: specs.clone().into(),
                max_tokens: MAX_TOKENS,
                slot: None,
                images: Default::default(),
            };
            let tokens = client.tokens(&request).await;
            let usage = client.chat(&request).await;
            let new = tokens.len() - common_prefix(&tokens, &previous);
            rows.push(Row {
                label: format!("{}{}", t + 1, (b'a' + s as u8) as char),
                turn: t + 1,
                usage,
                tokens: tokens.len(),
                new,
            });
            previous = tokens;
            history.extend(reply_messages(&step));
        }
    }
    rows
}

/// The transcript's reply as egirl keeps it: the assistant message with its
/// calls (ids as egirl's Qwen3 parser gives them), then the results.
fn reply_messages(step: &transcript::Step) -> Vec<ChatMessage> {
    let calls: Vec<ToolCall> = step
        .calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments, _))| ToolCall {
            id: tool_call_text::call_id(i),
            name: name.to_string(),
            arguments: arguments.clone(),
            arguments_error: None,
        })
        .collect();
    let mut out = vec![ChatMessage {
        tool_calls: calls.clone(),
        ..ChatMessage::assistant(step.text)
    }];
    for (call, (_, _, result)) in calls.iter().zip(&step.calls) {
        out.push(ChatMessage::tool_result(call, result.clone()));
    }
    out
}

fn meets_target(row: &Row) -> bool {
    row.usage.evaluated_tokens as f64 <= 1.1 * row.new as f64 + 16.0
}

fn print_table(name: &str, rows: &[Row]) {
    println!("\n### {name}\n");
    println!(
        "| request | prompt tokens | cache_n | evaluated | new | % evaluated | evaluated ≤ 1.1 × new + 16 | prompt ms |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |");
    for (i, row) in rows.iter().enumerate() {
        let u = &row.usage;
        let prompt = u.evaluated_tokens + u.cached_tokens;
        let mismatch = if prompt as usize == row.tokens {
            String::new()
        } else {
            format!(" (tokenized: {})", row.tokens)
        };
        let check = match (i, meets_target(row)) {
            (0, _) => "— (cold)",
            (_, true) => "yes",
            (_, false) => "**no**",
        };
        println!(
            "| {} | {prompt}{mismatch} | {} | {} | {} | {:.1}% | {check} | {:.0} |",
            row.label,
            u.cached_tokens,
            u.evaluated_tokens,
            row.new,
            pct(u.evaluated_tokens, prompt),
            u.prompt_ms,
        );
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Turns 2..10: mean per-request % evaluated, aggregate %, misses, prompt ms.
fn summary(rows: &[Row]) -> (f64, f64, usize, f64) {
    let warm: Vec<&Row> = rows.iter().filter(|r| r.turn >= 2).collect();
    let per: Vec<f64> = warm
        .iter()
        .map(|r| {
            pct(
                r.usage.evaluated_tokens,
                r.usage.evaluated_tokens + r.usage.cached_tokens,
            )
        })
        .collect();
    let evaluated: u64 = warm.iter().map(|r| r.usage.evaluated_tokens).sum();
    let prompt: u64 = warm
        .iter()
        .map(|r| r.usage.evaluated_tokens + r.usage.cached_tokens)
        .sum();
    let misses = warm.iter().filter(|r| !meets_target(r)).count();
    let ms: f64 = warm.iter().map(|r| r.usage.prompt_ms).sum();
    (
        per.iter().sum::<f64>() / per.len().max(1) as f64,
        pct(evaluated, prompt),
        misses,
        ms,
    )
}

/// The request of the turn after the session: what a resumed `--session`
/// sends first.
fn resume_request(workspace: &Path) -> ChatRequest {
    let mut messages = vec![ChatMessage::system(egirl::agent::system_prompt(workspace))];
    for (t, turn) in transcript::session().into_iter().enumerate() {
        messages.push(ChatMessage::user(egirl::agent::user_message(
            turn.typed,
            at(t, 0),
        )));
        for step in &turn.steps {
            messages.extend(reply_messages(step));
        }
    }
    // The next morning.
    messages.push(ChatMessage::user(egirl::agent::user_message(
        "Morning! What's still open on my todo list?",
        at(500, 0),
    )));
    ChatRequest {
        messages,
        tools: egirl::tools::specs().into(),
        max_tokens: MAX_TOKENS,
        slot: None,
        images: Default::default(),
    }
}

/// After the session was saved to `file` and the server stopped: the
/// resumed turn on a restarted server, with and without restoring the slot.
async fn slot_restore(
    port: u16,
    dir: &Path,
    extra: &[&str],
    request: &ChatRequest,
    file: &str,
    saved: &egirl::providers::llamacpp::SlotFile,
) {
    let mut results = Vec::new();
    for restore in [true, false] {
        let server = RealServer::start_with(port, dir, extra);
        let client = Client::connect(&server.url()).await;
        let began = Instant::now();
        let restored = if restore {
            Some(client.llama.restore_slot(0, file).await.expect("restore"))
        } else {
            None
        };
        let usage = client.chat(request).await;
        let wall = began.elapsed().as_secs_f64() * 1000.0;
        results.push((restore, restored, usage, wall));
        drop(server);
    }
    println!("\n### Slot restore on resume\n");
    println!(
        "slot 0 saved at the end of the session: {} tokens, {:.1} MB, {:.1} ms\n",
        saved.tokens,
        saved.bytes as f64 / 1e6,
        saved.ms
    );
    println!(
        "| first turn after a restart | prompt tokens | cache_n | evaluated | restore ms | prompt ms | restore + request wall ms |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (restore, restored, u, wall) in results {
        println!(
            "| {} | {} | {} | {} | {} | {:.0} | {wall:.0} |",
            if restore {
                "slot restored"
            } else {
                "no restore (cold)"
            },
            u.evaluated_tokens + u.cached_tokens,
            u.cached_tokens,
            u.evaluated_tokens,
            restored.map_or("—".to_string(), |r| format!("{:.1}", r.ms)),
            u.prompt_ms,
        );
    }
}

fn main() {
    // `cargo test --benches` runs bench targets without `--bench`: no server there.
    if !std::env::args().any(|a| a == "--bench") {
        println!("skipped: prefix_cache runs under `cargo bench` only");
        return;
    }
    let cache = server::cache_dir();
    let binary = std::env::var_os("LLAMA_SERVER")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| cache.join("llama/bin/llama-server"));
    let model = std::env::var_os("LLAMA_MODEL")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| cache.join("models/SmolLM2-135M-Instruct.Q4_1.gguf"));
    for (what, path) in [("llama-server", &binary), ("model", &model)] {
        if !path.is_file() {
            println!(
                "skipped: no {what} at {} (run `make install`)",
                path.display()
            );
            return;
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let (workspace, _) = egirl::workspace::ensure(&dir.path().join("ws")).expect("workspace");
    let slots = dir.path().join("slots");
    std::fs::create_dir_all(&slots).expect("slot dir");
    let slot_arg = slots.display().to_string();
    let extra = ["--slot-save-path", slot_arg.as_str()];
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let port = server::free_port();
        let mut tables = Vec::new();
        for (layout, name) in [
            (Layout::Ordered, "egirl's ordered layout"),
            (Layout::Naive, "naive layout (time and memory hits at the top)"),
        ] {
            // A fresh server per layout: the same cold start for both.
            let server = RealServer::start_with(port, dir.path(), &extra);
            let client = Client::connect(&server.url()).await;
            if layout == Layout::Ordered {
                let props: Value = reqwest::get(format!("{}/props", server.url()))
                    .await
                    .expect("/props")
                    .json()
                    .await
                    .expect("/props JSON");
                println!(
                    "llama-server {} ({}), --ctx-size 8192 --parallel 1, {MAX_TOKENS} tokens generated per request",
                    props["build_info"].as_str().unwrap_or("?"),
                    model.file_name().unwrap_or_default().to_string_lossy(),
                );
            }
            let rows = replay(&client, layout, &workspace).await;
            print_table(name, &rows);
            if layout == Layout::Ordered {
                // The slot holds the whole session: save it (as egirl does
                // at shutdown), restart, resume.
                let file = egirl::agent::slot_file_name("bench");
                let saved = client.llama.save_slot(0, &file).await.expect("save");
                drop(server);
                let request = resume_request(&workspace);
                slot_restore(port, dir.path(), &extra, &request, &file, &saved).await;
            } else {
                drop(server);
            }
            tables.push((name, rows));
        }
        println!("\n### Summary (turns 2-10)\n");
        println!(
            "| layout | mean % of the prompt evaluated per request | evaluated / prompt tokens | requests over target | prompt ms |"
        );
        println!("| --- | ---: | ---: | ---: | ---: |");
        for (name, rows) in &tables {
            let (mean, aggregate, misses, ms) = summary(rows);
            let count = rows.iter().filter(|r| r.turn >= 2).count();
            println!("| {name} | {mean:.1}% | {aggregate:.1}% | {misses} of {count} | {ms:.0} |");
        }
    });
}
