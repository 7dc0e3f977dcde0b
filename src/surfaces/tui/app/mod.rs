//! The TUI's state, built only from core `Event`s and the user's keys. No
//! terminal here: tests drive it directly and `draw` renders a snapshot.

use std::cell::Cell;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::approval::Approvals;
use super::conversation::{Conversation, Kind, Level, RenderCtx};
use super::feeds::{MemorySearch, RoutingLog, Stats, ToolLog};
use super::input::InputBox;
use super::layout::{LayoutParams, Pane, Rects};
use super::panes::SideCache;
use super::scroll::Scroll;
pub use super::sessions::SessionInfo;
use super::sessions::SessionPicker;
use super::theme::Theme;
use crate::protocol::{BotStatus, Op, Origin, SessionId, Submission, SubmissionId};

mod events;
mod life;

pub use life::elapsed_label;

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
    /// Write these bytes: a desktop notification escape and the bell
    /// (`notify`), while the window is not focused.
    Notify(Vec<u8>),
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
    /// The agent picker (`/agent`).
    Agents,
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
    /// Tokens of the prompt the input's session sends next (`meter`).
    pub context_used: u64,
    /// `context_used` is partly an estimate (shown with `~`).
    pub context_estimated: bool,
    pub context_length: u64,
    /// The Discord bot, as the bridge reports it (`Off` without one).
    pub discord: BotStatus,
    /// The Telegram bot (`Off` without one: then the status line leaves it out).
    pub telegram: BotStatus,
    /// The MCP servers, as the core reports them (none configured: empty).
    pub mcp: Vec<crate::protocol::McpServerInfo>,
    /// Several `[local] endpoints`: how many answer `/health`, of how many.
    pub replicas: Option<(usize, usize)>,
    /// Why no remote provider can take a turn (`/remote` and `/escalate`
    /// say it instead of pretending); `None`: one can, or the core did not say.
    pub no_remote: Option<String>,
    /// Remote spend against `[remote] budget_*` (the caps set; none: empty).
    pub budget: Vec<crate::protocol::wire::SpendPeriod>,
}

impl StatusInfo {
    /// The first capped period with nothing left (remote models are off).
    pub fn budget_spent(&self) -> Option<&crate::protocol::wire::SpendPeriod> {
        self.budget.iter().find(|p| p.exhausted())
    }
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
    /// The conversation shows only `session`, the one the input goes to
    /// (Ctrl+T); else all of them. One field for both, so the view and the
    /// input cannot point at different sessions (`filter()`).
    pub solo: bool,
    /// The slash-command list above the input: its selection.
    pub popup: super::commands::popup::CommandPopup,
    pub picker: SessionPicker,
    /// `<workspace>/sessions`, where the picker finds earlier transcripts.
    pub sessions_dir: Option<PathBuf>,
    /// Where a pasted picture is stored (`pictures`); `None`: pastes are text.
    pub image_store: Option<crate::images::Store>,
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
    /// The time of the last tick or key: what the elapsed timers count to
    /// (`draw` reads no clock, so a frame depends only on the state).
    pub clock: Instant,
    /// When each running tool call started (by call id): its timer.
    pub(super) tool_started: std::collections::HashMap<String, Instant>,
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
    /// The open `/approvals` list.
    pub approval_rules: Option<super::approval_rules::RulesOverlay>,
    /// The `/approvals` listing asked for and not answered yet.
    pub(super) rules_listing: Option<SubmissionId>,
    /// The terminal window has focus, as its focus reports say (true until
    /// one says otherwise).
    pub focused: bool,
    /// `[ui] notify` and `notify_after`.
    pub notify: super::notify::NotifySettings,
    /// The open `/model` picker.
    pub models: Option<super::models::ModelPicker>,
    /// The active search (`/find`, Ctrl+F).
    pub search: Option<super::search::Search>,
    /// Submissions of this TUI whose answers it acts on (`/fork` moves to
    /// the copy, `/rewind` gives the message back): answers carry the id.
    pub(super) asked: HashSet<SubmissionId>,
    /// Attached to a core in another process: to which, and how the
    /// connection is (in process: nothing).
    pub link: super::link::LinkView,
    /// The config's agents and each session's (`agents`); nothing shows
    /// without `[agents]`.
    pub agents: super::agents::Agents,
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
            solo: false,
            popup: Default::default(),
            picker: SessionPicker::default(),
            sessions_dir: None,
            image_store: None,
            status: StatusInfo {
                provider: "llamacpp".into(),
                model: options.model,
                endpoint: options.endpoint,
                local: LocalState::Unknown,
                context_used: 0,
                context_estimated: false,
                context_length: options.context_length,
                discord: BotStatus::Off,
                telegram: BotStatus::Off,
                mcp: Vec::new(),
                replicas: None,
                no_remote: None,
                budget: Vec::new(),
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
            clock: Instant::now(),
            tool_started: Default::default(),
            rects: Cell::new(None),
            side_lines: SideCache::default(),
            conversation_width: Cell::new(0),
            skills: None,
            rewind: None,
            approval_rules: None,
            rules_listing: None,
            focused: true,
            notify: Default::default(),
            models: None,
            search: None,
            asked: HashSet::new(),
            link: Default::default(),
            agents: Default::default(),
        }
    }

    pub fn render_ctx(&self) -> RenderCtx<'_> {
        RenderCtx {
            theme: &self.theme,
            tools: &self.tools,
            expanded: self.expanded,
            epoch: self.epoch,
            agents: &self.agents,
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
    /// out or a turn runs: an idle TUI has no timer at all).
    pub fn next_deadline(&self) -> Option<Instant> {
        let quit = self.last_ctrl_c.map(|t| t + QUIT_WINDOW);
        // The modal's keys light up when it arms: a frame then.
        let arms = self.approvals.arms_at();
        quit.into_iter().chain(arms).chain(self.next_second()).min()
    }

    /// A frame reached the terminal at `now` (the approval modal's grace
    /// period counts from the first frame that shows it).
    pub fn frame_drawn(&mut self, now: Instant) {
        self.approvals.drawn(now);
    }

    pub fn tick(&mut self, now: Instant) {
        self.clock = self.clock.max(now);
        self.approvals.tick(now);
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
