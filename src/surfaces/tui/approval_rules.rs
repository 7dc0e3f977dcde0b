//! `/approvals` in the TUI: every approval rule in force for the session,
//! grouped by kind, from the core (`list_approvals` → `approval_rules`,
//! so it works the same attached to `egirl serve`). `d` revokes the
//! selected rule (`revoke_approval` → `approval_revoked`); a config rule
//! is not revocable here and says where to edit it.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Effect};
use super::conversation::Level;
use super::rewind::EventState;
use crate::protocol::{
    ApprovalRevoked, ApprovalRule, ApprovalScope, Command, ErrorEvent, EventKind, Op, SubmissionId,
};

/// Said when there is no rule to show.
pub const NO_RULES: &str = "no approval rules in force: `a` (this session) or `p` (always) on an approval request adds one";

/// The open overlay: the rules as the core listed them, one selected.
#[derive(Clone, Debug, Default)]
pub struct RulesOverlay {
    pub rules: Vec<ApprovalRule>,
    pub selected: usize,
    /// The revocation this overlay asked for, answered by `approval_revoked`
    /// or `error`.
    pub revoking: Option<SubmissionId>,
    /// What the last `d` came to, shown under the list (the conversation
    /// behind has it too).
    pub said: Option<String>,
}

impl RulesOverlay {
    pub fn new(rules: Vec<ApprovalRule>) -> Self {
        Self {
            rules,
            selected: 0,
            revoking: None,
            said: None,
        }
    }

    pub fn current(&self) -> Option<&ApprovalRule> {
        self.rules.get(self.selected)
    }

    /// Moves the selection; other keys are not its own.
    fn moved(&mut self, key: KeyEvent) -> EventState {
        let last = self.rules.len().saturating_sub(1);
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(last),
            KeyCode::Home | KeyCode::Char('g') => self.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.selected = last,
            _ => return EventState::NotConsumed,
        }
        EventState::Consumed
    }

    /// Takes a revoked rule out of the list.
    fn remove(&mut self, id: &str) {
        self.rules.retain(|r| r.id != id);
        self.selected = self.selected.min(self.rules.len().saturating_sub(1));
    }
}

impl App {
    /// `/approvals`: asks the core for the rules; the overlay opens with
    /// its answer.
    pub fn list_approvals(&mut self) -> Vec<Effect> {
        let effect = self.request(Op::Command {
            session: self.session.clone(),
            command: Command::ListApprovals,
        });
        if let Effect::Submit(submission) = &effect {
            self.rules_listing = Some(submission.id.clone());
        }
        vec![effect]
    }

    /// A key while the overlay is open; it takes every key.
    pub(super) fn approval_rules_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(overlay) = self.approval_rules.as_mut() else {
            return Vec::new();
        };
        if overlay.moved(key) == EventState::Consumed {
            return Vec::new();
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter => {
                self.approval_rules = None;
                Vec::new()
            }
            KeyCode::Char('d') | KeyCode::Delete => self.revoke_selected(),
            _ => Vec::new(),
        }
    }

    fn revoke_selected(&mut self) -> Vec<Effect> {
        let Some(rule) = self.approval_rules.as_ref().and_then(|o| o.current()) else {
            return Vec::new();
        };
        if rule.scope == ApprovalScope::Config {
            let text = format!(
                "`{}` is set in the config ({}): remove it from egirl.toml",
                rule.rule, rule.source
            );
            if let Some(overlay) = self.approval_rules.as_mut() {
                overlay.said = Some(text.clone());
            }
            self.notice(Level::Warning, text);
            return Vec::new();
        }
        let op = Op::Command {
            session: self.session.clone(),
            command: Command::RevokeApproval {
                id: rule.id.clone(),
            },
        };
        let effect = self.request(op);
        if let (Effect::Submit(submission), Some(overlay)) = (&effect, self.approval_rules.as_mut())
        {
            overlay.revoking = Some(submission.id.clone());
        }
        vec![effect]
    }

    /// The core's list: opens the overlay when this TUI asked for it.
    /// `approval_rules` or `approval_revoked`; `ours` when this TUI asked.
    pub(super) fn on_rules_event(&mut self, submission: Option<&SubmissionId>, kind: EventKind) {
        let ours = submission.is_some_and(|id| self.asked.remove(id));
        match kind {
            EventKind::ApprovalRules(listed) => self.on_approval_rules(listed.rules, ours),
            EventKind::ApprovalRevoked(revoked) => self.on_approval_revoked(revoked, ours),
            _ => {}
        }
    }

    pub(super) fn on_approval_rules(&mut self, rules: Vec<ApprovalRule>, ours: bool) {
        if ours {
            self.rules_listing = None;
        }
        if !ours {
            return;
        }
        if rules.is_empty() {
            self.notice(Level::Info, NO_RULES);
            return;
        }
        self.approval_rules = Some(RulesOverlay::new(rules));
    }

    /// A rule was revoked (here or by another window onto the same core):
    /// out of the open list, and said.
    pub(super) fn on_approval_revoked(&mut self, revoked: ApprovalRevoked, ours: bool) {
        let text = format!(
            "revoked `{}`: the next request it covered asks again",
            revoked.rule
        );
        if let Some(overlay) = self.approval_rules.as_mut() {
            overlay.remove(&revoked.id);
            overlay.revoking = None;
            overlay.said = Some(text.clone());
        }
        if ours {
            self.notice(Level::Info, text);
        }
    }

    /// An error answering `/approvals` or the overlay's revocation (an
    /// approvals file that does not parse, an unknown id): said as a
    /// warning, since it is about the rules, not the model. True when it
    /// was that.
    pub(super) fn approval_rules_error(
        &mut self,
        submission: Option<&SubmissionId>,
        error: &ErrorEvent,
    ) -> bool {
        let Some(submission) = submission else {
            return false;
        };
        if self.rules_listing.as_ref() == Some(submission) {
            self.rules_listing = None;
        } else {
            let Some(overlay) = self.approval_rules.as_mut() else {
                return false;
            };
            if overlay.revoking.as_ref() != Some(submission) {
                return false;
            }
            overlay.revoking = None;
            overlay.said = Some(error.message.clone());
        }
        self.notice(Level::Warning, error.message.clone());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ApprovalRuleKind, Event, EventKind, Origin};
    use crate::surfaces::tui::theme::Theme;
    use crossterm::event::KeyModifiers;

    fn app() -> App {
        App::new(crate::surfaces::tui::AppOptions {
            session: "s".into(),
            theme: Theme::default(),
            theme_dirs: Vec::new(),
            model: "m".into(),
            endpoint: "http://127.0.0.1:1".into(),
            context_length: 1024,
        })
    }

    fn rule(id: &str, text: &str, scope: ApprovalScope) -> ApprovalRule {
        ApprovalRule {
            id: id.into(),
            kind: ApprovalRuleKind::ExecPrefix,
            rule: text.into(),
            scope,
            source: "config [tools.exec] allow".into(),
            added: None,
        }
    }

    fn answer(app: &mut App, submission: SubmissionId, kind: EventKind) {
        app.apply(Event {
            agent: None,
            submission: Some(submission),
            session: "s".into(),
            origin: Origin::Tui,
            kind,
        });
    }

    fn submitted(effects: &[Effect]) -> (SubmissionId, Op) {
        match effects {
            [Effect::Submit(s)] => (s.id.clone(), s.op.clone()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_list_opens_d_revokes_and_a_config_rule_says_where_it_lives() {
        let mut app = app();
        let (id, _) = submitted(&app.list_approvals());
        let rules = vec![
            rule("c1", "make", ApprovalScope::Config),
            rule("p1", "git status", ApprovalScope::Permanent),
        ];
        answer(
            &mut app,
            id,
            EventKind::ApprovalRules(ApprovalRules { rules }),
        );
        assert_eq!(app.approval_rules.as_ref().map(|o| o.rules.len()), Some(2));

        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        assert!(
            app.handle_key(key(KeyCode::Char('d')), std::time::Instant::now())
                .is_empty()
        );
        app.handle_key(key(KeyCode::Down), std::time::Instant::now());
        let effects = app.handle_key(key(KeyCode::Char('d')), std::time::Instant::now());
        let (id, op) = submitted(&effects);
        assert!(matches!(
            op,
            Op::Command { command: Command::RevokeApproval { ref id }, .. } if id == "p1"
        ));
        let revoked = ApprovalRevoked {
            id: "p1".into(),
            rule: "git status".into(),
        };
        answer(&mut app, id, EventKind::ApprovalRevoked(revoked));
        let overlay = app.approval_rules.as_ref().expect("still open");
        assert_eq!(overlay.rules.len(), 1);
        assert_eq!(overlay.selected, 0);
        app.handle_key(key(KeyCode::Esc), std::time::Instant::now());
        assert!(app.approval_rules.is_none());
    }

    #[test]
    fn a_listing_that_fails_is_a_warning_not_a_failing_model() {
        let mut app = app();
        let (id, _) = submitted(&app.list_approvals());
        let error = ErrorEvent {
            message: ".egirl/approvals.toml is not valid: …".into(),
        };
        answer(&mut app, id, EventKind::Error(error));
        assert!(app.approval_rules.is_none());
        assert_ne!(
            app.status.local,
            crate::surfaces::tui::app::LocalState::Failing
        );
    }

    #[test]
    fn another_windows_list_does_not_open_here() {
        let mut app = app();
        let rules = vec![rule("p1", "ls", ApprovalScope::Permanent)];
        answer(
            &mut app,
            SubmissionId("elsewhere-1".into()),
            EventKind::ApprovalRules(ApprovalRules { rules }),
        );
        assert!(app.approval_rules.is_none());
    }

    use crate::protocol::ApprovalRules;
}
