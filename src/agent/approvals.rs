//! `/approvals` in the core: the rules in force for a session
//! (`list_approvals`, answered with `approval_rules`) and revoking one
//! (`revoke_approval`, answered with `approval_revoked` or `error`). Both
//! are quick (a small file and the approver's memory), so the core's task
//! answers them beside the session's turns, never behind a running one.

use crate::protocol::{ApprovalRevoked, ApprovalRules, ErrorEvent, EventKind, Origin, SessionId};

use super::shared::Shared;

pub(super) fn list(shared: &Shared, session: &SessionId) {
    let kind = match shared.approver.rules_in_force(session, &shared.config) {
        Ok(rules) => EventKind::ApprovalRules(ApprovalRules { rules }),
        Err(message) => EventKind::Error(ErrorEvent { message }),
    };
    shared.bus.emit(session, &Origin::Tui, kind);
}

pub(super) fn revoke(shared: &Shared, session: &SessionId, id: &str) {
    let kind = match shared.approver.revoke(session, id, &shared.config) {
        Ok(rule) => {
            tracing::info!(rule = %rule.rule, scope = rule.scope.name(), "approval revoked");
            EventKind::ApprovalRevoked(ApprovalRevoked {
                id: rule.id,
                rule: rule.rule,
            })
        }
        Err(message) => EventKind::Error(ErrorEvent { message }),
    };
    shared.bus.emit(session, &Origin::Tui, kind);
}
