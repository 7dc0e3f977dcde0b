//! Fork and rewind: a session copied into a new one, or taken back to
//! before one of its user messages with the files the file tools changed
//! since put back. The core runs them between turns (`Command::Fork`,
//! `Command::Rewind`); `egirl --session ID --fork|--rewind N` runs them
//! without a core.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::Shared;
use crate::protocol::{ErrorEvent, EventKind, Forked, Origin, Rewound, Role};
use crate::sessions::{self, Mark, Record, ToolOutcome, Transcript};
use crate::tools::checkpoints::Checkpoints;
use crate::tools::paths::{self, Access};
use crate::tools::sandbox::ProtectedPaths;

/// What a rewind may write: the paths the file tools may write now.
pub struct Bounds<'a> {
    pub workspace: &'a Path,
    pub allowed_paths: &'a [PathBuf],
    pub protected: &'a ProtectedPaths,
}

impl Bounds<'_> {
    /// A checkpointed path is put back only where `write_file` could write
    /// it today: inside the roots (the same canonical path, so a directory
    /// swapped for a symlink since is refused) and not protected.
    fn writable(&self, path: &Path) -> Result<(), String> {
        let requested = path.to_string_lossy();
        let resolved = paths::resolve(
            self.workspace,
            self.allowed_paths,
            &requested,
            Access::Write,
        )?;
        if resolved != path {
            return Err(format!("now resolves to {}", resolved.display()));
        }
        let shown = paths::display(self.workspace, path);
        match self.protected.write_refusal(path, &shown) {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }
}

/// Copies session `from` into a new session (its transcript, a
/// `forked_from` mark, its checkpoints); returns the new id.
pub fn fork_session(workspace: &Path, checkpoints: &Checkpoints, from: &str) -> Result<String> {
    sessions::validate_id(from)?;
    if !Transcript::path(workspace, from).exists() {
        // A fresh session has no transcript until its first message: say
        // so, since `/fork` of the open session is how a user meets this.
        bail!(
            "no session `{from}` in {} (a session is saved from its first message: nothing to fork yet)",
            workspace.join("sessions").display()
        );
    }
    let to = sessions::new_id("fork");
    sessions::fork(workspace, from, &to)?;
    if let Err(e) = checkpoints.copy_session(from, &to) {
        tracing::warn!("the fork {to} cannot rewind files: {e:#}");
    }
    Ok(to)
}

/// Takes session `id` back to before its user message `turn` (1-based):
/// the files first, then a `rewound` mark (the transcript keeps every
/// message), then the used checkpoints dropped. A file that could not be
/// put back stops it before the mark: the transcript never says rewound
/// over files that were not restored, and the rewind can be tried again.
/// Returns the `rewound` event.
pub fn rewind_session(
    bounds: &Bounds<'_>,
    checkpoints: &Checkpoints,
    id: &str,
    turn: usize,
) -> Result<EventKind> {
    if !Transcript::path(bounds.workspace, id).exists() {
        bail!("no session `{id}` to rewind");
    }
    let (mut transcript, records) = Transcript::open(bounds.workspace, id)?;
    let turns = sessions::user_turns(&records);
    let Some(keep) = sessions::user_message_index(&records, turn) else {
        bail!(match turns {
            0 => format!("session `{id}` has no message to rewind to"),
            n => format!("session `{id}` has {n} user message(s); rewind to one of 1..={n}"),
        });
    };
    let record = &records[keep];
    let text = record
        .typed
        .clone()
        .unwrap_or_else(|| record.message.content.clone());
    let commands = ran_since(&records[keep..], &["exec"]);
    let files = checkpoints.restore(id, turn, &|p| bounds.writable(p));
    let not_kept = checkpoints.keeps_nothing().map(|why| {
        let changes = ran_since(&records[keep..], &["write_file", "edit_file"]);
        let s = if changes == 1 { "" } else { "s" };
        match files.restored.is_empty() && files.removed.is_empty() {
            true => format!(
                "no file was restored: {why}, so the {changes} file change{s} by write_file/edit_file since stay as they are"
            ),
            false => format!(
                "{why}: of the {changes} file change{s} by write_file/edit_file since, only those listed above were undone"
            ),
        }
    });
    if !files.errors.is_empty() {
        bail!(
            "could not restore {}; the session was not rewound and its checkpoints are kept: rewind again once that is fixed",
            files.errors.join("; ")
        );
    }
    transcript.append_mark(Mark::Rewound { keep, turn })?;
    checkpoints.discard_from(id, turn);
    Ok(EventKind::Rewound(Rewound {
        turn,
        text,
        dropped_messages: records.len() - keep,
        restored: files.restored,
        removed: files.removed,
        not_restored: files.failed,
        untracked: (commands > 0).then(|| {
            let s = if commands == 1 { "" } else { "s" };
            format!("{commands} command{s} ran since; commands' changes are not undone")
        }),
        not_kept,
    }))
}

/// Calls to `tools` in `records` that ran: a call the user (or a rule)
/// refused changed nothing. Older transcripts keep no outcome; their
/// refusals are known by the text the model was told.
fn ran_since(records: &[Record], tools: &[&str]) -> usize {
    let refused: HashSet<&str> = records
        .iter()
        .filter(|r| r.message.role == Role::Tool)
        .filter(|r| {
            let outcome = r.details.outcome;
            outcome.or_else(|| ToolOutcome::guessed(&r.message.content))
                == Some(ToolOutcome::Denied)
        })
        .filter_map(|r| r.message.tool_call_id.as_deref())
        .collect();
    records
        .iter()
        .filter(|r| r.message.role == Role::Assistant)
        .flat_map(|r| &r.message.tool_calls)
        .filter(|c| tools.contains(&c.name.as_str()) && !refused.contains(c.id.as_str()))
        .count()
}

/// `Command::Fork` in the core: answered with `forked` or `error`.
pub(super) fn fork(shared: &Shared, id: &str) {
    let kind = match fork_session(&shared.workspace, &shared.checkpoints, id) {
        Ok(new_session) => EventKind::Forked(Forked { new_session }),
        Err(e) => EventKind::Error(ErrorEvent {
            message: format!("cannot fork: {e:#}"),
        }),
    };
    shared.bus.emit(id, &Origin::Tui, kind);
}

/// `Command::Rewind` in the core: answered with `rewound` or `error`.
/// True when the session's history must be read again.
pub(super) fn rewind(shared: &Shared, id: &str, turn: usize) -> bool {
    let bounds = Bounds {
        workspace: &shared.workspace,
        allowed_paths: &shared.allowed_paths,
        protected: &shared.protected,
    };
    let (kind, done) = match rewind_session(&bounds, &shared.checkpoints, id, turn) {
        Ok(kind) => (kind, true),
        Err(e) => (
            EventKind::Error(ErrorEvent {
                message: format!("cannot rewind: {e:#}"),
            }),
            false,
        ),
    };
    shared.bus.emit(id, &Origin::Tui, kind);
    done
}
