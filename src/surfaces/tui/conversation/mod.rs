//! The conversation: every session's messages in arrival order, with their
//! rendered lines cached per width (codex's "history cells").
//!
//! A finished message renders once per width and theme. A streaming one
//! caches the blocks that can no longer change (everything before the last
//! blank line outside a code fence) and re-renders only the open block as
//! deltas arrive, so a long answer costs the same per frame as a short one.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use ratatui::text::Line;

use super::feeds::ToolLog;
use super::theme::Theme;
use crate::protocol::{Origin, SessionId};

mod blocks;
mod cells;
mod compaction;
mod diff;
mod measure;
mod render;

pub use blocks::stable_prefix;
pub use cells::badge;
pub use compaction::label as compaction_label;

pub type Lines = Rc<Vec<Line<'static>>>;

/// An entry's lines: the cached part, then (while streaming) a blank row
/// and the open block rendered fresh. Kept apart so a frame never copies
/// the cached part of a long streaming answer.
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    pub head: Lines,
    pub tail: Vec<Line<'static>>,
}

impl Rendered {
    fn cached(head: Lines) -> Self {
        Self {
            head,
            tail: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<&Line<'static>> {
        self.head.get(i).or_else(|| {
            i.checked_sub(self.head.len())
                .and_then(|j| self.tail.get(j))
        })
    }

    /// All lines, copied (tests and callers that need one slice).
    pub fn to_vec(&self) -> Vec<Line<'static>> {
        let mut all = (*self.head).clone();
        all.extend(self.tail.iter().cloned());
        all
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    User {
        queued: bool,
    },
    Assistant,
    Reasoning,
    /// A tool call: a sequence number in the `ToolLog`.
    Tool(usize),
    Notice(Level),
    /// A compaction's divider (its label); the entry's text is the summary.
    Compaction(String),
}

#[derive(Debug)]
pub struct Entry {
    pub session: SessionId,
    pub origin: Origin,
    pub kind: Kind,
    pub text: String,
    /// Still streaming.
    pub open: bool,
    /// An answer or tool call that goes on after egirl's earlier answer or
    /// tool call in the same turn: no second "egirl" header.
    pub continued: bool,
    /// Shown in full (Ctrl+O on it, or a click): a tool call's arguments
    /// and output, a whole diff, reasoning, a compaction's summary.
    pub expanded: bool,
    cache: RefCell<Option<Cache>>,
    /// Rows at (width, epoch, text length, expansion), kept when the
    /// lines are not.
    height: Cell<Option<(HeightKey, usize)>>,
    /// A tool call's file diff, rendered.
    diff: diff::DiffCache,
    /// A user message's pictures: a chip each, expanded to where it came from.
    pub images: Vec<crate::protocol::ImagePart>,
}

/// Width, epoch, text length and whether it shows expanded: what an
/// entry's height depends on.
type HeightKey = (u16, u64, usize, bool);

#[derive(Debug)]
struct Cache {
    width: u16,
    epoch: u64,
    /// Rendered expanded (reasoning only: see `Entry::expands`).
    expanded: bool,
    /// Bytes of `text` the cached lines cover (all of it once closed).
    stable: usize,
    lines: Lines,
    /// The lines hold more than the header: a later block joins them
    /// after a blank row.
    body: bool,
    /// Bytes rendered into `lines` so far (each once, when streaming).
    rendered: usize,
}

/// What rendering an entry depends on besides the entry.
pub struct RenderCtx<'a> {
    pub theme: &'a Theme,
    pub tools: &'a ToolLog,
    /// Every tool call, diff, reasoning and summary shown in full (Alt+O);
    /// else only the entries expanded one by one.
    pub expanded: bool,
    /// Bumped whenever something every cached entry depends on changes
    /// (the theme): older caches are ignored. Expansion is not one: only
    /// the entries that expand key their caches on it.
    pub epoch: u64,
    /// Whose session each is (headers name the agent when there are agents).
    pub agents: &'a super::agents::Agents,
}

impl Entry {
    fn new(session: &str, origin: &Origin, kind: Kind, text: String, open: bool) -> Self {
        Self {
            session: session.to_string(),
            origin: origin.clone(),
            kind,
            text,
            open,
            continued: false,
            expanded: false,
            cache: RefCell::new(None),
            height: Cell::new(None),
            diff: diff::DiffCache::default(),
            images: Vec::new(),
        }
    }

    /// Whether the entry shows expanded: expanded itself, or everything is
    /// (Alt+O), and it is a kind that expands.
    pub(crate) fn expands(&self, ctx: &RenderCtx<'_>) -> bool {
        (ctx.expanded || self.expanded) && self.expandable()
    }

    /// How a tool call shows: expanded on its own, it shows all of its
    /// output; expanded with everything (Alt+O), the first lines.
    fn tool_shown(&self, ctx: &RenderCtx<'_>) -> cells::Shown {
        if self.expanded {
            cells::Shown::Expanded {
                output_lines: usize::MAX,
            }
        } else if ctx.expanded {
            cells::Shown::Expanded {
                output_lines: cells::EXPANDED_ALL_LINES,
            }
        } else {
            cells::Shown::Collapsed
        }
    }

    /// The agent its header names, in its color (`None` without agents).
    fn agent<'c>(&self, ctx: &RenderCtx<'c>) -> Option<(&'c str, ratatui::style::Color)> {
        let (name, slot) = ctx.agents.tag(&self.session)?;
        Some((name, ctx.theme.agent_color(slot)))
    }

    /// Kinds Ctrl+O expands: what the selection moves over.
    pub fn expandable(&self) -> bool {
        match self.kind {
            Kind::Reasoning | Kind::Tool(_) | Kind::Compaction(_) => true,
            Kind::User { .. } => !self.images.is_empty(),
            _ => false,
        }
    }

    /// Header, tool and notice lines are one-liners with no blank between.
    pub fn is_compact(&self) -> bool {
        matches!(self.kind, Kind::Tool(_) | Kind::Notice(_) | Kind::Reasoning)
    }
}

/// Every session's entries, and which entry is streaming in each session.
#[derive(Debug, Default)]
pub struct Conversation {
    pub entries: Vec<Entry>,
    open_text: HashMap<SessionId, usize>,
    open_reasoning: HashMap<SessionId, usize>,
    /// The item picked for Ctrl+O (Alt+Up/Down, a click); `None`: the
    /// newest expandable item shown.
    pub selected: Option<usize>,
    /// What the last frame drew on each row: (screen row, entry, line of
    /// the entry). Clicks are hit-tested against it.
    pub drawn: RefCell<Vec<DrawnRow>>,
}

/// A row of the last frame: its `y`, the entry and the entry's line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrawnRow {
    pub y: u16,
    pub entry: usize,
    pub line: usize,
}

impl Conversation {
    pub fn push(&mut self, session: &str, origin: &Origin, kind: Kind, text: String) {
        let continued = matches!(kind, Kind::Tool(_)) && self.continues_turn(session);
        let mut entry = Entry::new(session, origin, kind, text, false);
        entry.continued = continued;
        self.entries.push(entry);
    }

    /// The pictures of the session's latest user message (a chip each).
    pub fn attach_images(&mut self, session: &str, images: Vec<crate::protocol::ImagePart>) {
        if images.is_empty() {
            return;
        }
        let last = self
            .entries
            .iter_mut()
            .rev()
            .find(|e| e.session == session && matches!(e.kind, Kind::User { .. }));
        if let Some(e) = last {
            e.images = images;
            e.invalidate();
        }
    }

    /// A turn started: the user's message, unless it was shown as queued.
    pub fn user(&mut self, session: &str, origin: &Origin, text: &str) {
        self.close(session);
        let queued = self.entries.iter_mut().find(|e| {
            e.session == session && e.kind == Kind::User { queued: true } && e.text == text
        });
        match queued {
            Some(e) => {
                e.kind = Kind::User { queued: false };
                e.invalidate();
            }
            None => self.push(session, origin, Kind::User { queued: false }, text.into()),
        }
    }

    pub fn delta(&mut self, session: &str, origin: &Origin, text: &str) {
        self.close_reasoning(session);
        self.append(session, origin, Kind::Assistant, text, true);
    }

    pub fn reasoning(&mut self, session: &str, origin: &Origin, text: &str) {
        self.append(session, origin, Kind::Reasoning, text, false);
    }

    fn append(&mut self, session: &str, origin: &Origin, kind: Kind, text: &str, main: bool) {
        let open = if main {
            &self.open_text
        } else {
            &self.open_reasoning
        };
        if let Some(e) = open.get(session).and_then(|&i| self.entries.get_mut(i)) {
            e.text.push_str(text);
            return;
        }
        let continued = main && self.continues_turn(session);
        let open = if main {
            &mut self.open_text
        } else {
            &mut self.open_reasoning
        };
        open.insert(session.to_string(), self.entries.len());
        let mut entry = Entry::new(session, origin, kind, text.to_string(), true);
        entry.continued = continued;
        self.entries.push(entry);
    }

    /// The model's final text: it replaces what streamed (they match when
    /// the provider streams; a non-streaming provider sends only this).
    pub fn finish(&mut self, session: &str, origin: &Origin, text: &str) {
        self.close_reasoning(session);
        match self
            .open_text
            .remove(session)
            .and_then(|i| self.entries.get_mut(i))
        {
            Some(e) => {
                if !text.trim().is_empty() && e.text != text {
                    e.text = text.to_string();
                    // The cache is keyed by length; new text may have the same.
                    e.invalidate();
                }
                e.open = false;
            }
            None if !text.trim().is_empty() => self.answer(session, origin, text),
            None => {}
        }
    }

    /// A finished answer (a non-streaming reply, or one from a transcript).
    pub fn answer(&mut self, session: &str, origin: &Origin, text: &str) {
        let continued = self.continues_turn(session);
        let mut entry = Entry::new(session, origin, Kind::Assistant, text.to_string(), false);
        entry.continued = continued;
        self.entries.push(entry);
    }

    /// Whether the session's current turn already shows an answer or a
    /// tool call (so a new answer entry continues it).
    fn continues_turn(&self, session: &str) -> bool {
        self.entries
            .iter()
            .rev()
            .filter(|e| e.session == session)
            .find_map(|e| match e.kind {
                Kind::User { queued: false } => Some(false),
                Kind::Assistant | Kind::Tool(_) => Some(true),
                _ => None,
            })
            .unwrap_or(false)
    }

    /// Closes the streaming entries of a session (a tool call or the turn's
    /// end): later deltas start a new entry below.
    pub fn close(&mut self, session: &str) {
        self.close_reasoning(session);
        if let Some(e) = self
            .open_text
            .remove(session)
            .and_then(|i| self.entries.get_mut(i))
        {
            e.open = false;
        }
    }

    fn close_reasoning(&mut self, session: &str) {
        if let Some(e) = self
            .open_reasoning
            .remove(session)
            .and_then(|i| self.entries.get_mut(i))
        {
            e.open = false;
        }
    }

    /// Forgets a session's entries (`/clear`).
    pub fn clear_session(&mut self, session: &str) {
        self.close(session);
        self.entries.retain(|e| e.session != session);
        // Indices moved: the picked item and the drawn rows no longer hold.
        self.selected = None;
        self.drawn.borrow_mut().clear();
        // Indices moved: rebuild the open maps from the flags.
        self.open_text.clear();
        self.open_reasoning.clear();
        for (i, e) in self.entries.iter().enumerate() {
            if e.open {
                let map = if e.kind == Kind::Reasoning {
                    &mut self.open_reasoning
                } else {
                    &mut self.open_text
                };
                map.insert(e.session.clone(), i);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The last finished assistant message (for copying).
    pub fn last_assistant(&self) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.kind == Kind::Assistant && !e.text.trim().is_empty())
            .map(|e| e.text.as_str())
    }
}

#[cfg(test)]
mod tests;
