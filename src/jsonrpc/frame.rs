//! One JSON-RPC 2.0 message: how a line is sorted, and the error objects
//! an answer carries.

use serde_json::Value;

/// JSON-RPC's own error codes.
pub const PARSE_ERROR: i64 = -32700;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// The Agent Client Protocol's "resource not found" (an unknown session).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// An error answer: its code and one line for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(RESOURCE_NOT_FOUND, message)
    }
    pub fn no_method(message: impl Into<String>) -> Self {
        Self::new(METHOD_NOT_FOUND, message)
    }
}

/// What the peer sent that is not an answer to us.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// A line that is not a JSON-RPC message (a stray log line): its id
    /// when it had one, and why. An agent answers it with a parse error;
    /// a client skips it, as ACP clients do.
    Invalid {
        id: Value,
        why: String,
    },
}

/// One line, sorted.
#[derive(Debug, PartialEq)]
pub enum Frame {
    Incoming(Incoming),
    /// The answer to one of our requests: its result or the error's
    /// message.
    Response {
        id: Value,
        outcome: Result<Value, String>,
    },
}

/// Sorts a line; `Err` with the id (when it had one) for a line that is
/// not a JSON-RPC message.
pub fn parse(line: &[u8]) -> Result<Frame, (Value, String)> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| (Value::Null, format!("parse error: {e}")))?;
    let id = value.get("id").cloned();
    let params = value.get("params").cloned().unwrap_or(Value::Null);
    let message = match (value.get("method").and_then(Value::as_str), id) {
        (Some(method), Some(id)) => Incoming::Request {
            id,
            method: method.to_string(),
            params,
        },
        (Some(method), None) => Incoming::Notification {
            method: method.to_string(),
            params,
        },
        (None, Some(id)) => {
            let outcome = match value.get("error") {
                Some(error) => Err(error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("an error without a message")
                    .to_string()),
                None => Ok(value.get("result").cloned().unwrap_or(Value::Null)),
            };
            return Ok(Frame::Response { id, outcome });
        }
        (None, None) => return Err((Value::Null, "not a JSON-RPC message".into())),
    };
    Ok(Frame::Incoming(message))
}
