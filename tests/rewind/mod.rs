//! Fork, rewind and file checkpoints (docs/long-sessions.md) through the real binary
//! against the scripted fake model.

mod core;
mod failure;
mod files;
mod fork;
mod pruning;

use std::path::Path;

use serde_json::Value;

use crate::support::fake_llama::Reply;

/// One scripted reply calling several tools.
pub fn calls(list: &[(&str, Value)]) -> Reply {
    let args: Vec<(String, String)> = list
        .iter()
        .map(|(n, a)| (n.to_string(), a.to_string()))
        .collect();
    let borrowed: Vec<(&str, &str)> = args.iter().map(|(n, a)| (n.as_str(), a.as_str())).collect();
    Reply::tool_calls(&borrowed)
}

/// Every line of a transcript as JSON (messages and marks).
pub fn transcript_lines(workspace: &Path, session: &str) -> Vec<Value> {
    let path = workspace.join("sessions").join(format!("{session}.jsonl"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The user messages the last request to the model carried.
pub fn sent_user_messages(requests: &[Value]) -> Vec<String> {
    let last = requests.last().expect("a request");
    last["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}
