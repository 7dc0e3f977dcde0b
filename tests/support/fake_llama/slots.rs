//! `POST /slots/{id}?action=save|restore|erase`, like llama-server: off
//! (501) until [`FakeLlama::enable_slot_save`], as a server started without
//! `--slot-save-path`. A saved "file" is the slot's cached text (prompt plus
//! generated reply), kept across [`FakeLlama::restart`]; restoring it makes
//! the next request's `cache_n` count against it again.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::{FakeLlama, Shared, count_tokens, error_response, lock, parse_body, record};

/// One slot request the fake received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotAction {
    pub slot: u64,
    pub action: String,
    pub filename: String,
}

#[derive(serde::Deserialize)]
pub(super) struct ActionQuery {
    action: Option<String>,
}

pub(super) fn routes(router: Router<Shared>) -> Router<Shared> {
    router
        .route("/slots", axum::routing::get(list_slots))
        .route("/slots/{id}", axum::routing::post(slot_action))
}

/// `GET /slots`: llama-server's monitoring view; `n_prompt_tokens` only on a
/// slot that holds something.
async fn list_slots(State(state): State<Shared>) -> Response {
    record(&state, "/slots (list)", &Value::Null);
    let state = lock(&state);
    let slots: Vec<Value> = (0..u64::from(state.total_slots))
        .map(|id| {
            let mut slot = json!({ "id": id, "n_ctx": state.n_ctx, "is_processing": false });
            if let Some(text) = state.cache.get(&id) {
                slot["id_task"] = json!(1);
                slot["n_prompt_tokens"] = json!(tokens(text));
            }
            slot
        })
        .collect();
    Json(Value::Array(slots)).into_response()
}

impl FakeLlama {
    /// Answers slot save/restore (a server with `--slot-save-path`).
    pub fn enable_slot_save(&self) {
        self.lock().slot_save = true;
    }

    /// A server restart: every slot's cache is gone, saved files stay.
    pub fn restart(&self) {
        self.lock().cache.clear();
    }

    /// Names of the saved files, sorted.
    pub fn saved_slot_files(&self) -> Vec<String> {
        let mut names: Vec<String> = self.lock().slot_files.keys().cloned().collect();
        names.sort();
        names
    }

    /// Every `/slots` request, oldest first (also when answered 501).
    pub fn slot_actions(&self) -> Vec<SlotAction> {
        self.requests_to("/slots")
            .into_iter()
            .map(|body| SlotAction {
                slot: body["slot"].as_u64().unwrap_or(u64::MAX),
                action: body["action"].as_str().unwrap_or("").to_string(),
                filename: body["filename"].as_str().unwrap_or("").to_string(),
            })
            .collect()
    }
}

async fn slot_action(
    State(state): State<Shared>,
    Path(id): Path<u64>,
    Query(query): Query<ActionQuery>,
    bytes: Bytes,
) -> Response {
    let body = parse_body(&bytes);
    let action = query.action.unwrap_or_default();
    let filename = body["filename"].as_str().unwrap_or("").to_string();
    record(
        &state,
        "/slots",
        &json!({ "slot": id, "action": action, "filename": filename }),
    );
    let mut state = lock(&state);
    if !state.slot_save {
        return error_response(
            501,
            "This server does not support slots action. Start it with `--slot-save-path`",
            "not_supported_error",
        );
    }
    if id >= u64::from(state.total_slots) {
        return error_response(400, "Invalid slot ID", "invalid_request_error");
    }
    let valid_name = !filename.is_empty() && !filename.contains(['/', '\\']) && filename != "..";
    if action != "erase" && !valid_name {
        return error_response(400, "Invalid filename", "invalid_request_error");
    }
    let answer: Value = match action.as_str() {
        "save" => {
            let text = state.cache.get(&id).cloned().unwrap_or_default();
            let n = tokens(&text);
            state.slot_files.insert(filename.clone(), text.clone());
            json!({ "id_slot": id, "filename": filename, "n_saved": n,
                    "n_written": text.len() * 100, "timings": { "save_ms": 0.5 } })
        }
        "restore" => {
            let Some(text) = state.slot_files.get(&filename).cloned() else {
                // llama-server empties the slot before it finds the file bad.
                state.cache.remove(&id);
                return error_response(
                    400,
                    "Unable to restore slot: No available space in KV cache or invalid slot save file",
                    "invalid_request_error",
                );
            };
            let n = tokens(&text);
            state.cache.insert(id, text.clone());
            json!({ "id_slot": id, "filename": filename, "n_restored": n,
                    "n_read": text.len() * 100, "timings": { "restore_ms": 0.5 } })
        }
        "erase" => {
            let n = state.cache.remove(&id).map_or(0, |t| tokens(&t));
            json!({ "id_slot": id, "n_erased": n })
        }
        _ => {
            return error_response(400, "Invalid action", "invalid_request_error");
        }
    };
    Json(answer).into_response()
}

/// Cached tokens of a slot's text: the prompt was counted with BOS.
fn tokens(text: &str) -> u64 {
    if text.is_empty() {
        0
    } else {
        count_tokens(text, true)
    }
}
