//! A session's KV cache kept across restarts, where llama-server has
//! `--slot-save-path`: saved when the core shuts down, restored when a
//! session is resumed from its transcript, so its first turn is cache-warm.
//!
//! Saving every turn would be cheap for a small model but not for a big one
//! (the cache of a long session is gigabytes), so egirl saves once, at
//! shutdown. A server without the option answers an error: that only means
//! "not supported" and is logged at debug level, never shown.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use crate::protocol::SessionId;
use crate::providers::endpoints::Pool;

/// The file in the server's `--slot-save-path` (ids are `[A-Za-z0-9._-]`).
pub fn file_name(session: &str) -> String {
    format!("egirl-{session}.bin")
}

/// Which session sent the last request to each slot of each endpoint:
/// only that session's cache is in it, so only that one is saved.
#[derive(Default)]
pub(crate) struct SlotOwners(Mutex<HashMap<(String, u32), SessionId>>);

impl SlotOwners {
    pub fn note(&self, endpoint: &str, slot: u32, session: &str) {
        self.owners()
            .insert((endpoint.to_string(), slot), session.to_string());
    }

    fn take(&self) -> Vec<((String, u32), SessionId)> {
        let mut owners: Vec<_> = self.owners().drain().collect();
        owners.sort();
        owners
    }

    /// A panic elsewhere while it was held leaves the map as it was: still usable.
    fn owners(&self) -> MutexGuard<'_, HashMap<(String, u32), SessionId>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Before the first request of a session opened from an existing
/// transcript, into a slot that holds nothing yet (the server restarted).
/// A slot that holds tokens is left alone: it may well be this session's
/// own cache already (the server outlived the last egirl run), the server's
/// RAM prompt cache keeps other sessions' there, and a failed restore (the
/// last run was killed before it saved) would empty it.
pub(crate) async fn restore(main: &Pool, slot: u32, session: &str) {
    let file = file_name(session);
    let (server, _) = main.place(session);
    if !server.kind().slots() {
        return;
    }
    match server.slot_tokens(slot).await {
        Ok(0) => {}
        Ok(tokens) => {
            tracing::debug!(slot, tokens, file, "slot already warm; not restoring");
            return;
        }
        // No slot monitoring (`--no-slots`, another server): just try.
        Err(e) => tracing::debug!(slot, "cannot read /slots ({e})"),
    }
    match server.restore_slot(slot, &file).await {
        Ok(f) => tracing::info!(
            slot,
            file,
            tokens = f.tokens,
            ms = f.ms,
            "restored the session's KV cache"
        ),
        Err(e) => tracing::debug!(slot, file, "no slot restore ({e})"),
    }
}

/// At shutdown: each slot a session of this process used, saved under the
/// name of the session that used it last (`pools`: every agent's main one).
pub(crate) async fn save_all(pools: &[std::sync::Arc<Pool>], owners: &SlotOwners) {
    for ((endpoint, slot), session) in owners.take() {
        let file = file_name(&session);
        let Some(server) = pools.iter().find_map(|pool| pool.server_at(&endpoint)) else {
            continue;
        };
        match server.save_slot(slot, &file).await {
            Ok(f) => tracing::info!(
                slot,
                file,
                tokens = f.tokens,
                bytes = f.bytes,
                ms = f.ms,
                "saved the session's KV cache"
            ),
            Err(e) => tracing::debug!(slot, file, "no slot save ({e})"),
        }
    }
}
