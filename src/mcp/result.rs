//! A tool result as the model gets it: text joined, binary content named by
//! type and size (never its bytes), structured content as JSON when there
//! is no text. The agent trims and redacts it like any tool's output.

use serde_json::Value;

/// The text of an MCP `CallToolResult` (as JSON: the content blocks' wire
/// form is what servers agree on).
pub fn to_text(result: &Value) -> String {
    let mut parts: Vec<String> = Vec::new();
    for block in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        parts.push(block_text(block));
    }
    if parts.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        parts.push(structured.to_string());
    }
    if parts.is_empty() {
        return "(no content)".into();
    }
    parts.join("\n")
}

fn block_text(block: &Value) -> String {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("?");
    let str_of = |key: &str| block.get(key).and_then(Value::as_str);
    match kind {
        "text" => str_of("text").unwrap_or("").to_string(),
        "image" | "audio" => binary(kind, str_of("mimeType"), str_of("data")),
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => format!("[resource {uri}]\n{text}"),
                None => binary(
                    &format!("resource {uri}"),
                    resource.get("mimeType").and_then(Value::as_str),
                    resource.get("blob").and_then(Value::as_str),
                ),
            }
        }
        "resource_link" => format!(
            "[resource link {} {}]",
            str_of("name").unwrap_or(""),
            str_of("uri").unwrap_or("?")
        ),
        other => format!("[{other} content]"),
    }
}

/// `[image image/png, 1.2 KB]`: base64's decoded size, never the data.
fn binary(kind: &str, mime: Option<&str>, base64: Option<&str>) -> String {
    let bytes = base64.map_or(0, |d| d.trim_end_matches('=').len() * 3 / 4);
    let size = if bytes >= 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{bytes} B")
    };
    match mime {
        Some(mime) => format!("[{kind} {mime}, {size}]"),
        None => format!("[{kind}, {size}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_is_joined_and_binary_summarized() {
        let result = json!({"content": [
            {"type": "text", "text": "one"},
            {"type": "image", "mimeType": "image/png", "data": "A".repeat(4096)},
            {"type": "text", "text": "two"},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
            {"type": "resource", "resource": {"uri": "file:///b", "blob": "AAAA"}},
        ]});
        assert_eq!(
            to_text(&result),
            "one\n[image image/png, 3.0 KB]\ntwo\n[resource file:///a]\nbody\n[resource file:///b, 3 B]"
        );
    }

    #[test]
    fn structured_content_stands_in_for_missing_text() {
        let result = json!({"content": [], "structuredContent": {"sum": 3}});
        assert_eq!(to_text(&result), r#"{"sum":3}"#);
        assert_eq!(to_text(&json!({})), "(no content)");
    }
}
