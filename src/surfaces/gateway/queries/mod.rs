//! `query` frames: what a client (the web page) shows that the event
//! stream does not carry: the sessions (live and on disk), a transcript,
//! the cron jobs, today's usage. Each is read from the workspace's files
//! on a blocking thread; the connection's reader awaits the answer before
//! it reads the client's next frame, so one client has one query running
//! at most (and a client that floods queries waits on itself).

mod transcript;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use chrono::{DateTime, Local, Utc};

use crate::cron::CronStore;
use crate::protocol::Role;
use crate::protocol::wire::{
    Answer, Ask, CronJobInfo, LiveSession, Query, Reply, SessionSummary, UsageRow,
};
use crate::sessions::{self, Transcript};
use crate::usage::usage_log;
use transcript::{MAX_TEXT, capped, failed};

/// Transcripts on disk listed at most (the newest), besides the live ones.
pub const MAX_LISTED: usize = 100;
/// A session's title at most (characters).
const TITLE_CHARS: usize = 80;

/// Answers `query` from `workspace`; `live` are the core's sessions now.
pub(super) async fn answer(workspace: PathBuf, live: Vec<LiveSession>, query: Query) -> Answer {
    let Query { id, ask } = query;
    let reply = tokio::task::spawn_blocking(move || reply(&workspace, live, ask))
        .await
        .unwrap_or_else(|e| failed(format!("the query failed: {e}")));
    Answer { id, reply }
}

fn reply(workspace: &Path, live: Vec<LiveSession>, ask: Ask) -> Reply {
    match ask {
        Ask::Sessions => list_sessions(workspace, live),
        Ask::Transcript { session } => transcript::transcript(workspace, &session),
        Ask::Cron => cron(workspace),
        Ask::Stats => stats(workspace),
    }
}

/// The live sessions, then the newest [`MAX_LISTED`] others on disk;
/// each group newest activity first.
fn list_sessions(workspace: &Path, live: Vec<LiveSession>) -> Reply {
    let mut on_disk = match transcripts(workspace) {
        Ok(found) => found,
        Err(e) => return failed(e),
    };
    on_disk.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut open: Vec<SessionSummary> = live
        .into_iter()
        // The core's own spontaneous events name no session a client opens.
        .filter(|session| sessions::validate_id(&session.id).is_ok())
        .map(|session| {
            let mut summary = summarize(workspace, &session.id, None);
            summary.live = true;
            summary.busy = session.busy;
            summary.origin = session.origin;
            summary
        })
        .collect();
    open.sort_by_key(|s| std::cmp::Reverse(s.last_activity));
    let mut others: Vec<SessionSummary> = on_disk
        .into_iter()
        .filter(|(_, id)| !open.iter().any(|s| &s.id == id))
        .take(MAX_LISTED)
        .map(|(modified, id)| summarize(workspace, &id, Some(modified)))
        .collect();
    others.sort_by_key(|s| std::cmp::Reverse(s.last_activity));
    open.extend(others);
    Reply::Sessions { sessions: open }
}

/// The transcripts in `sessions/`: when each was last written, its id.
fn transcripts(workspace: &Path) -> Result<Vec<(SystemTime, String)>, String> {
    let dir = workspace.join("sessions");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_file() && sessions::validate_id(id).is_ok() {
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            found.push((modified, id.to_string()));
        }
    }
    Ok(found)
}

/// What the list shows of `id` from its transcript (none yet: a live
/// session that has written nothing; unreadable: just its name).
fn summarize(workspace: &Path, id: &str, modified: Option<SystemTime>) -> SessionSummary {
    let mut summary = SessionSummary {
        id: id.to_string(),
        origin: String::new(),
        last_activity: modified.map_or_else(Utc::now, DateTime::<Utc>::from),
        messages: 0,
        title: String::new(),
        live: false,
        busy: false,
    };
    let path = Transcript::path(workspace, id);
    let Ok(entries) = sessions::load_entries(&path) else {
        return summary;
    };
    if let Some(ts) = entries.iter().map(entry_ts).max() {
        summary.last_activity = ts;
    }
    let records = sessions::live(entries);
    summary.messages = records.len();
    if let Some(last) = records.last() {
        summary.origin = last.origin.to_string();
    }
    summary.title = records
        .iter()
        .find(|r| r.message.role == Role::User && r.compaction.is_none())
        .map(|r| title(r.typed.as_deref().unwrap_or(&r.message.content)))
        .unwrap_or_default();
    summary
}

fn entry_ts(entry: &sessions::Entry) -> DateTime<Utc> {
    match entry {
        sessions::Entry::Message(r) => r.ts,
        sessions::Entry::Mark(m) => m.ts,
    }
}

/// The first line with text, at most [`TITLE_CHARS`] characters.
fn title(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    let line = line.unwrap_or("");
    let mut title: String = line.chars().take(TITLE_CHARS).collect();
    if line.chars().nth(TITLE_CHARS).is_some() {
        title.pop();
        title.push('…');
    }
    title
}

fn cron(workspace: &Path) -> Reply {
    let jobs = match CronStore::in_workspace(workspace).load() {
        Ok(jobs) => jobs,
        Err(e) => return failed(format!("{e:#}")),
    };
    let now = Utc::now();
    let redacted = |mut text: String| {
        sessions::redact_as_read(&mut text);
        text
    };
    let jobs = jobs
        .into_iter()
        .map(|job| CronJobInfo {
            schedule: job.schedule.describe(),
            next_run: job.next_run.filter(|_| job.enabled),
            session: job.session(),
            describe: redacted(job.describe(now)),
            prompt: capped(redacted(job.message.clone()), MAX_TEXT),
            id: job.id,
        })
        .collect();
    Reply::Cron { jobs }
}

/// Today (the local calendar day, as `egirl stats` counts it) per
/// provider and model.
fn stats(workspace: &Path) -> Reply {
    let lines = match usage_log::read(workspace) {
        Ok(lines) => lines.unwrap_or_default(),
        Err(e) => return failed(format!("{e:#}")),
    };
    let today = Local::now().date_naive();
    let mut rows: BTreeMap<(String, String), UsageRow> = BTreeMap::new();
    for line in lines {
        if line.ts.with_timezone(&Local).date_naive() != today {
            continue;
        }
        let key = (line.provider.clone(), line.model.clone());
        let row = rows.entry(key).or_insert_with(|| UsageRow {
            provider: line.provider.clone(),
            model: line.model.clone(),
            requests: 0,
            input_tokens: 0,
            output_tokens: 0,
            cached_tokens: 0,
            cost_usd: 0.0,
        });
        row.requests += 1;
        row.input_tokens += line.input_tokens;
        row.output_tokens += line.output_tokens;
        row.cached_tokens += line.cached_tokens;
        row.cost_usd += line.cost_usd;
    }
    let rows: Vec<UsageRow> = rows.into_values().collect();
    // An empty sum of f64 is -0.0, which a page would show as "-0.00".
    let total_cost_usd = rows.iter().map(|r| r.cost_usd).sum::<f64>() + 0.0;
    Reply::Stats {
        rows,
        total_cost_usd,
    }
}

#[cfg(test)]
mod tests;
