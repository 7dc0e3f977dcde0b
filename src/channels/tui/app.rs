//! The TUI's state, built only from core `Event`s and the user's keys. No
//! terminal here: tests drive it directly and `draw` renders a snapshot.

use std::cell::Cell;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::approval::{Approvals, PendingApproval};
use super::conversation::{Conversation, Kind, Level, RenderCtx, compaction_label};
use super::feeds::{
    self, MemorySearch, RoutingLog, RoutingRecord, Stats, ToolEntry, ToolLog, ToolState,
};
use super::input::InputBox;
use super::layout::{LayoutParams, Pane, Rects};
use super::panes::SideCache;
use super::scroll::Scroll;
pub use super::sessions::SessionInfo;
use super::sessions::SessionPicker;
use super::theme::Theme;
use crate::protocol::{
    AnswerDelta, ApprovalDecision, BotStatus, Compacted, ContextTrimmed, ErrorEvent, Event,
    EventKind, FinalAnswer, MemoryHits, Notice, Op, Origin, Queued, ReasoningDelta, SessionId,
    Submission, SubmissionId, Target, TokenUsage, ToolProgress, ToolResultEvent, TurnEnded,
    TurnStarted,
};

/// A second Ctrl+C within this long quits.
pub const QUIT_WINDOW: Duration = Duration::from_secs(1);

/// What the runtime must do after a key or an event.
#[derive(Clone, Debug)]
pub enum Effect {
    /// Hand this to the core.
    Submit(Submission),
    Quit,
    /// Ring the terminal bell (an approval is waiting).
    Bell,
    SetMouseCapture(bool),
    /// Copy text to the clipboard (OSC 52).
    Copy(String),
}

impl Effect {
    /// An op whose answers the TUI does not wait for, under a fresh id.
    pub fn submit(op: Op) -> Effect {
        Effect::Submit(Submission::new(op))
    }
}

/// Where keys go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Input,
    Pane(Pane),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlay {
    Help,
    /// The session picker (`/sessions`, Ctrl+S).
    Sessions,
}

/// Start-up facts the status line shows before any event arrives.
#[derive(Clone, Debug)]
pub struct AppOptions {
    pub session: SessionId,
    pub theme: Theme,
    /// Where `/theme NAME` looks for `themes/NAME.toml` (workspace, cwd).
    pub theme_dirs: Vec<PathBuf>,
    pub model: String,
    pub endpoint: String,
    pub context_length: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalState {
    Unknown,
    Up,
    Failing,
}

#[derive(Clone, Debug)]
pub struct StatusInfo {
    pub provider: String,
    pub model: String,
    pub endpoint: String,
    pub local: LocalState,
    /// Tokens of the last request of the TUI session (prompt + answer).
    pub context_used: u64,
    pub context_length: u64,
    /// The Discord bot, as the bridge reports it (`Off` without one).
    pub discord: BotStatus,
    /// The Telegram bot (`Off` without one: then the status line leaves it out).
    pub telegram: BotStatus,
    /// The MCP servers, as the core reports them (none configured: empty).
    pub mcp: Vec<crate::protocol::McpServerInfo>,
    /// Several `[local] endpoints`: how many answer `/health`, of how many.
    pub replicas: Option<(usize, usize)>,
}

pub struct App {
    /// The session the input box sends to.
    pub session: SessionId,
    pub theme: Theme,
    pub theme_dirs: Vec<PathBuf>,
    pub conversation: Conversation,
    pub routing: RoutingLog,
    pub tools: ToolLog,
    pub memory: Option<MemorySearch>,
    pub stats: Stats,
    pub approvals: Approvals,
    pub input: InputBox,
    pub sessions: BTreeMap<SessionId, SessionInfo>,
    /// The one session the conversation shows; `None`: all of them.
    pub filter: Option<SessionId>,
    pub picker: SessionPicker,
    /// `<workspace>/sessions`, where the picker finds earlier transcripts.
    pub sessions_dir: Option<PathBuf>,
    pub status: StatusInfo,
    pub focus: Focus,
    pub zoom: Option<Pane>,
    /// The side pane shown when they fold into tabs.
    pub side_tab: Pane,
    pub overlay: Option<Overlay>,
    /// First line of the help shown (it scrolls on a short terminal).
    pub help_scroll: usize,
    pub conversation_scroll: Scroll,
    pub side_scroll: [Scroll; 4],
    pub mouse_capture: bool,
    /// Tool calls and reasoning shown in full.
    pub expanded: bool,
    /// Render caches older than this are stale (theme or expansion changed).
    pub epoch: u64,
    pub(super) last_ctrl_c: Option<Instant>,
    /// Rectangles of the last draw, for mouse hit-testing.
    pub(super) rects: Cell<Option<Rects>>,
    /// The routing and tools panes' wrapped lines of the last draw.
    pub(super) side_lines: SideCache,
    /// The conversation's text width at the last draw.
    pub(super) conversation_width: Cell<u16>,
    /// The core's skills (hot-reloaded there): `/skills`, and a slash
    /// command per user-invocable skill. `None`: no skills.
    pub skills: Option<std::sync::Arc<crate::skills::Registry>>,
    /// The open `/rewind` picker.
    pub rewind: Option<super::rewind::RewindPicker>,
    /// The active search (`/find`, Ctrl+F).
    pub search: Option<super::search::Search>,
    /// Submissions of this TUI whose answers it acts on (`/fork` moves to
    /// the copy, `/rewind` gives the message back): answers carry the id.
    pub(super) asked: HashSet<SubmissionId>,
}

impl App {
    pub fn new(options: AppOptions) -> Self {
        let input = InputBox::new(&options.theme);
        let mut sessions = BTreeMap::new();
        sessions.insert(options.session.clone(), SessionInfo::new(Origin::Tui));
        Self {
            session: options.session,
            theme: options.theme,
            theme_dirs: options.theme_dirs,
            conversation: Conversation::default(),
            routing: Default::default(),
            tools: ToolLog::default(),
            memory: None,
            stats: Stats::default(),
            approvals: Approvals::default(),
            input,
            sessions,
            filter: None,
            picker: SessionPicker::default(),
            sessions_dir: None,
            status: StatusInfo {
                provider: "llamacpp".into(),
                model: options.model,
                endpoint: options.endpoint,
                local: LocalState::Unknown,
                context_used: 0,
                context_length: options.context_length,
                discord: BotStatus::Off,
                telegram: BotStatus::Off,
                mcp: Vec::new(),
                replicas: None,
            },
            focus: Focus::Input,
            zoom: None,
            side_tab: Pane::Routing,
            overlay: None,
            help_scroll: 0,
            conversation_scroll: Scroll::default(),
            // Routing and tools are live feeds (follow the bottom); memory
            // and stats are summaries read from the top.
            side_scroll: [
                Scroll::default(),
                Scroll::default(),
                Scroll::at_top(),
                Scroll::at_top(),
            ],
            mouse_capture: true,
            expanded: false,
            epoch: 0,
            last_ctrl_c: None,
            rects: Cell::new(None),
            side_lines: SideCache::default(),
            conversation_width: Cell::new(0),
            skills: None,
            rewind: None,
            search: None,
            asked: HashSet::new(),
        }
    }

    pub fn render_ctx(&self) -> RenderCtx<'_> {
        RenderCtx {
            theme: &self.theme,
            tools: &self.tools,
            expanded: self.expanded,
            epoch: self.epoch,
        }
    }

    pub fn layout_params(&self, width: u16) -> LayoutParams {
        // Borders and a column of padding on each side.
        let inner = super::layout::input_width(width, self.zoom).saturating_sub(4);
        LayoutParams {
            input_rows: self.input.rows(inner),
            zoom: self.zoom,
        }
    }

    /// Whether the TUI's own session has a turn running.
    pub fn busy(&self) -> bool {
        self.sessions.get(&self.session).is_some_and(|s| s.running)
    }

    /// "Ctrl+C again to quit" is showing.
    pub fn quit_armed(&self) -> bool {
        self.last_ctrl_c.is_some()
    }

    /// When the runtime should call `tick` (only while something times
    /// out: an idle TUI has no timer at all).
    pub fn next_deadline(&self) -> Option<Instant> {
        self.last_ctrl_c.map(|t| t + QUIT_WINDOW)
    }

    pub fn tick(&mut self, now: Instant) {
        if self
            .last_ctrl_c
            .is_some_and(|t| now.duration_since(t) >= QUIT_WINDOW)
        {
            self.last_ctrl_c = None;
        }
    }

    /// A note in the conversation from the TUI itself (command feedback).
    pub fn notice(&mut self, level: Level, text: impl Into<String>) {
        let session = self.session.clone();
        self.conversation
            .push(&session, &Origin::Tui, Kind::Notice(level), text.into());
        self.conversation_scroll.content_added();
    }

    /// The background probe's answer; true when the status line changes.
    pub fn set_local_health(&mut self, up: bool) -> bool {
        let state = if up {
            LocalState::Up
        } else {
            LocalState::Failing
        };
        let changed = self.status.local != state;
        self.status.local = state;
        changed
    }

    pub fn set_theme(&mut self, theme: Theme) {
        self.input.apply_theme(&theme);
        self.theme = theme;
        self.epoch += 1;
    }

    /// Folds one core event into the state.
    pub fn apply(&mut self, event: Event) -> Vec<Effect> {
        let Event {
            submission,
            session,
            origin,
            kind,
        } = event;
        // A request that failed gets no other answer: forget it.
        if let (Some(id), EventKind::Error(_)) = (&submission, &kind) {
            self.asked.remove(id);
        }
        let shown = self.shows(&session);
        let elsewhere = session != self.session;
        let info = self
            .sessions
            .entry(session.clone())
            .or_insert_with(|| SessionInfo::new(origin.clone()));
        info.last_activity = Some(std::time::SystemTime::now());
        // A message the user has not seen: the input points elsewhere, or
        // the conversation shows another session.
        // The heartbeat's standing prompt is not news; its answer (if any) is.
        let news = matches!(kind, EventKind::Final(_))
            || (matches!(kind, EventKind::TurnStarted(_)) && origin != Origin::Heartbeat);
        if (elsewhere || !shown) && news {
            info.unread += 1;
        }
        let target = info.target;
        let mut effects = Vec::new();
        let mut conversation_changed = shown;
        match kind {
            EventKind::TurnStarted(TurnStarted { text }) => {
                info.running = true;
                if origin != Origin::Heartbeat {
                    self.conversation.user(&session, &origin, &text);
                }
            }
            EventKind::Queued(Queued { text, .. }) => {
                self.conversation
                    .push(&session, &origin, Kind::User { queued: true }, text);
            }
            EventKind::Routing(routing) => {
                info.target = Some(routing.route.target());
                if session == self.session {
                    self.status.provider = routing.route.provider().to_string();
                    self.status.model = routing.model.clone();
                }
                self.side_added(Pane::Routing);
                self.routing
                    .push(RoutingRecord::Decision { session, routing });
                conversation_changed = false;
            }
            EventKind::Escalation(escalation) => {
                info.target = Some(Target::Remote);
                self.side_added(Pane::Routing);
                // The local attempt ends here; the remote answer follows
                // as a message of its own.
                self.conversation.close(&session);
                self.conversation.push(
                    &session,
                    &origin,
                    Kind::Notice(Level::Warning),
                    format!("escalated to {}: {}", escalation.to, escalation.reason),
                );
                self.routing.push(RoutingRecord::Escalation {
                    session,
                    escalation,
                });
            }
            EventKind::Delta(AnswerDelta { text }) => {
                self.conversation.delta(&session, &origin, &text)
            }
            EventKind::Reasoning(ReasoningDelta { text }) => {
                self.conversation.reasoning(&session, &origin, &text)
            }
            EventKind::ToolCall(call) => {
                self.conversation.close(&session);
                let seq = self.tools.push(ToolEntry {
                    call,
                    session: session.clone(),
                    origin: origin.clone(),
                    state: ToolState::Running,
                    duration_ms: None,
                    output: String::new(),
                    approval: None,
                    diff: None,
                });
                self.side_added(Pane::Tools);
                self.conversation
                    .push(&session, &origin, Kind::Tool(seq), String::new());
            }
            EventKind::ApprovalRequest(request) => {
                self.tools
                    .awaiting(&session, &request.tool, &request.command, &request.id);
                let before = self.approvals.len();
                self.approvals.push(PendingApproval {
                    session,
                    origin,
                    request,
                });
                // Ring for every new request: a queued one is news too.
                if self.approvals.len() > before {
                    effects.push(Effect::Bell);
                }
            }
            EventKind::ApprovalDecision(ApprovalDecision { id, decision, .. }) => {
                self.approvals.remove(&id);
                self.tools.decided(&id, decision.is_approved());
            }
            EventKind::ToolResult(ToolResultEvent {
                id,
                success,
                output,
                duration_ms,
                diff,
                ..
            }) => {
                self.tools
                    .finished(&session, &id, success, &output, duration_ms);
                if let Some(diff) = diff {
                    self.tools.diffed(&session, &id, diff);
                }
            }
            EventKind::ToolProgress(ToolProgress { id, text }) => {
                self.tools.progressed(&session, &id, &text)
            }
            EventKind::MemoryHits(MemoryHits { query, hits }) => {
                self.memory = Some(MemorySearch {
                    session,
                    query,
                    hits,
                });
                self.side_scroll[2] = Scroll::at_top();
                conversation_changed = false;
            }
            EventKind::Usage(TokenUsage {
                provider,
                model,
                input_tokens,
                output_tokens,
                cached_tokens,
                cost_usd,
                tokens_per_sec,
                endpoint,
                ..
            }) => {
                if let Some(endpoint) = &endpoint {
                    self.stats
                        .add_endpoint(endpoint, input_tokens, output_tokens, cached_tokens);
                }
                if target != Some(Target::Remote) {
                    self.status.local = LocalState::Up;
                }
                if session == self.session {
                    self.status.context_used = input_tokens + output_tokens;
                }
                self.stats.add(feeds::Usage {
                    session: &session,
                    target,
                    provider: &provider,
                    model: &model,
                    input_tokens,
                    output_tokens,
                    cached_tokens,
                    cost_usd,
                    tokens_per_sec,
                });
                conversation_changed = false;
            }
            EventKind::ContextTrimmed(ContextTrimmed {
                dropped_messages,
                prompt_tokens,
                context_length,
            }) => {
                if session == self.session {
                    self.status.context_length = context_length;
                    self.status.context_used = prompt_tokens;
                }
                let text = format!(
                    "left out {dropped_messages} older messages to fit the context window ({prompt_tokens}/{context_length} tokens)"
                );
                self.conversation
                    .push(&session, &origin, Kind::Notice(Level::Info), text);
            }
            EventKind::Notice(Notice { message }) => {
                self.conversation
                    .push(&session, &origin, Kind::Notice(Level::Warning), message);
            }
            EventKind::Compaction(Compacted {
                before_tokens,
                after_tokens,
                summarized_messages,
                summary,
                ..
            }) => {
                if session == self.session {
                    self.status.context_used = after_tokens;
                }
                let label = compaction_label(summarized_messages, before_tokens, after_tokens);
                self.conversation
                    .push(&session, &origin, Kind::Compaction(label), summary);
            }
            EventKind::Final(FinalAnswer { text }) => {
                self.conversation.finish(&session, &origin, &text)
            }
            EventKind::Error(ErrorEvent { message }) => {
                if target != Some(Target::Remote) {
                    self.status.local = LocalState::Failing;
                }
                self.conversation.close(&session);
                self.conversation
                    .push(&session, &origin, Kind::Notice(Level::Error), message);
            }
            kind @ (EventKind::Forked(_) | EventKind::Rewound(_)) => {
                // Ours when it answers our submission; an event without
                // an id (an older core) is ours when it is the shown session.
                let ours = match &submission {
                    Some(id) => self.asked.remove(id),
                    None => session == self.session,
                };
                self.timeline_event(&session, kind, ours);
            }
            EventKind::TurnEnded(TurnEnded { interrupted }) => {
                info.running = false;
                self.conversation.close(&session);
                if interrupted {
                    self.conversation.push(
                        &session,
                        &origin,
                        Kind::Notice(Level::Info),
                        "interrupted".into(),
                    );
                }
            }
        }
        if conversation_changed {
            self.conversation_scroll.content_added();
        }
        effects
    }

    fn side_added(&mut self, pane: Pane) {
        if let Some(i) = Pane::SIDE.iter().position(|p| *p == pane) {
            self.side_scroll[i].content_added();
        }
    }

    pub fn side_scroll(&self, pane: Pane) -> Option<&Scroll> {
        let i = Pane::SIDE.iter().position(|p| *p == pane)?;
        self.side_scroll.get(i)
    }

    pub(super) fn side_scroll_mut(&mut self, pane: Pane) -> Option<&mut Scroll> {
        let i = Pane::SIDE.iter().position(|p| *p == pane)?;
        self.side_scroll.get_mut(i)
    }

    /// Session cost of the TUI session and of everything.
    pub fn costs(&self) -> (f64, f64) {
        let session = self
            .stats
            .session_cost
            .get(&self.session)
            .copied()
            .unwrap_or(0.0);
        (session, self.stats.total_cost)
    }
}
