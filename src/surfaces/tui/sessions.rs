//! Sessions as the TUI sees them: every session that spoke this run
//! (the TUI's, Discord's, cron's…) plus the transcripts on disk, the
//! conversation filter, the picker that points the input box at one, and
//! a resumed session's history shown as it was.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use super::app::{App, Overlay};
use super::conversation::{Kind, Level};
use crate::protocol::{Origin, Role, SessionId, Target};
use crate::sessions::Record;

/// Transcripts on disk the picker lists besides the live sessions.
const DISK_SESSIONS: usize = 50;

#[derive(Clone, Debug)]
pub struct SessionInfo {
    pub origin: Origin,
    pub running: bool,
    pub target: Option<Target>,
    pub last_activity: Option<SystemTime>,
    /// Messages that arrived while the input pointed elsewhere.
    pub unread: usize,
    /// When the running turn started (its timer on the status line).
    pub started: Option<Instant>,
    /// The first thing said in it, as the picker names it.
    pub title: Option<String>,
    /// The model it is pinned to (`/model`), as the status line shows it.
    pub pinned: Option<String>,
}

impl SessionInfo {
    pub fn new(origin: Origin) -> Self {
        Self {
            origin,
            running: false,
            target: None,
            last_activity: None,
            unread: 0,
            started: None,
            title: None,
            pinned: None,
        }
    }
}

/// One line of the picker.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionRow {
    pub id: SessionId,
    pub origin: Origin,
    pub last_activity: Option<SystemTime>,
    pub unread: usize,
    pub running: bool,
    /// Spoke this run (else only a transcript on disk).
    pub live: bool,
    /// Its first user message, one line (empty: nothing said yet).
    pub title: String,
    /// Whose session it is (with agents: the picker's group).
    pub agent: Option<crate::protocol::AgentName>,
}

/// The open picker: rows fixed when it opened, and the selection.
#[derive(Clone, Debug, Default)]
pub struct SessionPicker {
    pub rows: Vec<SessionRow>,
    pub selected: usize,
}

impl App {
    /// Opens the picker on the live sessions and the newest transcripts.
    pub fn open_session_picker(&mut self) {
        let mut rows: Vec<SessionRow> = self
            .sessions
            .iter()
            .map(|(id, s)| SessionRow {
                id: id.clone(),
                origin: s.origin.clone(),
                last_activity: s.last_activity,
                unread: s.unread,
                running: s.running,
                live: true,
                title: s.title.clone().unwrap_or_default(),
                agent: self.agents.of(id).map(str::to_string),
            })
            .collect();
        let on_disk = self.transcripts_on_disk();
        rows.extend(
            on_disk
                .into_iter()
                .filter(|r| !self.sessions.contains_key(&r.id)),
        );
        // Newest first; sessions that never spoke (a fresh /new) by id.
        rows.sort_by(|a, b| {
            b.last_activity
                .cmp(&a.last_activity)
                .then_with(|| a.id.cmp(&b.id))
        });
        if self.agents.enabled() {
            // Grouped by agent, in the config's order; each group newest first.
            let names = self.agents.names();
            rows.sort_by_key(|r| {
                r.agent
                    .as_ref()
                    .and_then(|a| names.iter().position(|n| n == a))
                    .unwrap_or(names.len())
            });
        }
        let selected = rows.iter().position(|r| r.id == self.session).unwrap_or(0);
        self.picker = SessionPicker { rows, selected };
        self.overlay = Some(Overlay::Sessions);
    }

    /// The newest transcripts: of each agent's workspace with agents
    /// (where this config knows them), else of the one workspace.
    fn transcripts_on_disk(&self) -> Vec<SessionRow> {
        let mut rows = Vec::new();
        let mut listed = false;
        for agent in self.agents.names() {
            let Some(dir) = self.agents.sessions_dir(agent) else {
                continue;
            };
            listed = true;
            rows.extend(
                disk_sessions(&dir, DISK_SESSIONS)
                    .into_iter()
                    .map(|r| SessionRow {
                        agent: Some(agent.clone()),
                        ..r
                    }),
            );
        }
        match (&self.sessions_dir, listed) {
            (Some(dir), false) => disk_sessions(dir, DISK_SESSIONS),
            _ => rows,
        }
    }

    /// Points the input box at a session (loading its transcript when it
    /// is one from disk); the conversation follows if it shows one session.
    pub fn pick_session(&mut self, id: &str) {
        if !self.sessions.contains_key(id) {
            let records = self
                .transcript_of(id)
                .map(|path| crate::sessions::load(&path));
            match records {
                Some(Ok(records)) => self.load_history(id, &records),
                Some(Err(e)) => {
                    self.notice(Level::Error, format!("{e:#}"));
                    return;
                }
                None => return,
            }
        }
        self.session = id.to_string();
        self.meter_from_transcript(id);
        let origin = match self.sessions.get_mut(id) {
            Some(info) => {
                info.unread = 0;
                info.origin.clone()
            }
            None => Origin::Tui,
        };
        // Showing one session: it is this one now (`filter` follows).
        self.epoch += 1;
        self.conversation_scroll.end();
        self.notice(
            Level::Info,
            format!("input goes to {id} ({origin}); Ctrl+S lists sessions"),
        );
    }

    /// Ctrl+T: the conversation shows every session, or only the one the
    /// input goes to. Which one that is, Ctrl+S (`pick_session`) and `/new`
    /// decide: the view never shows one session while the input writes to
    /// another.
    pub fn toggle_solo(&mut self) {
        self.solo = !self.solo;
        if self.solo
            && let Some(info) = self.sessions.get_mut(&self.session)
        {
            info.unread = 0;
        }
        self.conversation_scroll.end();
        self.epoch += 1;
    }

    /// The one session the conversation shows (the input's); `None`: all.
    pub fn filter(&self) -> Option<&SessionId> {
        self.solo.then_some(&self.session)
    }

    /// Whether the conversation shows this session's entries.
    pub fn shows(&self, session: &str) -> bool {
        !self.solo || self.session == session
    }

    /// A resumed session's messages, shown as finished entries; tool calls
    /// come back as one-liners with their saved output.
    pub fn load_history(&mut self, session: &str, records: &[Record]) {
        let origin = records.first().map_or(Origin::Tui, |r| r.origin.clone());
        let info = self
            .sessions
            .entry(session.to_string())
            .or_insert_with(|| SessionInfo::new(origin));
        if let Some(last) = records.last() {
            info.last_activity = Some(last.ts.into());
        }
        let said: Vec<&str> = records
            .iter()
            .filter(|r| r.message.role == Role::User && r.compaction.is_none())
            .map(|r| r.typed.as_deref().unwrap_or(&r.message.content))
            .collect();
        if info.title.is_none() {
            info.title = said.first().map(|t| title(t));
        }
        // Up recalls what was said in it, as if typed this run (a message
        // that starts with `/` with the `//` that sends it as one).
        let typed: Vec<String> = said
            .iter()
            .map(|t| super::commands::as_typed(self, t))
            .collect();
        self.input.remember_earlier(typed);
        for record in records {
            let m = &record.message;
            if let Some(c) = &record.compaction {
                let label = super::conversation::compaction_label(
                    c.summarized_messages,
                    c.before_tokens,
                    c.after_tokens,
                );
                self.conversation.push(
                    session,
                    &record.origin,
                    Kind::Compaction(label),
                    m.content.clone(),
                );
                continue;
            }
            match m.role {
                Role::User => {
                    let text = record.typed.as_deref().unwrap_or(&m.content);
                    self.conversation.push(
                        session,
                        &record.origin,
                        Kind::User { queued: false },
                        text.to_string(),
                    );
                    self.conversation.attach_images(session, m.images.clone());
                }
                Role::Assistant => self.replay_reply(session, record),
                Role::Tool => self.replay_tool_result(session, record),
                Role::System => {}
            }
        }
        if !records.is_empty() {
            self.conversation.push(
                session,
                &Origin::Tui,
                Kind::Notice(Level::Info),
                format!("resumed {session}: {} messages", records.len()),
            );
        }
        if session == self.session {
            self.show_meter(super::meter::from_records(records));
        }
        self.conversation_scroll.end();
    }
}

/// The newest `limit` transcripts in `dir`, by modification time; origin
/// from each one's first line.
pub fn disk_sessions(dir: &Path, limit: usize) -> Vec<SessionRow> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(SystemTime, PathBuf, SessionId)> = read
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let path = e.path();
            let id = path
                .file_name()?
                .to_str()?
                .strip_suffix(".jsonl")?
                .to_string();
            let modified = e.metadata().ok()?.modified().ok()?;
            Some((modified, path, id))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.truncate(limit);
    found
        .into_iter()
        .map(|(modified, path, id)| {
            let head = transcript_head(&path);
            SessionRow {
                origin: head.origin.unwrap_or(Origin::Tui),
                id,
                last_activity: Some(modified),
                unread: 0,
                running: false,
                live: false,
                title: head.title.unwrap_or_default(),
                agent: None,
            }
        })
        .collect()
}

/// What the picker shows of a transcript without loading it: the origin
/// on its first line, and its first user message.
#[derive(Default)]
struct Head {
    origin: Option<Origin>,
    title: Option<String>,
}

/// Lines, and bytes, read looking for the first user message (a session
/// that starts with a long tool loop is named by its id alone): the picker
/// opens at once on 50 transcripts.
const HEAD_LINES: usize = 64;
const HEAD_BYTES: u64 = 256 * 1024;

fn transcript_head(path: &Path) -> Head {
    use std::io::BufRead;
    #[derive(serde::Deserialize)]
    struct Line {
        origin: Option<Origin>,
        role: Option<Role>,
        content: Option<String>,
        typed: Option<String>,
        compaction: Option<serde_json::Value>,
    }
    let mut head = Head::default();
    let Ok(file) = std::fs::File::open(path) else {
        return head;
    };
    use std::io::Read;
    let lines = std::io::BufReader::new(file.take(HEAD_BYTES))
        .lines()
        .take(HEAD_LINES);
    for line in lines.map_while(Result::ok) {
        let Ok(line) = serde_json::from_str::<Line>(&line) else {
            continue;
        };
        if head.origin.is_none() {
            head.origin = line.origin;
        }
        if line.role == Some(Role::User) && line.compaction.is_none() {
            let said = line.typed.or(line.content).unwrap_or_default();
            head.title = Some(title(&said));
            break;
        }
    }
    head
}

/// A session's title: the first line with text of its first message, cut
/// to [`TITLE_CHARS`] characters.
pub fn title(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    super::wrap::truncate(line.unwrap_or(""), TITLE_CHARS)
}

/// The longest title kept (the picker cuts it to its width).
const TITLE_CHARS: usize = 80;

/// "now", "5m", "3h", "2d" before `now`.
pub fn ago(then: SystemTime, now: SystemTime) -> String {
    let secs = now.duration_since(then).map_or(0, |d| d.as_secs());
    match secs {
        0..60 => "now".into(),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn ago_rounds_down_to_the_unit() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let at = |s: u64| now - Duration::from_secs(s);
        assert_eq!(ago(at(5), now), "now");
        assert_eq!(ago(at(300), now), "5m");
        assert_eq!(ago(at(3 * 3600 + 59), now), "3h");
        assert_eq!(ago(at(2 * 86_400), now), "2d");
        // A clock that went backwards is "now", not a panic.
        assert_eq!(ago(now + Duration::from_secs(9), now), "now");
    }

    #[test]
    fn a_title_is_the_first_user_message_after_tool_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.jsonl");
        let lines = [
            r#"{"ts":"2026-11-20T10:00:00Z","origin":"cron:daily","role":"system","content":"summary","compaction":{"kept":0,"summarized_messages":3,"before_tokens":9,"after_tokens":3}}"#,
            r#"{"ts":"2026-11-20T10:00:00Z","origin":"cron:daily","role":"assistant","content":null,"tool_calls":[]}"#,
            "not json",
            r#"{"ts":"2026-11-20T10:00:01Z","origin":"tui","role":"user","content":"sent","typed":"\n  what I typed\nmore"}"#,
        ];
        std::fs::write(&path, lines.join("\n")).expect("write");
        let head = transcript_head(&path);
        assert_eq!(head.origin, Some(Origin::Cron("daily".into())));
        assert_eq!(head.title.as_deref(), Some("what I typed"));
        assert_eq!(title(&"x".repeat(200)).chars().count(), TITLE_CHARS);
    }

    #[test]
    fn disk_sessions_are_newest_first_with_their_origin() {
        let dir = tempfile::tempdir().expect("tempdir");
        let line = |origin: &str| {
            format!(
                "{{\"ts\":\"2026-11-20T10:00:00Z\",\"origin\":\"{origin}\",\"role\":\"user\",\"content\":\"hi\"}}\n"
            )
        };
        std::fs::write(dir.path().join("old.jsonl"), line("discord:general")).expect("write");
        std::fs::write(dir.path().join("new.jsonl"), line("cron:daily")).expect("write");
        std::fs::write(dir.path().join("notes.txt"), "not a session").expect("write");
        let old = std::fs::File::options()
            .write(true)
            .open(dir.path().join("old.jsonl"))
            .expect("open");
        old.set_modified(SystemTime::now() - Duration::from_secs(3600))
            .expect("mtime");
        let rows = disk_sessions(dir.path(), 10);
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["new", "old"]);
        assert_eq!(rows[0].origin, Origin::Cron("daily".into()));
        assert_eq!(rows[1].origin, Origin::Discord("general".into()));
        assert!(!rows[0].live);
        assert_eq!(rows[0].title, "hi");
        assert_eq!(disk_sessions(dir.path(), 1).len(), 1);
    }
}
