//! `permissions = "local-model"`: the local model answers one of Claude
//! Code's permission requests, ALLOW or DENY with a reason. Anything but a
//! clear ALLOW (no answer, an error, a ramble) is a denial.

use serde_json::{Value, json};

use crate::tools::ToolContext;

const SYSTEM: &str = "You approve or refuse one tool use of a coding agent working on the task below. \
Allow what the task needs inside its directory. Refuse reading secrets or credentials, network access \
the task does not need, and changes outside the directory. Answer ALLOW or DENY, then a short reason on the same line.";

/// Ok(reason) to allow, Err(reason) to deny.
pub async fn decide(
    ctx: &ToolContext,
    task: &str,
    dir: &str,
    tool: &str,
    input: &Value,
) -> Result<String, String> {
    let local = &ctx.config.local;
    let body = json!({
        "model": local.model,
        "stream": false,
        "max_tokens": 200,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": format!("Task: {task}\nDirectory: {dir}\nTool: {tool}\nInput: {input}")}
        ]
    });
    let url = format!(
        "{}/v1/chat/completions",
        local.endpoint.trim_end_matches('/')
    );
    let client = reqwest::Client::builder()
        .timeout(local.timeout.0)
        .build()
        .map_err(|e| format!("the local model could not be asked: {e}"))?;
    let answer: Value = client
        .post(&url)
        .json(&body)
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|e| format!("the local model could not be asked: {e}"))?
        .json()
        .await
        .map_err(|e| format!("the local model's answer was unreadable: {e}"))?;
    let text = answer["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or("");
    verdict(text)
}

/// ALLOW/DENY and the rest of the line, a `<think>` block skipped.
pub fn verdict(text: &str) -> Result<String, String> {
    let text = match text.rfind("</think>") {
        Some(end) => &text[end + "</think>".len()..],
        None => text,
    };
    let text = text.trim().trim_start_matches(['*', '`', '"']).trim();
    let upper = text.to_ascii_uppercase();
    let reason = |word: &str| {
        let rest = text[word.len()..].trim_start_matches([':', '.', '-', '*', ' ', ',']);
        let rest = rest.lines().next().unwrap_or("").trim();
        if rest.is_empty() {
            "no reason given".to_string()
        } else {
            rest.to_string()
        }
    };
    if upper.starts_with("ALLOW") {
        Ok(reason("ALLOW"))
    } else if upper.starts_with("DENY") {
        Err(reason("DENY"))
    } else {
        let first: String = text.chars().take(80).collect();
        Err(format!(
            "no clear ALLOW from the local model (it said: {first})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_clear_allow_allows() {
        assert_eq!(
            verdict("ALLOW: the task asks for it"),
            Ok("the task asks for it".into())
        );
        assert_eq!(
            verdict("<think>hmm</think>\n**DENY** - reads ~/.ssh"),
            Err("reads ~/.ssh".into())
        );
        assert!(verdict("I think it is fine").is_err());
        assert!(verdict("").is_err());
    }
}
