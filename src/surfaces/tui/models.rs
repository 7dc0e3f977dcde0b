//! `/model` in the TUI: `/model NAME` pins the session at once; `/model`
//! alone asks the core what may be pinned (`list_models`) and opens a
//! picker on its answer (`models`). The core answers a pin with
//! `model_pinned`, which the status line shows.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Effect};
use super::conversation::Level;
use super::rewind::EventState;
use crate::protocol::{Command, ModelChoice, ModelPinned, Models, Op, SessionId};

/// The open picker: the core's choices, the session's pin selected.
#[derive(Clone, Debug, Default)]
pub struct ModelPicker {
    pub choices: Vec<ModelChoice>,
    /// The id in force when it opened (`auto` when none).
    pub pinned: String,
    pub selected: usize,
    /// Set by the key that closes it: the id chosen, or `None` for Esc.
    pub done: Option<Option<String>>,
}

impl ModelPicker {
    pub fn new(models: Models) -> Self {
        let selected = models
            .choices
            .iter()
            .position(|c| c.id == models.pinned)
            .unwrap_or(0);
        Self {
            choices: models.choices,
            pinned: models.pinned,
            selected,
            done: None,
        }
    }

    /// Arrows move, Enter picks, Esc closes; other keys are not its own.
    pub fn event(&mut self, key: KeyEvent) -> EventState {
        if super::rewind::move_selection(&mut self.selected, self.choices.len(), key.code) {
            return EventState::Consumed;
        }
        match key.code {
            KeyCode::Enter => {
                self.done = Some(self.choices.get(self.selected).map(|c| c.id.clone()));
            }
            KeyCode::Esc | KeyCode::Char('q') => self.done = Some(None),
            _ => return EventState::NotConsumed,
        }
        EventState::Consumed
    }
}

impl App {
    /// `/model [NAME]`: pins NAME, or asks for the choices (the picker
    /// opens on the answer).
    pub(super) fn model_command(&mut self, name: &str) -> Vec<Effect> {
        let session = self.session.clone();
        if name.is_empty() {
            return vec![self.request(Op::Command {
                session,
                command: Command::ListModels,
            })];
        }
        vec![pin(session, name)]
    }

    /// A key while the picker is open; it takes every key.
    pub(super) fn model_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(picker) = self.models.as_mut() else {
            return Vec::new();
        };
        if picker.event(key) == EventState::NotConsumed {
            return Vec::new();
        }
        match picker.done.take() {
            None => Vec::new(),
            Some(choice) => {
                self.models = None;
                choice
                    .map(|id| vec![pin(self.session.clone(), &id)])
                    .unwrap_or_default()
            }
        }
    }

    /// The core's list: the picker opens when this TUI asked for it; the
    /// session's pin is noted either way.
    pub(super) fn on_models(&mut self, session: &str, models: Models, ours: bool) {
        self.note_pin(session, &models.pinned, &models.pinned);
        if ours && session == self.session {
            self.models = Some(ModelPicker::new(models));
        }
    }

    pub(super) fn on_model_pinned(&mut self, session: &str, pinned: ModelPinned) {
        self.note_pin(session, &pinned.model, &pinned.label);
        self.notice(
            Level::Info,
            format!("{session} runs on {} from its next turn", pinned.label),
        );
    }

    fn note_pin(&mut self, session: &str, model: &str, label: &str) {
        if let Some(info) = self.sessions.get_mut(session) {
            info.pinned = (model != "auto").then(|| label.to_string());
        }
    }
}

fn pin(session: SessionId, model: &str) -> Effect {
    Effect::submit(Op::Command {
        session,
        command: Command::PinModel {
            model: model.to_string(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn choice(id: &str) -> ModelChoice {
        ModelChoice {
            id: id.into(),
            label: id.into(),
            detail: String::new(),
        }
    }

    #[test]
    fn the_picker_starts_on_the_pin_and_enter_picks_the_selected() {
        let models = Models {
            choices: vec![choice("auto"), choice("local"), choice("local.fast")],
            pinned: "local".into(),
        };
        let mut p = ModelPicker::new(models.clone());
        assert_eq!(p.selected, 1);
        assert_eq!(p.event(key(KeyCode::Down)), EventState::Consumed);
        assert_eq!(p.event(key(KeyCode::Char('x'))), EventState::NotConsumed);
        p.event(key(KeyCode::Enter));
        assert_eq!(p.done, Some(Some("local.fast".into())));
        let mut p = ModelPicker::new(models);
        p.event(key(KeyCode::Esc));
        assert_eq!(p.done, Some(None));
    }
}
