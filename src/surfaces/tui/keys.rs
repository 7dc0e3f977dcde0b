//! Terminal input to state changes and `Effect`s. Pure: time comes in as
//! an argument, ops go out as effects, so tests drive it without a terminal.
//!
//! Precedence (gitui's "consumed or not", flattened): Ctrl+C always; an
//! open approval modal takes every other key (its guard hands the keys
//! typed for the message box back to it); then the help overlay; then
//! global keys; then the focused pane.

use std::time::Instant;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::{App, Effect, Focus, Overlay, QUIT_WINDOW};
use super::approval::{KeyOutcome, ModalKey};
use super::commands::popup::{self, PopupKey};
use super::commands::{self, Typed};
use super::conversation::Level;
use super::layout::Pane;
use super::panes;
use crate::protocol::Op;

/// The order Tab walks.
const FOCUS_ORDER: [Focus; 6] = [
    Focus::Input,
    Focus::Pane(Pane::Conversation),
    Focus::Pane(Pane::Routing),
    Focus::Pane(Pane::Tools),
    Focus::Pane(Pane::Memory),
    Focus::Pane(Pane::Stats),
];

impl App {
    /// Handles one terminal event.
    pub fn handle_event(&mut self, event: TermEvent, now: Instant) -> Vec<Effect> {
        let effects = self.term_event(event, now);
        self.popup.follow(&self.input.text());
        self.address(effects)
    }

    fn term_event(&mut self, event: TermEvent, now: Instant) -> Vec<Effect> {
        match event {
            // Release events come only with the kitty keyboard protocol: ignore.
            TermEvent::Key(key) if key.kind != KeyEventKind::Release => self.key_effects(key, now),
            TermEvent::Paste(text) => {
                // A paste never decides a request: under the modal it is
                // the message's, and it restarts the modal's quiet period.
                if !self.approvals.is_empty() || self.overlay.is_none() {
                    self.approvals.typed(now);
                    self.focus = Focus::Input;
                    if !self.paste_picture(&text) {
                        self.input.insert(&text);
                    }
                }
                Vec::new()
            }
            // mouse.rs: the wheel scrolls, a click focuses, expands, copies.
            TermEvent::Mouse(mouse) => self.mouse(mouse),
            TermEvent::FocusLost => {
                self.set_focused(false);
                Vec::new()
            }
            TermEvent::FocusGained => {
                self.set_focused(true);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// Handles one key; each submission goes to its session's agent.
    pub fn handle_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        let effects = self.key_effects(key, now);
        self.address(effects)
    }

    fn key_effects(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        self.clock = self.clock.max(now);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        if ctrl && matches!(key.code, KeyCode::Char('c') | KeyCode::Char('C')) {
            return self.ctrl_c(now);
        }
        if !self.approvals.is_empty() {
            return self.approval_key(key, now);
        }
        if self.rewind.is_some() {
            return self.rewind_key(key);
        }
        if self.approval_rules.is_some() {
            return self.approval_rules_key(key);
        }
        if self.models.is_some() {
            return self.model_key(key);
        }
        if self.overlay == Some(Overlay::Sessions) {
            self.picker_key(key);
            return Vec::new();
        }
        if self.overlay == Some(Overlay::Agents) {
            self.agent_picker_key(key);
            return Vec::new();
        }
        if self.overlay.is_some() {
            // The help scrolls when the terminal is shorter than it.
            match key.code {
                KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') | KeyCode::Enter => {
                    self.overlay = None;
                    self.help_scroll = 0;
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    self.help_scroll = self.help_scroll.saturating_sub(1)
                }
                KeyCode::Down | KeyCode::Char('j') => self.help_scroll += 1,
                KeyCode::PageUp => self.help_scroll = self.help_scroll.saturating_sub(10),
                KeyCode::PageDown => self.help_scroll += 10,
                KeyCode::Home | KeyCode::Char('g') => self.help_scroll = 0,
                _ => {}
            }
            return Vec::new();
        }
        if self.focus == Focus::Input && self.search_key(key).is_some() {
            return Vec::new();
        }
        if let Some(effects) = self.global_key(key, ctrl, alt) {
            return effects;
        }
        match self.focus {
            Focus::Input => self.input_key(key, ctrl, alt),
            Focus::Pane(pane) => self.pane_key(pane, key),
        }
    }

    /// Interrupts the running turn, else clears the input; a second press
    /// within a second quits. One press never quits.
    fn ctrl_c(&mut self, now: Instant) -> Vec<Effect> {
        if self
            .last_ctrl_c
            .is_some_and(|t| now.duration_since(t) <= QUIT_WINDOW)
        {
            return vec![Effect::Quit];
        }
        self.last_ctrl_c = Some(now);
        if self.busy() {
            return vec![Effect::submit(Op::Interrupt {
                session: self.session.clone(),
            })];
        }
        self.input.clear();
        Vec::new()
    }

    /// A key while a request waits. The guard in `approval.rs` decides
    /// whether it answers the request or belongs to the message being
    /// typed, which gets it back (nothing typed under the modal is lost).
    fn approval_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let modal_key = match key.code {
            KeyCode::Char('y' | 'Y') if plain => ModalKey::Once,
            KeyCode::Char('a' | 'A') if plain => ModalKey::Session,
            KeyCode::Char('p' | 'P') if plain => ModalKey::Always,
            KeyCode::Char('o' | 'O') if plain => ModalKey::OutsideSandbox,
            KeyCode::Char('n' | 'N') | KeyCode::Esc if plain => ModalKey::Deny,
            KeyCode::Enter if key.modifiers.is_empty() => ModalKey::Confirm,
            _ => ModalKey::Other,
        };
        let asking = self.approvals.current().map(|p| p.session.clone());
        match self.approvals.key(modal_key, now) {
            KeyOutcome::Decided(op) => vec![self.submission_for(asking.as_deref(), op)],
            KeyOutcome::Held => Vec::new(),
            KeyOutcome::ToInput => {
                self.type_under_modal(key);
                Vec::new()
            }
        }
    }

    /// A key typed for the message box while the modal shows: text and
    /// editing keys go into the box; keys that send, complete, zoom or
    /// open something wait until the modal is closed (the text stays).
    fn type_under_modal(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if shift || alt => self.input.newline(),
            KeyCode::Char('j') if ctrl => self.input.newline(),
            KeyCode::Enter | KeyCode::Tab | KeyCode::BackTab | KeyCode::Esc | KeyCode::F(_) => {}
            KeyCode::Char('s' | 'f' | 't' | 'o') if ctrl => {}
            KeyCode::Char(_) if alt => {}
            _ => {
                self.focus = Focus::Input;
                self.input.key(key);
            }
        }
    }

    /// Keys that work whatever has focus; `None` when the key is not one.
    fn global_key(&mut self, key: KeyEvent, ctrl: bool, alt: bool) -> Option<Vec<Effect>> {
        // select.rs: Ctrl+O, Alt+O, Alt+Up/Down, Alt+C.
        if let Some(effects) = self.item_key(key, ctrl, alt) {
            return Some(effects);
        }
        let zoom = match key.code {
            KeyCode::F(n @ 1..=5) => Some(usize::from(n)),
            KeyCode::Char(c @ '1'..='5') if alt => c.to_digit(10).map(|d| d as usize),
            _ => None,
        };
        if let Some(n) = zoom {
            let pane = Pane::ALL[n - 1];
            self.zoom = if self.zoom == Some(pane) {
                None
            } else {
                Some(pane)
            };
            return Some(Vec::new());
        }
        match key.code {
            KeyCode::F(12) => {
                self.mouse_capture = !self.mouse_capture;
                Some(vec![Effect::SetMouseCapture(self.mouse_capture)])
            }
            KeyCode::Char('s') if ctrl => {
                self.open_session_picker();
                Some(Vec::new())
            }
            KeyCode::Char('f') if ctrl => {
                self.open_find();
                Some(Vec::new())
            }
            KeyCode::Char('t') if ctrl => {
                self.toggle_solo();
                Some(Vec::new())
            }
            KeyCode::Char('y') if alt => {
                let Some(text) = self.conversation.last_assistant().map(str::to_string) else {
                    self.notice(Level::Info, "nothing to copy yet");
                    return Some(Vec::new());
                };
                // OSC 52 has no answer: say what was sent to the terminal.
                self.notice(Level::Info, "copied the last answer (OSC 52)");
                Some(vec![Effect::Copy(text)])
            }
            KeyCode::Tab if !popup::typing_command(self) => {
                self.cycle_focus(1);
                Some(Vec::new())
            }
            KeyCode::BackTab => {
                self.cycle_focus(FOCUS_ORDER.len() - 1);
                Some(Vec::new())
            }
            KeyCode::PageUp if self.focus == Focus::Input => {
                self.measure_conversation();
                self.conversation_scroll.page_up();
                Some(Vec::new())
            }
            KeyCode::PageDown if self.focus == Focus::Input => {
                self.measure_conversation();
                self.conversation_scroll.page_down();
                Some(Vec::new())
            }
            KeyCode::Esc if self.zoom.is_some() => {
                self.zoom = None;
                Some(Vec::new())
            }
            KeyCode::Esc if self.focus != Focus::Input => {
                self.focus = Focus::Input;
                Some(Vec::new())
            }
            _ => None,
        }
    }

    /// The session picker: move, pick with Enter, close with Esc.
    fn picker_key(&mut self, key: KeyEvent) {
        let last = self.picker.rows.len().saturating_sub(1);
        let selected = &mut self.picker.selected;
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => *selected = (*selected + 1).min(last),
            KeyCode::Home | KeyCode::Char('g') => *selected = 0,
            KeyCode::End | KeyCode::Char('G') => *selected = last,
            KeyCode::Enter => {
                self.overlay = None;
                if let Some(row) = self.picker.rows.get(self.picker.selected).cloned() {
                    // Resumed as its agent: its transcript, its ops.
                    if let Some(agent) = &row.agent {
                        self.agents.note(&row.id, agent);
                    }
                    self.pick_session(&row.id);
                }
            }
            KeyCode::Esc | KeyCode::Char('q') => self.overlay = None,
            _ => {}
        }
    }

    fn cycle_focus(&mut self, step: usize) {
        let i = FOCUS_ORDER
            .iter()
            .position(|f| *f == self.focus)
            .unwrap_or(0);
        self.focus = FOCUS_ORDER[(i + step) % FOCUS_ORDER.len()];
        if let Focus::Pane(p) = self.focus
            && p != Pane::Conversation
        {
            self.side_tab = p;
        }
    }

    /// The completion list's keys (plain Up, Down, Tab, Enter, Esc) while
    /// it shows; `None`: the key is the input box's.
    fn popup_key(&mut self, key: KeyEvent) -> Option<Vec<Effect>> {
        if !key.modifiers.is_empty() {
            return None;
        }
        match popup::key(self, key.code) {
            PopupKey::Pass => None,
            PopupKey::Done => Some(Vec::new()),
            PopupKey::Run(line) => {
                self.input.clear();
                self.input.insert(&line);
                Some(self.submit())
            }
        }
    }

    fn input_key(&mut self, key: KeyEvent, ctrl: bool, alt: bool) -> Vec<Effect> {
        if let Some(effects) = self.popup_key(key) {
            return effects;
        }
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if shift || alt => self.input.newline(),
            // Ctrl+J is LF: the newline key of terminals that cannot tell
            // Shift+Enter from Enter.
            KeyCode::Char('j') if ctrl => self.input.newline(),
            KeyCode::Enter => return self.submit(),
            // A find being typed (Ctrl+F) is open too: Esc leaves it
            // (to the history, as everything typed).
            KeyCode::Esc if self.input.text().starts_with("/find ") => {
                self.input.take();
            }
            // Esc interrupts a running turn, as in codex and Claude Code
            // (the modal, overlays, the list, search and zoom took it first).
            KeyCode::Esc if self.busy() => return self.interrupt(),
            KeyCode::Up if self.input.recalling() => self.input.history_prev(),
            KeyCode::Down if self.input.recalling() => self.input.history_next(),
            KeyCode::Char('?') if self.input.is_empty() => self.overlay = Some(Overlay::Help),
            KeyCode::Backspace if self.input.is_empty() && !self.input.images.is_empty() => {
                self.input.images.pop();
            }
            KeyCode::Home | KeyCode::End if self.input.is_empty() => {
                self.scroll_key(Pane::Conversation, key.code);
            }
            _ => self.input.key(key),
        }
        Vec::new()
    }

    /// Enter: a known command runs, a message goes to the core, an
    /// unknown `/word` (or a command with an argument it does not take)
    /// stays in the box with a notice that says how to send it
    /// (`commands::classify`).
    fn submit(&mut self) -> Vec<Effect> {
        let mut text = self.input.text();
        if !text.trim_start().starts_with('/') {
            text = self.attach_typed_pictures(&text);
        }
        if text.trim().is_empty() && self.input.images.is_empty() {
            return Vec::new();
        }
        let typed = commands::classify(self, &text);
        let refused = match &typed {
            Typed::Unknown(name) => Some(commands::unknown_notice(name)),
            Typed::NoArgument(name) => Some(commands::no_argument_notice(name)),
            Typed::Command(_) | Typed::Message(_) => None,
        };
        if let Some(notice) = refused {
            self.notice(Level::Warning, notice);
            return Vec::new();
        }
        self.input.take();
        // Sending shows the answer: jump back to the bottom.
        self.conversation_scroll.end();
        match typed {
            Typed::Command(line) => commands::run(self, &line),
            Typed::Message(text) => vec![Effect::submit(Op::UserMessage {
                session: self.session.clone(),
                origin: crate::protocol::Origin::Tui,
                text,
                images: std::mem::take(&mut self.input.images),
            })],
            Typed::Unknown(_) | Typed::NoArgument(_) => Vec::new(),
        }
    }

    fn pane_key(&mut self, pane: Pane, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Char('?') => self.overlay = Some(Overlay::Help),
            KeyCode::Enter | KeyCode::Char(' ') if pane == Pane::Conversation => {
                self.toggle_selected();
            }
            KeyCode::Up
            | KeyCode::Down
            | KeyCode::PageUp
            | KeyCode::PageDown
            | KeyCode::Home
            | KeyCode::End
            | KeyCode::Char('j')
            | KeyCode::Char('k')
            | KeyCode::Char('g')
            | KeyCode::Char('G') => self.scroll_key(pane, key.code),
            // Typing elsewhere starts a message.
            KeyCode::Char(_) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.focus = Focus::Input;
                self.input.key(key);
            }
            _ => {}
        }
        Vec::new()
    }

    /// A pinned conversation draws without knowing its total height;
    /// scrolling needs it.
    fn measure_conversation(&self) {
        let width = self.conversation_width.get();
        if self.conversation_scroll.is_pinned() && width > 0 {
            let total = panes::conversation::total_rows(self, width);
            self.conversation_scroll.set_total(total);
        }
    }

    pub(super) fn scroll_key(&mut self, pane: Pane, code: KeyCode) {
        let scroll = if pane == Pane::Conversation {
            self.measure_conversation();
            &mut self.conversation_scroll
        } else {
            match self.side_scroll_mut(pane) {
                Some(s) => s,
                None => return,
            }
        };
        match code {
            KeyCode::Up | KeyCode::Char('k') => scroll.up(1),
            KeyCode::Down | KeyCode::Char('j') => scroll.down(1),
            KeyCode::PageUp => scroll.page_up(),
            KeyCode::PageDown => scroll.page_down(),
            KeyCode::Home | KeyCode::Char('g') => scroll.home(),
            KeyCode::End | KeyCode::Char('G') => scroll.end(),
            _ => {}
        }
    }
}
