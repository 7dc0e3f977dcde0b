//! The core's approval requests as `session/request_permission`: allow
//! once, allow always (when the request names the rule egirl would save,
//! shown in the option's name), reject once. The answer goes back as
//! `Op::ApprovalDecision`; the sandbox and the rules apply as for every
//! surface (the core decides what a decision covers).

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};

use super::{Acp, updates};
use crate::protocol::{ApprovalRequest, Op, Origin, ReviewDecision};

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT_ONCE: &str = "reject_once";

/// Asks the client about `request` (for the call `call_id` when the turn
/// showed it) and hands the core its answer. A client that cancels or
/// fails to answer denies.
pub async fn ask(acp: &Acp, session: &str, call_id: Option<String>, request: ApprovalRequest) {
    let params = RequestPermissionRequest::new(
        session.to_string(),
        tool_call(call_id, &request),
        options(&request),
    );
    let answer = acp.peer.request("session/request_permission", params).await;
    let decision = match answer {
        Ok(value) => match serde_json::from_value::<RequestPermissionResponse>(value) {
            Ok(response) => decision(&request, &response.outcome),
            Err(e) => {
                tracing::warn!("acp: a permission answer that does not parse: {e}");
                ReviewDecision::Denied
            }
        },
        Err(why) => {
            tracing::warn!("acp: the permission request failed: {why}");
            ReviewDecision::Denied
        }
    };
    acp.link.submit(Op::ApprovalDecision {
        id: request.id,
        decision,
        by: Origin::Acp,
    });
}

/// The call the request is about: the one the turn showed, else one of
/// its own, titled by what would run.
fn tool_call(call_id: Option<String>, request: &ApprovalRequest) -> ToolCallUpdate {
    let title = match &request.escalation {
        Some(_) => format!("Run `{}` outside the sandbox", request.command),
        None if request.tool == "exec" => format!("Run `{}`", request.command),
        None => format!("{}: {}", request.tool, request.command),
    };
    let id = call_id.unwrap_or_else(|| format!("approval-{}", request.id));
    ToolCallUpdate::new(
        id,
        ToolCallUpdateFields::new()
            .title(title)
            .kind(updates::kind_of(&request.tool))
            .status(ToolCallStatus::Pending),
    )
}

/// What the client offers: allow once (outside the sandbox, for a request
/// to leave it), always (only with a rule to save), reject.
fn options(request: &ApprovalRequest) -> Vec<PermissionOption> {
    let once = match &request.escalation {
        Some(_) => "Run once outside the sandbox",
        None => "Allow once",
    };
    let mut options = vec![PermissionOption::new(
        ALLOW_ONCE,
        once,
        PermissionOptionKind::AllowOnce,
    )];
    if request.escalation.is_none()
        && let Some(rule) = &request.rule
    {
        let covers = request
            .rule_covers
            .as_deref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        options.push(PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Always allow `{rule}`{covers}"),
            PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(PermissionOption::new(
        REJECT_ONCE,
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    options
}

/// The client's pick as the core's decision.
fn decision(request: &ApprovalRequest, outcome: &RequestPermissionOutcome) -> ReviewDecision {
    let RequestPermissionOutcome::Selected(selected) = outcome else {
        return ReviewDecision::Denied;
    };
    match selected.option_id.0.as_ref() {
        ALLOW_ONCE if request.escalation.is_some() => ReviewDecision::ApprovedOutsideSandbox,
        ALLOW_ONCE => ReviewDecision::ApprovedOnce,
        ALLOW_ALWAYS if request.rule.is_some() && request.escalation.is_none() => {
            ReviewDecision::ApprovedAlways
        }
        _ => ReviewDecision::Denied,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    fn request(rule: Option<&str>, escalation: Option<&str>) -> ApprovalRequest {
        ApprovalRequest {
            id: "a1".into(),
            tool: "exec".into(),
            command: "cargo test".into(),
            cwd: "/ws".into(),
            rule: rule.map(str::to_string),
            rule_covers: None,
            sandbox: None,
            escalation: escalation.map(Into::into),
        }
    }

    fn picked(id: &str) -> RequestPermissionOutcome {
        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id.to_string()))
    }

    #[test]
    fn always_is_offered_with_the_rule_it_saves_and_only_then() {
        let with_rule = options(&request(Some("cargo test"), None));
        let names: Vec<&str> = with_rule.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["Allow once", "Always allow `cargo test`", "Reject"]);
        assert_eq!(options(&request(None, None)).len(), 2);
        assert_eq!(options(&request(Some("x"), Some("denied"))).len(), 2);
    }

    #[test]
    fn picks_become_decisions_and_anything_else_denies() {
        let plain = request(Some("cargo test"), None);
        assert_eq!(
            decision(&plain, &picked(ALLOW_ONCE)),
            ReviewDecision::ApprovedOnce
        );
        assert_eq!(
            decision(&plain, &picked(ALLOW_ALWAYS)),
            ReviewDecision::ApprovedAlways
        );
        assert_eq!(
            decision(&plain, &picked(REJECT_ONCE)),
            ReviewDecision::Denied
        );
        assert_eq!(decision(&plain, &picked("made-up")), ReviewDecision::Denied);
        let cancelled = RequestPermissionOutcome::Cancelled;
        assert_eq!(decision(&plain, &cancelled), ReviewDecision::Denied);
        let no_rule = request(None, None);
        assert_eq!(
            decision(&no_rule, &picked(ALLOW_ALWAYS)),
            ReviewDecision::Denied
        );
        let leave = request(None, Some("sandbox refused"));
        assert_eq!(
            decision(&leave, &picked(ALLOW_ONCE)),
            ReviewDecision::ApprovedOutsideSandbox
        );
    }
}
