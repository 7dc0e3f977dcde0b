//! The agent's memory: the facade started with a first index sync in the
//! background, and `/memory Q` searches run beside the session's turns.

use std::sync::Arc;

use crate::bus::EventBus;
use crate::config::Config;
use crate::memory::Memory;
use crate::protocol::{EventKind, Notice, Origin, SessionId, SubmissionId};
use crate::providers::remote::RemoteProviders;
use crate::redact::Redactor;

use super::shared::Shared;

/// The memory facade, with a first sync in the background so the index is
/// fresh before the first search asks.
pub(super) fn start_memory(
    config: &Config,
    workspace: &std::path::Path,
    remote: &RemoteProviders,
    bus: &EventBus,
    redactor: &Arc<Redactor>,
) -> Arc<Memory> {
    let memory = Arc::new(
        Memory::new(workspace, config, remote)
            .with_events(bus.clone())
            .with_redactor(redactor.clone()),
    );
    let first = memory.clone();
    tokio::spawn(async move {
        match first.sync(None).await {
            Ok(report) => {
                for notice in report.notices {
                    tracing::warn!("{notice}");
                }
            }
            Err(e) => tracing::warn!("memory index not synced at start: {e:#}"),
        }
    });
    memory
}

/// `/memory Q`: searched beside the session's turns, answered as `memory_hits`.
pub(super) fn search_memory(
    shared: &Arc<Shared>,
    submission: SubmissionId,
    session: SessionId,
    query: String,
) {
    let shared = shared.clone();
    // The query may go to an embeddings server, remote ones included.
    let query = shared.redactor.redact(&query).into_owned();
    tokio::spawn(crate::bus::answering(Some(submission), async move {
        let origin = Origin::Tui;
        match shared.memory.search(&query, None, None).await {
            Ok(result) => {
                for message in &result.notices {
                    shared.bus.emit(
                        &session,
                        &origin,
                        EventKind::Notice(Notice {
                            message: message.clone(),
                        }),
                    );
                }
                shared.memory.announce(&session, &origin, &result);
            }
            Err(e) => shared.bus.emit(
                &session,
                &origin,
                EventKind::Notice(Notice {
                    message: format!("memory search failed: {e:#}"),
                }),
            ),
        }
    }));
}
