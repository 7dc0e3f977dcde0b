use serde_json::json;

use super::*;
use crate::protocol::Role;

// The long texts of the format live in files, so they read as the model
// sees them.
const TOOLS_BLOCK: &str = include_str!("../../../tests/data/tool_call_text/tools_block.txt");
const ASSISTANT_WITH_TWO_CALLS: &str =
    include_str!("../../../tests/data/tool_call_text/assistant_with_two_calls.txt");
const REPLY_WITH_TWO_CALLS: &str =
    include_str!("../../../tests/data/tool_call_text/reply_with_two_calls.txt");

/// A text file's content without the newline that ends the file.
fn without_final_newline(text: &'static str) -> &'static str {
    text.strip_suffix('\n').unwrap_or(text)
}

fn spec(name: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        description: "Reads a file.",
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }
}

fn call(index: usize, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: call_id(index),
        name: name.into(),
        arguments,
        arguments_error: None,
    }
}

#[test]
fn tools_block_is_written_as_qwen3s_template_writes_it() {
    let block = tools_system_block(&[spec("read_file"), spec("exec")]);
    let expected = without_final_newline(TOOLS_BLOCK);
    assert_eq!(block, expected);
    assert_eq!(
        block,
        tools_system_block(&[spec("read_file"), spec("exec")])
    );
}

#[test]
fn spaced_json_keeps_unicode_and_escapes() {
    assert_eq!(
        spaced_json(&json!({"a": ["é", "q\"\n"], "b": {}})),
        "{\"a\": [\"é\", \"q\\\"\\n\"], \"b\": {}}"
    );
}

#[test]
fn calls_and_responses_are_written_as_qwen3s_template_writes_them() {
    let c = call(0, "read_file", json!({"path": "/etc/hosts"}));
    assert_eq!(
        render_tool_call(&c),
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"/etc/hosts\"}}\n</tool_call>"
    );
    let mut message = ChatMessage::assistant("Let me read that file for you.");
    message.tool_calls = vec![c.clone(), call(1, "exec", json!({"command": "ls"}))];
    assert_eq!(
        render_assistant_content(&message),
        without_final_newline(ASSISTANT_WITH_TWO_CALLS)
    );
    // Raw content that already holds the blocks is sent byte for byte.
    let raw = "<tool_call>\n{'name': 'read_file', 'arguments': {'path': 'a'}}\n</tool_call>";
    let mut kept = ChatMessage::assistant(raw);
    kept.tool_calls = vec![call(0, "read_file", json!({"path": "a"}))];
    assert_eq!(render_assistant_content(&kept), raw);
    assert_eq!(
        render_tool_responses(["first", "second"]),
        "<tool_response>\nfirst\n</tool_response>\n<tool_response>\nsecond\n</tool_response>"
    );
    assert_eq!(kept.role, Role::Assistant);
}

#[test]
fn parses_several_calls_with_text_and_stable_ids() {
    let reply = without_final_newline(REPLY_WITH_TWO_CALLS);
    let parsed = parse_tool_calls(reply);
    assert_eq!(parsed.text, "I'll look.");
    assert_eq!(
        parsed.calls,
        vec![
            call(0, "read_file", json!({"path": "a"})),
            call(1, "glob", json!({"pattern": "*.md"}))
        ]
    );
    assert_eq!(parsed.history, reply);
}

#[test]
fn repairs_single_quotes_trailing_commas_and_double_encoding() {
    let parsed =
        parse_tool_calls("<tool_call>\n{'name': 'x', 'arguments': {'path': 'a',},}\n</tool_call>");
    assert_eq!(parsed.calls, vec![call(0, "x", json!({"path": "a"}))]);
    let parsed = parse_tool_calls(
        "<tool_call>\n{\"name\": \"x\", \"arguments\": \"{\\\"path\\\": \\\"a\\\"}\"}\n</tool_call>",
    );
    assert_eq!(parsed.calls, vec![call(0, "x", json!({"path": "a"}))]);
}

#[test]
fn unclosed_call_at_max_tokens_is_repaired() {
    let parsed = parse_tool_calls(
        "Reading.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.md\"",
    );
    assert_eq!(parsed.text, "Reading.");
    assert_eq!(
        parsed.calls,
        vec![call(0, "read_file", json!({"path": "notes.md"}))]
    );
}

#[test]
fn call_cut_inside_a_value_is_an_error_with_the_name() {
    let parsed = parse_tool_calls(
        "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"content\": \"half",
    );
    let c = &parsed.calls[0];
    assert_eq!(c.name, "write_file");
    assert_eq!(c.arguments, Value::Null);
    let error = c.arguments_error.as_deref().unwrap_or_default();
    assert!(error.contains("cut off before </tool_call>"), "{error}");
}

#[test]
fn broken_json_gives_arguments_error() {
    let parsed =
        parse_tool_calls("<tool_call>\n{\"name\": \"exec\" \"arguments\": {}}\n</tool_call>");
    assert_eq!(parsed.calls.len(), 1);
    assert_eq!(parsed.calls[0].name, "exec");
    let error = parsed.calls[0]
        .arguments_error
        .as_deref()
        .unwrap_or_default();
    assert!(
        error.starts_with("the tool call is not valid JSON"),
        "{error}"
    );

    let parsed = parse_tool_calls("<tool_call>\n</tool_call>");
    assert_eq!(parsed.calls[0].name, "unknown");
    assert!(parsed.calls[0].arguments_error.is_some());

    let parsed = parse_tool_calls("<tool_call>\n{\"arguments\": {}}\n</tool_call>");
    assert_eq!(
        parsed.calls[0].arguments_error.as_deref(),
        Some("the tool call has no \"name\"")
    );
}

#[test]
fn calls_inside_think_are_reasoning_only() {
    let reply = "<think>\nMaybe <tool_call>\n{\"name\": \"exec\", \"arguments\": {\"command\": \"rm -rf x\"}}\n</tool_call>? No.\n</think>\n\nNothing to run.";
    let parsed = parse_tool_calls(reply);
    assert!(parsed.calls.is_empty());
    assert_eq!(parsed.text, "Nothing to run.");
    assert!(parsed.reasoning.contains("rm -rf x"));
    assert_eq!(parsed.history, "Nothing to run.");
}

#[test]
fn reply_opening_inside_think() {
    let parsed = parse_tool_calls("the user wants x\n</think>\n\nHere is x.");
    assert_eq!(parsed.reasoning, "the user wants x");
    assert_eq!(parsed.text, "Here is x.");
}

#[test]
fn native_mode_only_separates_think() {
    let parsed = parse_reply("<think>hm</think>Use <tool_call> tags.", false);
    assert!(parsed.calls.is_empty());
    assert_eq!(parsed.text, "Use <tool_call> tags.");
    assert_eq!(parsed.reasoning, "hm");
}

#[test]
fn other_shapes_of_calls() {
    let parsed = parse_tool_calls(
        "<tool_call>\n```json\n{\"type\": \"function\", \"function\": {\"name\": \"glob\", \"parameters\": {\"pattern\": \"*\"}}}\n```\n</tool_call>",
    );
    assert_eq!(parsed.calls, vec![call(0, "glob", json!({"pattern": "*"}))]);
    let parsed = parse_tool_calls("<tool_call>{\"name\": \"list_skills\"}</tool_call>");
    assert_eq!(parsed.calls, vec![call(0, "list_skills", json!({}))]);
    let parsed = parse_tool_calls("<tool_call>{\"name\": \"x\", \"arguments\": [1]}</tool_call>");
    assert!(
        parsed.calls[0]
            .arguments_error
            .as_deref()
            .unwrap_or_default()
            .contains("an array")
    );
}

#[test]
fn a_new_call_without_closing_the_last() {
    let parsed = parse_tool_calls(
        "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>",
    );
    let names: Vec<&str> = parsed.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert!(parsed.calls.iter().all(|c| c.arguments_error.is_none()));
}

#[test]
fn native_arguments() {
    assert_eq!(parse_arguments(""), Ok(json!({})));
    assert_eq!(parse_arguments("{'a': 1}"), Ok(json!({"a": 1})));
    assert_eq!(parse_arguments("\"{\\\"a\\\": 1}\""), Ok(json!({"a": 1})));
    assert!(
        parse_arguments("{\"a\": }")
            .unwrap_err()
            .starts_with("the arguments are not valid JSON")
    );
    assert!(parse_arguments("42").is_err());
}
