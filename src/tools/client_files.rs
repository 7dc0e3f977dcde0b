//! Files through the session's editor: when the surface of a session says
//! its client reads or writes files itself (`egirl acp` with an editor
//! that offers `fs/read_text_file` / `fs/write_text_file`), the file
//! tools go through it, so the editor sees its unsaved buffers and shows
//! its own diffs. A round trip like an approval: the tool emits a
//! `file_request` event, the surface answers with `Op::FileAnswer`. The
//! path is checked (roots, protected paths) before the request goes out.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::oneshot;

use super::ToolContext;
use crate::protocol::{EventKind, FileRequest, SessionId};

/// How long an editor may take to read or write a file.
const ANSWER_WITHIN: Duration = Duration::from_secs(60);

/// What a session's client does with files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offer {
    pub read: bool,
    pub write: bool,
}

/// An answer: the text read (`Some` for a read), or why it failed.
type Answer = Result<Option<String>, String>;

/// The sessions whose client serves files, and the requests waiting for
/// its answer. One per agent ([`ClientFiles::for_another_agent`]); cheap
/// to clone.
#[derive(Clone, Default)]
pub struct ClientFiles {
    offers: Arc<Mutex<HashMap<SessionId, Offer>>>,
    /// The directory a session's client works in (its project), when it
    /// is not the workspace.
    dirs: Arc<Mutex<HashMap<SessionId, PathBuf>>>,
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<Answer>>>>,
}

impl ClientFiles {
    /// Another agent's: its sessions' offers and directories its own (a
    /// session id another agent also uses never reaches these), the
    /// requests waiting for an answer shared, since an answer names only
    /// its request's id.
    pub fn for_another_agent(&self) -> Self {
        ClientFiles {
            waiting: self.waiting.clone(),
            ..ClientFiles::default()
        }
    }

    /// From now on `session`'s file tools use its client as `offer` says.
    pub fn offer(&self, session: &str, offer: Offer) {
        lock(&self.offers).insert(session.to_string(), offer);
    }

    /// From now on `session`'s relative paths and commands start in
    /// `dir`, which must lie in one of `roots` (canonical): why not, else.
    pub fn work_in(&self, session: &str, dir: &Path, roots: &[&Path]) -> Result<(), String> {
        let canonical = std::fs::canonicalize(dir)
            .map_err(|e| format!("cannot work in {}: {e}", dir.display()))?;
        if !canonical.is_dir() || !roots.iter().any(|root| canonical.starts_with(root)) {
            return Err(format!(
                "cannot work in {}: it is not a directory inside the workspace or an allowed path",
                dir.display()
            ));
        }
        lock(&self.dirs).insert(session.to_string(), canonical);
        Ok(())
    }

    /// The directory `session` works in, when its client set one.
    pub fn work_dir(&self, session: &str) -> Option<PathBuf> {
        lock(&self.dirs).get(session).cloned()
    }

    pub fn offered(&self, session: &str) -> Offer {
        lock(&self.offers).get(session).copied().unwrap_or_default()
    }

    /// Delivers the client's answer to request `id` (`Op::FileAnswer`):
    /// the text read, or why it failed; neither: written. An answer
    /// nothing waits for (given up on) is dropped.
    pub fn answer(&self, id: &str, content: Option<String>, error: Option<String>) {
        if !self.resolve(id, error.map_or(Ok(content), Err)) {
            tracing::debug!(%id, "a file answer to no request");
        }
    }

    /// Delivers `answer` to request `id`; false when nothing waits for it.
    pub fn resolve(&self, id: &str, answer: Answer) -> bool {
        match lock(&self.waiting).remove(id) {
            Some(tx) => tx.send(answer).is_ok(),
            None => false,
        }
    }

    async fn ask(&self, ctx: &ToolContext, path: &Path, content: Option<String>) -> Answer {
        let id = uuid::Uuid::new_v4().to_string();
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id.clone(), tx);
        let request = FileRequest {
            id: id.clone(),
            path: path.display().to_string(),
            content,
        };
        ctx.bus
            .emit(&ctx.session, &ctx.origin, EventKind::FileRequest(request));
        let answer = tokio::select! {
            answer = rx => answer.unwrap_or_else(|_| Err("the editor went away".into())),
            () = ctx.cancel.cancelled() => Err("interrupted".into()),
            () = tokio::time::sleep(ANSWER_WITHIN) => Err("the editor did not answer in time".into()),
        };
        lock(&self.waiting).remove(&id);
        answer
    }
}

/// The text of `path` as the session's editor has it; `None` when the
/// editor does not read files for this session (read the disk then).
pub async fn read(ctx: &ToolContext, path: &Path) -> Option<Result<String, String>> {
    if !from_the_editor(ctx) || !ctx.client_files.offered(&ctx.session).read {
        return None;
    }
    let answer = ctx.client_files.ask(ctx, path, None).await;
    Some(answer.map(Option::unwrap_or_default))
}

/// Writes `content` to `path` through the session's editor; `None` when
/// the editor does not write files for this session (write the disk then).
pub async fn write(ctx: &ToolContext, path: &Path, content: &str) -> Option<Result<(), String>> {
    if !from_the_editor(ctx) || !ctx.client_files.offered(&ctx.session).write {
        return None;
    }
    let answer = ctx
        .client_files
        .ask(ctx, path, Some(content.to_string()))
        .await;
    Some(answer.map(|_| ()))
}

/// Only a turn the editor itself started is served by it: a turn another
/// surface (an attached TUI, cron) starts in that session, or any turn
/// after the editor has quit, would wait for an answer nobody sends.
fn from_the_editor(ctx: &ToolContext) -> bool {
    ctx.origin == crate::protocol::Origin::Acp
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The maps stay consistent even if a holder panicked.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExecConfig;
    use crate::protocol::Origin;

    #[tokio::test]
    async fn another_agents_session_of_the_same_id_is_not_served_but_answers_reach_any() {
        let dir = tempfile::tempdir().unwrap();
        let work = ClientFiles::default();
        let home = work.for_another_agent();
        let both = Offer {
            read: true,
            write: true,
        };
        work.offer("acp-1", both);
        work.work_in("acp-1", dir.path(), &[dir.path()]).unwrap();
        assert_eq!(work.offered("acp-1"), both);
        assert_eq!(home.offered("acp-1"), Offer::default());
        assert!(home.work_dir("acp-1").is_none());
        // An answer names its request only: whichever agent asked gets it.
        let (tx, rx) = oneshot::channel();
        lock(&work.waiting).insert("r1".into(), tx);
        home.answer("r1", Some("text".into()), None);
        assert_eq!(rx.await.unwrap(), Ok(Some("text".into())));
    }

    #[tokio::test]
    async fn a_turn_another_surface_starts_uses_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::standalone(dir.path(), ExecConfig::default(), "s", Origin::Tui);
        let offer = Offer {
            read: true,
            write: true,
        };
        ctx.client_files.offer("s", offer);
        let path = dir.path().join("a.txt");
        assert!(read(&ctx, &path).await.is_none());
        assert!(write(&ctx, &path, "x").await.is_none());
    }

    #[tokio::test]
    async fn a_request_goes_out_as_an_event_and_the_answer_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::standalone(dir.path(), ExecConfig::default(), "s", Origin::Acp);
        let path = dir.path().join("a.txt");
        assert!(
            read(&ctx, &path).await.is_none(),
            "nothing offered: the disk"
        );
        ctx.client_files.offer(
            "s",
            Offer {
                read: true,
                write: true,
            },
        );
        let mut events = ctx.bus.subscribe();
        let files = ctx.client_files.clone();
        let answering = tokio::spawn(async move {
            let event = events.recv().await.unwrap();
            let EventKind::FileRequest(request) = event.kind else {
                panic!("not a file request");
            };
            assert_eq!(request.content.as_deref(), Some("new"));
            assert!(files.resolve(&request.id, Ok(None)));
            let event = events.recv().await.unwrap();
            let EventKind::FileRequest(request) = event.kind else {
                panic!("not a file request");
            };
            assert!(request.content.is_none());
            files.resolve(&request.id, Ok(Some("buffer text".into())));
        });
        assert_eq!(write(&ctx, &path, "new").await, Some(Ok(())));
        assert_eq!(read(&ctx, &path).await, Some(Ok("buffer text".into())));
        answering.await.unwrap();
        assert!(!path.exists(), "nothing was written to the disk");
    }

    #[test]
    fn a_session_works_only_in_a_directory_inside_the_roots() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("project")).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let files = ClientFiles::default();
        let roots = [root.as_path()];
        assert!(
            files
                .work_in("s", &root.join("project/../project"), &roots)
                .is_ok()
        );
        assert_eq!(files.work_dir("s"), Some(root.join("project")));
        assert!(files.work_in("s", outside.path(), &roots).is_err());
        assert!(files.work_in("s", &root.join("missing"), &roots).is_err());
        assert_eq!(
            files.work_dir("s"),
            Some(root.join("project")),
            "a refusal changes nothing"
        );
        assert_eq!(files.work_dir("other"), None);
    }
}
