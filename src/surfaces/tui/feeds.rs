//! What the side panes show, built from events: routing decisions, tool
//! calls, the last memory search and usage totals. Pure data; the panes in
//! `panes/` draw it.

use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::protocol::{
    Escalation, FileDiff, MemoryHit, Origin, Routing, SessionId, Target, ToolCallEvent, ToolOutcome,
};

/// Side panes keep this many records: they show what is happening now,
/// the transcript on disk keeps the rest.
pub const KEEP: usize = 500;
/// Progress lines a running call keeps (a delegation reports many).
pub const PROGRESS_LINES: usize = 40;

/// A routing pane entry: the event as the core sent it, and its session.
#[derive(Clone, Debug, PartialEq)]
pub enum RoutingRecord {
    Decision {
        session: SessionId,
        routing: Routing,
    },
    Escalation {
        session: SessionId,
        escalation: Escalation,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolState {
    Running,
    AwaitingApproval,
    Ok,
    Failed,
    Denied,
    /// Read back from a transcript written before outcomes were kept.
    Restored,
}

impl ToolState {
    pub fn label(self) -> &'static str {
        match self {
            ToolState::Running => "running",
            ToolState::AwaitingApproval => "awaiting approval",
            ToolState::Ok => "ok",
            ToolState::Failed => "failed",
            ToolState::Denied => "denied",
            ToolState::Restored => "earlier",
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            ToolState::Running => "…",
            ToolState::AwaitingApproval => "?",
            ToolState::Ok => "✓",
            ToolState::Failed => "✗",
            ToolState::Denied => "⊘",
            ToolState::Restored => "·",
        }
    }
}

/// A tool call as the tools pane and the conversation show it: the
/// core's call as it came, and what became of it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolEntry {
    pub call: ToolCallEvent,
    pub session: SessionId,
    pub origin: Origin,
    pub state: ToolState,
    pub duration_ms: Option<u64>,
    pub output: String,
    /// The approval request raised for this call, if any.
    pub approval: Option<String>,
    /// For `write_file`/`edit_file`: what the call changed.
    pub diff: Option<FileDiff>,
}

impl ToolEntry {
    /// The arguments as one short line: the command for `exec`, the path
    /// for file tools, else compact JSON.
    pub fn summary(&self) -> String {
        let obj = self.call.arguments.as_object();
        for key in ["command", "path", "pattern", "query"] {
            if let Some(v) = obj.and_then(|o| o.get(key)).and_then(|v| v.as_str()) {
                return v.to_string();
            }
        }
        match &self.call.arguments {
            serde_json::Value::Object(o) if o.is_empty() => String::new(),
            v => v.to_string(),
        }
    }
}

/// Routing decisions and escalations, newest last, at most `KEEP`.
#[derive(Debug, Default)]
pub struct RoutingLog {
    records: VecDeque<RoutingRecord>,
    /// Bumped on every change: the pane caches its lines under it.
    version: u64,
}

impl RoutingLog {
    pub fn push(&mut self, record: RoutingRecord) {
        push_capped(&mut self.records, record);
        self.version += 1;
    }

    pub fn iter(&self) -> impl Iterator<Item = &RoutingRecord> {
        self.records.iter()
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn version(&self) -> u64 {
        self.version
    }
}

/// Tool calls in arrival order; records are addressed by a stable sequence
/// number (the conversation refers to them), which survives trimming.
#[derive(Debug, Default)]
pub struct ToolLog {
    records: VecDeque<ToolEntry>,
    /// Sequence number of `records[0]`.
    first: usize,
    /// Bumped on every change: the pane caches its lines under it.
    version: u64,
}

impl ToolLog {
    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn push(&mut self, record: ToolEntry) -> usize {
        self.version += 1;
        self.records.push_back(record);
        if self.records.len() > KEEP {
            self.records.pop_front();
            self.first += 1;
        }
        self.first + self.records.len() - 1
    }

    pub fn get(&self, seq: usize) -> Option<&ToolEntry> {
        seq.checked_sub(self.first)
            .and_then(|i| self.records.get(i))
    }

    pub fn iter(&self) -> impl Iterator<Item = &ToolEntry> {
        self.records.iter()
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Every change goes through here or `push`, so both bump the version.
    fn find_mut(&mut self, pred: impl Fn(&ToolEntry) -> bool) -> Option<&mut ToolEntry> {
        self.version += 1;
        self.records.iter_mut().rev().find(|r| pred(r))
    }

    /// The protocol's approval request names no call id: the request
    /// belongs to the newest running call of that session whose command
    /// matches.
    pub fn awaiting(&mut self, session: &str, tool: &str, command: &str, approval: &str) {
        if let Some(r) = self.find_mut(|r| {
            r.session == session
                && r.call.name == tool
                && r.state == ToolState::Running
                && r.approval.is_none()
                // exec's command, web_fetch's url, a delegation's task.
                && r.call.arguments.as_object().is_some_and(|args| {
                    args.values().any(|v| v.as_str() == Some(command))
                })
        }) {
            r.state = ToolState::AwaitingApproval;
            r.approval = Some(approval.to_string());
        }
    }

    pub fn decided(&mut self, approval: &str, approved: bool) {
        if let Some(r) = self.find_mut(|r| r.approval.as_deref() == Some(approval)) {
            r.state = if approved {
                ToolState::Running
            } else {
                ToolState::Denied
            };
        }
    }

    pub fn finished(&mut self, session: &str, id: &str, success: bool, output: &str, ms: u64) {
        if let Some(r) = self.find_mut(|r| r.session == session && r.call.id == id) {
            // A denied call still reports a (failed) result: keep "denied".
            if r.state != ToolState::Denied {
                r.state = if success {
                    ToolState::Ok
                } else {
                    ToolState::Failed
                };
            }
            r.duration_ms = Some(ms);
            r.output = output.to_string();
        }
    }

    /// The change a finished file tool call made.
    /// A running call's progress, one line each, shown as its output until
    /// the result replaces it (the last `PROGRESS_LINES` are kept).
    pub fn progressed(&mut self, session: &str, id: &str, text: &str) {
        if let Some(r) = self.find_mut(|r| r.session == session && r.call.id == id) {
            if !r.output.is_empty() {
                r.output.push('\n');
            }
            r.output.push_str(text.trim_end());
            let lines = r.output.lines().count();
            if lines > PROGRESS_LINES {
                let drop = lines - PROGRESS_LINES;
                r.output = r.output.lines().skip(drop).collect::<Vec<_>>().join("\n");
            }
        }
    }

    pub fn diffed(&mut self, session: &str, id: &str, diff: FileDiff) {
        if let Some(r) = self.find_mut(|r| r.session == session && r.call.id == id) {
            r.diff = Some(diff);
        }
    }
}

impl ToolLog {
    /// A call read back from a transcript: its output, how it ended and
    /// its diff where the transcript kept them (older ones did not: the
    /// call stays `earlier`), and no duration (none is kept).
    pub fn restored(
        &mut self,
        session: &str,
        id: &str,
        output: &str,
        outcome: Option<ToolOutcome>,
        diff: Option<FileDiff>,
    ) {
        if let Some(r) = self.find_mut(|r| r.session == session && r.call.id == id) {
            r.state = match outcome {
                Some(ToolOutcome::Ok) => ToolState::Ok,
                Some(ToolOutcome::Failed) => ToolState::Failed,
                Some(ToolOutcome::Denied) => ToolState::Denied,
                None => ToolState::Restored,
            };
            r.output = output.to_string();
            r.diff = diff;
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemorySearch {
    pub session: SessionId,
    pub query: String,
    pub hits: Vec<MemoryHit>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatRow {
    pub target: Option<Target>,
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    pub tokens_per_sec: Option<f64>,
}

/// Usage totals per provider/model, per session, and local vs remote.
#[derive(Debug, Default)]
pub struct Stats {
    pub rows: BTreeMap<(String, String), StatRow>,
    pub session_cost: HashMap<SessionId, f64>,
    pub total_cost: f64,
    pub local_tokens: u64,
    pub remote_tokens: u64,
    /// Per local endpoint (several under `[local] endpoints`).
    pub endpoints: BTreeMap<String, EndpointRow>,
}

/// What one local endpoint served.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EndpointRow {
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
}

impl EndpointRow {
    /// Share of prompt tokens served from the endpoint's cache, in percent.
    pub fn cache_share(&self) -> u64 {
        (self.cached_tokens * 100)
            .checked_div(self.input_tokens)
            .unwrap_or(0)
    }
}

pub struct Usage<'a> {
    pub session: &'a str,
    pub target: Option<Target>,
    pub provider: &'a str,
    pub model: &'a str,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    pub tokens_per_sec: Option<f64>,
}

impl Stats {
    pub fn add(&mut self, u: Usage<'_>) {
        let row = self
            .rows
            .entry((u.provider.to_string(), u.model.to_string()))
            .or_default();
        row.target = u.target.or(row.target);
        row.requests += 1;
        row.input_tokens += u.input_tokens;
        row.output_tokens += u.output_tokens;
        row.cached_tokens += u.cached_tokens;
        row.cost_usd += u.cost_usd;
        if u.tokens_per_sec.is_some() {
            row.tokens_per_sec = u.tokens_per_sec;
        }
        *self.session_cost.entry(u.session.to_string()).or_default() += u.cost_usd;
        self.total_cost += u.cost_usd;
        let tokens = u.input_tokens + u.output_tokens;
        match u.target {
            Some(Target::Remote) => self.remote_tokens += tokens,
            _ => self.local_tokens += tokens,
        }
    }

    /// A local request's figures under the endpoint that served it.
    pub fn add_endpoint(&mut self, endpoint: &str, input: u64, output: u64, cached: u64) {
        let row = self.endpoints.entry(endpoint.to_string()).or_default();
        row.requests += 1;
        row.input_tokens += input;
        row.output_tokens += output;
        row.cached_tokens += cached;
    }

    /// Share of tokens served locally, in percent (None before any usage).
    pub fn local_share(&self) -> Option<u64> {
        let total = self.local_tokens + self.remote_tokens;
        (total > 0).then(|| (self.local_tokens * 100 + total / 2) / total)
    }
}

/// Compact token counts: 950, 1.2k, 3.4M.
pub fn tokens(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// A vector with at most `KEEP` items, oldest dropped first.
pub fn push_capped<T>(v: &mut VecDeque<T>, item: T) {
    v.push_back(item);
    if v.len() > KEEP {
        v.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, command: &str) -> ToolEntry {
        ToolEntry {
            call: ToolCallEvent {
                id: id.into(),
                name: "exec".into(),
                arguments: serde_json::json!({ "command": command }),
                sandbox: None,
            },
            session: "s".into(),
            origin: Origin::Tui,
            state: ToolState::Running,
            duration_ms: None,
            output: String::new(),
            approval: None,
            diff: None,
        }
    }

    #[test]
    fn approvals_attach_to_the_matching_call_and_denial_sticks() {
        let mut log = ToolLog::default();
        let a = log.push(call("1", "ls"));
        let b = log.push(call("2", "rm x"));
        log.awaiting("s", "exec", "rm x", "ap1");
        assert_eq!(log.get(a).map(|r| r.state), Some(ToolState::Running));
        assert_eq!(
            log.get(b).map(|r| r.state),
            Some(ToolState::AwaitingApproval)
        );
        log.decided("ap1", false);
        log.finished("s", "2", false, "denied by user", 0);
        assert_eq!(log.get(b).map(|r| r.state), Some(ToolState::Denied));
        log.finished("s", "1", true, "a\nb", 12);
        assert_eq!(log.get(a).map(|r| r.state), Some(ToolState::Ok));
    }

    #[test]
    fn sequence_numbers_survive_trimming() {
        let mut log = ToolLog::default();
        let first = log.push(call("0", "x"));
        for i in 1..=KEEP {
            log.push(call(&i.to_string(), "x"));
        }
        assert!(log.get(first).is_none());
        assert_eq!(log.get(KEEP).map(|r| r.call.id.as_str()), Some("500"));
        assert_eq!(log.len(), KEEP);
    }

    #[test]
    fn stats_add_up_and_share() {
        let mut s = Stats::default();
        for (target, n) in [(Target::Local, 300), (Target::Remote, 100)] {
            s.add(Usage {
                session: "s",
                target: Some(target),
                provider: "p",
                model: "m",
                input_tokens: n,
                output_tokens: 0,
                cached_tokens: 0,
                cost_usd: 0.5,
                tokens_per_sec: None,
            });
        }
        assert_eq!(s.local_share(), Some(75));
        assert_eq!(s.rows[&("p".into(), "m".into())].requests, 2);
        assert_eq!(s.session_cost["s"], 1.0);
        assert_eq!(tokens(1234), "1.2k");
    }
}
