//! `egirl export [--out F] [--escalated-only]`: session transcripts as
//! fine-tuning JSONL in the training-data format of docs/design.md §6: one conversation per line, `{"messages": [...], "tools": [...]}`,
//! tool calls as `<tool_call>` blocks in the assistant's content and tool
//! results as a user message of `<tool_response>` blocks, matched by position.
//!
//! The full export keeps each transcript as it is, an escalated turn's weak
//! local attempt included (it is what happened). `--escalated-only` is the
//! distillation set: one example per escalated turn, the user's message and
//! the remote model's answer (with its tool calls and results) only; the
//! failed local attempt, and any local tool calls before the hand-off, are
//! left out so the local model learns the remote model's behaviour.
//!
//! The system message is egirl's static system text, not the workspace
//! files: those change over time (and hold private memory) and would be
//! repeated in every example.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::chat::ChatMessage;
use crate::print;
use crate::protocol::Role;
use crate::providers::tool_call_text;
use crate::redact::Redactor;
use crate::sessions::{self, Record};

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Write to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Only turns a remote model answered after the local one failed.
    #[arg(long)]
    pub escalated_only: bool,
}

/// The parts of an `.egirl/escalation.jsonl` line the export needs.
#[derive(Debug, Deserialize)]
struct EscalationLine {
    ts: DateTime<Utc>,
    session: String,
}

/// Writes the export and says on stderr how many examples it wrote. A
/// transcript written before redaction existed may hold a secret value: it
/// is redacted here, so no key is ever trained into a model.
pub fn run(workspace: &Path, args: &ExportArgs, redactor: &Redactor) -> Result<()> {
    let lines = export(workspace, args.escalated_only)?;
    let mut text = String::new();
    for line in &lines {
        // Values are redacted inside JSON strings; the marker needs no escaping.
        text.push_str(&redactor.redact(line));
        text.push('\n');
    }
    match &args.out {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print::out(&print::json_line(&text)).context("cannot write to stdout")?,
    }
    print::err(format_args!(
        "egirl: exported {} conversation(s)",
        lines.len()
    ));
    Ok(())
}

/// The JSONL lines, sessions in file-name order.
pub fn export(workspace: &Path, escalated_only: bool) -> Result<Vec<String>> {
    let tools: Vec<Value> = crate::tools::specs()
        .iter()
        .map(|spec| spec.to_openai_json())
        .collect();
    let escalations = if escalated_only {
        read_escalations(workspace)?
    } else {
        Vec::new()
    };
    let mut out = Vec::new();
    for (id, path) in session_files(workspace)? {
        // The originals are all there: a compaction's summary is not an example.
        let mut records = sessions::load(&path)?;
        records.retain(|r| r.compaction.is_none());
        if escalated_only {
            let times: Vec<DateTime<Utc>> = escalations
                .iter()
                .filter(|e| e.session == id)
                .map(|e| e.ts)
                .collect();
            for turn in escalated_turns(&records, &times) {
                out.extend(example(&turn, &tools));
            }
        } else {
            let messages: Vec<ChatMessage> = records.into_iter().map(|r| r.message).collect();
            out.extend(example(&messages, &tools));
        }
    }
    Ok(out)
}

fn session_files(workspace: &Path) -> Result<Vec<(String, PathBuf)>> {
    let dir = workspace.join("sessions");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot list {}", dir.display()))?
            .path();
        if path.extension().is_some_and(|e| e == "jsonl")
            && let Some(id) = path.file_stem().and_then(|s| s.to_str())
        {
            files.push((id.to_string(), path.clone()));
        }
    }
    files.sort();
    Ok(files)
}

/// Missing file: no escalations. A torn or bad line is skipped with a
/// warning: losing one example is better than no export.
fn read_escalations(workspace: &Path) -> Result<Vec<EscalationLine>> {
    let path = workspace.join(".egirl").join("escalation.jsonl");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(l) => out.push(l),
            Err(e) => print::err(format_args!(
                "egirl: skipping {}:{}: bad escalation line: {e}",
                path.display(),
                n + 1
            )),
        }
    }
    Ok(out)
}

/// For each escalation time: the user message that started the turn it
/// fell in, then what was recorded after it until the next user message
/// (the remote model's part). The escalation is written after the local
/// attempt was saved and before the remote answer, so the times split the
/// turn. A turn without a remote assistant message yields nothing.
pub fn escalated_turns(records: &[Record], escalations: &[DateTime<Utc>]) -> Vec<Vec<ChatMessage>> {
    let mut turns = Vec::new();
    let mut used_starts = Vec::new();
    for &at in escalations {
        let Some(start) = records
            .iter()
            .rposition(|r| r.message.role == Role::User && r.ts <= at)
        else {
            continue;
        };
        // One example per turn, even if it was recorded twice.
        if used_starts.contains(&start) {
            continue;
        }
        used_starts.push(start);
        let end = records[start + 1..]
            .iter()
            .position(|r| r.message.role == Role::User)
            .map_or(records.len(), |i| start + 1 + i);
        let after: Vec<&Record> = records[start + 1..end]
            .iter()
            .filter(|r| r.ts > at)
            .collect();
        // A remote failure falls back to the local model: such a turn
        // teaches the local model nothing new. Older transcripts name no
        // provider and are kept.
        let answered_locally = after.iter().any(|r| {
            r.message.role == Role::Assistant
                && r.provider.as_deref() == Some(crate::usage::usage_log::LOCAL_PROVIDER)
        });
        let mut turn = vec![records[start].message.clone()];
        turn.extend(after.iter().map(|r| r.message.clone()));
        if !answered_locally && turn.iter().any(|m| m.role == Role::Assistant) {
            turns.push(turn);
        }
    }
    turns
}

/// One training line, or `None` when there is no assistant answer in it.
/// It starts at the first user message and ends at the last assistant one
/// (a turn cut off mid-way teaches nothing); consecutive tool results
/// become one user message, as Qwen3's chat template renders them.
pub fn example(messages: &[ChatMessage], tools: &[Value]) -> Option<String> {
    let first = messages.iter().position(|m| m.role == Role::User)?;
    let last = messages.iter().rposition(|m| m.role == Role::Assistant)?;
    if last < first {
        return None;
    }
    let mut out = vec![json!({"role": "system", "content": crate::agent::STATIC_SYSTEM})];
    let mut results: Vec<&str> = Vec::new();
    for m in &messages[first..=last] {
        if m.role != Role::Tool && !results.is_empty() {
            out.push(tool_responses(&results));
            results.clear();
        }
        match m.role {
            Role::Tool => results.push(&m.content),
            Role::User => out.push(json!({"role": "user", "content": m.content})),
            Role::Assistant => {
                let content = tool_call_text::render_assistant_content(m);
                // An interrupted reply can leave an empty message behind.
                if !content.trim().is_empty() {
                    out.push(json!({"role": "assistant", "content": content}));
                }
            }
            // The export writes its own system message.
            Role::System => {}
        }
    }
    if !out.iter().any(|m| m["role"] == "assistant") {
        return None;
    }
    Some(tool_call_text::spaced_json(
        &json!({"messages": out, "tools": tools}),
    ))
}

fn tool_responses(results: &[&str]) -> Value {
    json!({"role": "user", "content": tool_call_text::render_tool_responses(results.iter().copied())})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Origin;

    fn rec(secs: i64, message: ChatMessage) -> Record {
        Record {
            ts: DateTime::from_timestamp(1_700_000_000 + secs, 0).unwrap_or_default(),
            origin: Origin::Tui,
            typed: None,
            provider: None,
            message,
            compaction: None,
            details: Default::default(),
        }
    }

    #[test]
    fn a_turn_escalated_twice_is_one_example_and_one_without_answer_is_none() {
        let records = [
            rec(0, ChatMessage::user("q1")),
            rec(1, ChatMessage::assistant("weak")),
            rec(3, ChatMessage::assistant("strong")),
            rec(10, ChatMessage::user("q2")),
            rec(11, ChatMessage::assistant("weak again")),
        ];
        let at = |s: i64| DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap_or_default();
        let turns = escalated_turns(&records, &[at(2), at(2), at(12)]);
        assert_eq!(turns.len(), 1);
        let contents: Vec<&str> = turns[0].iter().map(|m| m.content.as_str()).collect();
        assert_eq!(contents, ["q1", "strong"]);
        // A user message alone is not an example.
        assert!(example(&[ChatMessage::user("hi")], &[]).is_none());
    }

    #[test]
    fn a_turn_the_local_model_answered_after_a_remote_failure_is_left_out() {
        let by = |secs, text, provider: &str| Record {
            provider: Some(provider.to_string()),
            ..rec(secs, ChatMessage::assistant(text))
        };
        let records = [
            rec(0, ChatMessage::user("q1")),
            by(1, "weak", "llamacpp"),
            by(3, "fallback after anthropic failed", "llamacpp"),
            rec(10, ChatMessage::user("q2")),
            by(11, "weak", "llamacpp"),
            by(13, "strong", "anthropic"),
        ];
        let at = |s: i64| DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap_or_default();
        let turns = escalated_turns(&records, &[at(2), at(12)]);
        let contents: Vec<Vec<&str>> = turns
            .iter()
            .map(|t| t.iter().map(|m| m.content.as_str()).collect())
            .collect();
        assert_eq!(contents, [["q2", "strong"]]);
    }
}
