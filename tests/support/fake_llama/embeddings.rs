//! The fake `/v1/embeddings`: deterministic vectors from a hashed bag of
//! words, with synonyms a test sets so a query can match by meaning alone.

use std::collections::HashMap;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{Shared, count_tokens, lock, parse_body, record};

pub(super) async fn embeddings(State(state): State<Shared>, bytes: Bytes) -> Response {
    let body = parse_body(&bytes);
    record(&state, "/v1/embeddings", &body);
    let (dims, synonyms) = {
        let state = lock(&state);
        (state.embedding_dims, state.embedding_synonyms.clone())
    };
    let inputs: Vec<String> = match &body["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().unwrap_or("").to_string())
            .collect(),
        _ => Vec::new(),
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let text = with_synonyms(text, &synonyms);
            json!({ "object": "embedding", "index": index, "embedding": embed(&text, dims) })
        })
        .collect();
    let tokens: u64 = inputs.iter().map(|t| count_tokens(t, false)).sum();
    Json(json!({
        "object": "list",
        "data": data,
        "model": body["model"].as_str().unwrap_or("fake-embed"),
        "usage": { "prompt_tokens": tokens, "total_tokens": tokens },
    }))
    .into_response()
}

fn with_synonyms(text: &str, synonyms: &HashMap<String, String>) -> String {
    if synonyms.is_empty() {
        return text.to_string();
    }
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let w = w.to_lowercase();
            synonyms.get(&w).cloned().unwrap_or(w)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A deterministic embedding: hashed bag of lowercase words, L2-normalised,
/// so texts sharing words are close (cosine) and unrelated texts are not.
fn embed(text: &str, dims: usize) -> Vec<f32> {
    let mut vector = vec![0f32; dims];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        vector[(fnv1a(&word.to_lowercase()) % dims as u64) as usize] += 1.0;
    }
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm == 0.0 {
        vector[0] = 1.0;
    } else {
        vector.iter_mut().for_each(|v| *v /= norm);
    }
    vector
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
