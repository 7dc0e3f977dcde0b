//! The Agent Client Protocol messages egirl sends as a client and the
//! answers it reads, as the `agent-client-protocol` crate's schema types:
//! what `initialize` offers, and how a turn's end is read (agents may be
//! newer than egirl: fields it does not know are ignored, a stop reason
//! it does not know is kept by its name).

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, FileSystemCapabilities, Implementation, InitializeRequest, StopReason,
};
use serde::Deserialize;
use serde::de::{DeserializeOwned, IntoDeserializer};
use serde_json::Value;

/// ACP's protocol version egirl speaks.
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V1;

/// Why the agent's turn ended: a stop reason of egirl's schema, or the
/// name of one newer than it.
#[derive(Debug, PartialEq)]
pub enum Stop {
    Known(StopReason),
    Unknown(String),
}

impl Stop {
    /// As ACP writes it (`max_tokens`, `refusal`, ...).
    pub fn name(&self) -> String {
        match self {
            Stop::Known(reason) => serde_json::to_value(reason)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_else(|| format!("{reason:?}")),
            Stop::Unknown(name) => name.clone(),
        }
    }
}

/// egirl as a client: it serves file reads and writes, not terminals.
pub fn initialize_params() -> InitializeRequest {
    let files = FileSystemCapabilities::new()
        .read_text_file(true)
        .write_text_file(true);
    InitializeRequest::new(PROTOCOL_VERSION)
        .client_capabilities(ClientCapabilities::new().fs(files).terminal(false))
        .client_info(Implementation::new("egirl", env!("CARGO_PKG_VERSION")))
}

/// The agent's answer to `method` as its schema type.
pub fn answer_of<T: DeserializeOwned>(method: &str, answer: Value) -> Result<T, String> {
    serde_json::from_value(answer).map_err(|e| format!("its answer to {method} is not ACP's: {e}"))
}

/// Why the turn ended, from the answer to `session/prompt` (a reason
/// newer than egirl's schema is kept by its name; none given reads as the
/// end of the turn).
pub fn stop_of(answer: &Value) -> Stop {
    let name = answer
        .get("stopReason")
        .and_then(Value::as_str)
        .unwrap_or("end_turn");
    match StopReason::deserialize(name.into_deserializer()) {
        Ok(reason) => Stop::Known(reason),
        Err(serde::de::value::Error { .. }) => Stop::Unknown(name.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn initialize_offers_file_reads_and_writes_and_no_terminal() {
        let sent = serde_json::to_value(initialize_params()).unwrap();
        assert_eq!(
            sent,
            json!({
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": true, "writeTextFile": true},
                    "terminal": false,
                    // The schema's default, written out by the crate.
                    "auth": {"terminal": false}
                },
                "clientInfo": {"name": "egirl", "version": env!("CARGO_PKG_VERSION")}
            })
        );
    }

    #[test]
    fn a_stop_reason_is_read_even_when_newer_than_the_schema() {
        let stop = |v: Value| stop_of(&v);
        assert_eq!(
            stop(json!({"stopReason": "end_turn", "usage": {"new": 1}})),
            Stop::Known(StopReason::EndTurn)
        );
        let tokens = stop(json!({"stopReason": "max_tokens"}));
        assert_eq!(tokens.name(), "max_tokens");
        let newer = stop(json!({"stopReason": "out_of_coffee"}));
        assert_eq!(newer, Stop::Unknown("out_of_coffee".into()));
        assert_eq!(newer.name(), "out_of_coffee");
        assert_eq!(stop(json!({})), Stop::Known(StopReason::EndTurn));
    }

    #[test]
    fn an_answer_that_is_not_acp_is_named_with_its_method() {
        let bad = answer_of::<agent_client_protocol::v1::schema::NewSessionResponse>(
            "session/new",
            json!({"id": 1}),
        );
        assert!(
            bad.unwrap_err()
                .starts_with("its answer to session/new is not ACP's")
        );
    }
}
