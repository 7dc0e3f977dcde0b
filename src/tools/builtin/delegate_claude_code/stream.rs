//! Claude Code's `--output-format stream-json` lines, read into what egirl
//! shows (progress under the call) and what the model gets (the result).

use serde_json::Value;

/// What one line means to egirl.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// The session starts: its model and id.
    Init { model: String, session_id: String },
    /// Text or a tool use to show under the call.
    Progress(String),
    /// The final `result` line.
    Done(Outcome),
}

#[derive(Debug, Default, PartialEq)]
pub struct Outcome {
    pub result: String,
    pub is_error: bool,
    pub cost_usd: f64,
    pub session_id: String,
    pub num_turns: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
}

/// Characters of text or input shown per progress line.
const SHOWN: usize = 160;

pub fn parse(line: &str) -> Vec<Line> {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return Vec::new();
    };
    let str_of = |v: &Value| v.as_str().unwrap_or("").to_string();
    match v["type"].as_str() {
        Some("system") if v["subtype"] == "init" => vec![Line::Init {
            model: str_of(&v["model"]),
            session_id: str_of(&v["session_id"]),
        }],
        Some("assistant") => blocks(&v["message"]["content"])
            .filter_map(|b| match b["type"].as_str() {
                Some("text") => {
                    let text = b["text"].as_str().unwrap_or("").trim();
                    (!text.is_empty()).then(|| short(text))
                }
                Some("tool_use") => Some(format!(
                    "→ {} {}",
                    b["name"].as_str().unwrap_or("?"),
                    input_summary(&b["input"])
                )),
                _ => None,
            })
            .map(Line::Progress)
            .collect(),
        Some("user") => blocks(&v["message"]["content"])
            .filter(|b| b["type"] == "tool_result" && b["is_error"] == true)
            .map(|b| {
                let text = match &b["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Line::Progress(format!("  ✗ {}", short(&text)))
            })
            .collect(),
        Some("result") => {
            let usage = &v["usage"];
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            vec![Line::Done(Outcome {
                result: str_of(&v["result"]),
                is_error: v["is_error"].as_bool().unwrap_or(false)
                    || v["subtype"].as_str().is_some_and(|s| s != "success"),
                cost_usd: v["total_cost_usd"].as_f64().unwrap_or(0.0),
                session_id: str_of(&v["session_id"]),
                num_turns: n(&v["num_turns"]),
                input_tokens: n(&usage["input_tokens"]),
                output_tokens: n(&usage["output_tokens"]),
                cached_tokens: n(&usage["cache_read_input_tokens"]),
            })]
        }
        _ => Vec::new(),
    }
}

fn blocks(content: &Value) -> impl Iterator<Item = &Value> {
    content.as_array().into_iter().flatten()
}

/// A tool's input in a few words: its path, command or pattern if it has one.
pub fn input_summary(input: &Value) -> String {
    for key in [
        "file_path",
        "command",
        "pattern",
        "path",
        "url",
        "description",
    ] {
        if let Some(s) = input[key].as_str() {
            return short(s);
        }
    }
    short(&input.to_string())
}

fn short(text: &str) -> String {
    let first = text.lines().next().unwrap_or("");
    let mut out: String = first.chars().take(SHOWN).collect();
    if first.chars().count() > SHOWN || text.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_uses_text_and_the_result_are_read() {
        let tool = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Writing it."},{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/w/a.txt","content":"x"}}]}}"#;
        assert_eq!(
            parse(tool),
            vec![
                Line::Progress("Writing it.".into()),
                Line::Progress("→ Write /w/a.txt".into())
            ]
        );
        let denied = r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"no permission","is_error":true,"tool_use_id":"t1"}]}}"#;
        assert_eq!(
            parse(denied),
            vec![Line::Progress("  ✗ no permission".into())]
        );
        let result = r#"{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"Done.","session_id":"s-1","total_cost_usd":0.0011,"usage":{"input_tokens":20,"output_tokens":40,"cache_read_input_tokens":5}}"#;
        assert_eq!(
            parse(result),
            vec![Line::Done(Outcome {
                result: "Done.".into(),
                is_error: false,
                cost_usd: 0.0011,
                session_id: "s-1".into(),
                num_turns: 2,
                input_tokens: 20,
                output_tokens: 40,
                cached_tokens: 5,
            })]
        );
        assert!(parse("not json").is_empty());
    }
}
