//! Arguments checked against a tool's input schema before the call, so a
//! small model hears what to fix from egirl in one line instead of from a
//! server's stack trace. The subset of JSON Schema MCP servers use for tool
//! inputs: `type` (one or a list), `required`, `properties`,
//! `additionalProperties: false`, `enum`, `const`, `items`, `minimum`,
//! `maximum`, `minLength`, `maxLength`, `anyOf`/`oneOf` (one must match). Keywords
//! outside it are not checked (the server still is).

use serde_json::Value;

/// Every problem found, as `path: what` lines; empty when the arguments fit.
pub fn check(schema: &Value, args: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    walk(schema, args, "arguments", &mut problems);
    problems
}

fn walk(schema: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    if let Some(kind) = schema.get("type")
        && !type_matches(kind, value)
    {
        out.push(format!(
            "{path}: expected {}, got {}",
            type_name(kind),
            json_type(value)
        ));
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        out.push(format!("{path}: must be one of {}", list.join(", ")));
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        out.push(format!("{path}: must be {constant}"));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array)
            && !options.iter().any(|option| check(option, value).is_empty())
        {
            out.push(format!("{path}: matches none of the allowed forms"));
        }
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            out.push(format!("{path}: must be at least {min}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            out.push(format!("{path}: must be at most {max}"));
        }
    }
    if let Some(s) = value.as_str() {
        let len = s.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
            && len < min
        {
            out.push(format!("{path}: must be at least {min} characters"));
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
            && len > max
        {
            out.push(format!("{path}: must be at most {max} characters"));
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !object.contains_key(name) {
                out.push(format!("{path}: missing required `{name}`"));
            }
        }
        for (name, item) in object {
            match properties.and_then(|p| p.get(name)) {
                Some(sub) => walk(sub, item, &format!("{path}.{name}"), out),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    let known: Vec<&str> = properties
                        .map(|p| p.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    out.push(format!(
                        "{path}: unknown `{name}` (known: {})",
                        known.join(", ")
                    ));
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, item) in array.iter().enumerate() {
            walk(items, item, &format!("{path}[{i}]"), out);
        }
    }
}

fn type_matches(kind: &Value, value: &Value) -> bool {
    match kind {
        Value::String(t) => one_type_matches(t, value),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .any(|t| one_type_matches(t, value)),
        _ => true,
    }
}

fn one_type_matches(kind: &str, value: &Value) -> bool {
    match kind {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => true,
    }
}

fn type_name(kind: &Value) -> String {
    match kind {
        Value::Array(ts) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            names.join(" or ")
        }
        other => other.as_str().unwrap_or("?").to_string(),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "number"},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "paths": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["a"],
            "additionalProperties": false
        })
    }

    #[test]
    fn fitting_arguments_pass() {
        assert!(check(&schema(), &json!({"a": 1, "mode": "fast", "paths": ["x"]})).is_empty());
    }

    #[test]
    fn each_problem_names_its_path() {
        let problems = check(
            &schema(),
            &json!({"mode": "medium", "paths": ["x", 2], "b": true}),
        );
        assert_eq!(
            problems,
            vec![
                "arguments: missing required `a`",
                "arguments.mode: must be one of \"fast\", \"slow\"",
                "arguments.paths[1]: expected string, got number",
                "arguments: unknown `b` (known: a, mode, paths)",
            ]
        );
        assert_eq!(
            check(&schema(), &json!("x")),
            vec!["arguments: expected object, got string"]
        );
    }
}
