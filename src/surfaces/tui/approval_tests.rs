//! The approval modal's keystroke guard as a state machine, on a made-up
//! clock: keys typed while it waits are the message's, a decision needs
//! the keys lit on a drawn frame, `p` needs Enter.

use std::time::{Duration, Instant};

use super::approval::{ARM_AFTER, Approvals, KeyOutcome, ModalKey, PendingApproval};
use crate::protocol::{ApprovalRequest, Op, Origin, ReviewDecision};

fn request(id: &str, escalation: Option<&str>) -> PendingApproval {
    PendingApproval {
        session: "s".into(),
        origin: Origin::Tui,
        request: ApprovalRequest {
            id: id.into(),
            tool: "exec".into(),
            command: "touch pwned.txt".into(),
            cwd: "/ws".into(),
            rule: Some("touch".into()),
            rule_covers: None,
            sandbox: None,
            escalation: escalation.map(Into::into),
        },
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// One request shown on a frame at `t0`, armed by the loop's timer and
/// the frame after it.
fn armed(t0: Instant) -> Approvals {
    let mut approvals = Approvals::default();
    approvals.push(request("ap-1", None));
    approvals.drawn(t0);
    approvals.tick(t0 + ARM_AFTER);
    approvals.drawn(t0 + ARM_AFTER + ms(16));
    assert!(approvals.is_armed());
    approvals
}

fn decision(outcome: KeyOutcome) -> Option<ReviewDecision> {
    match outcome {
        KeyOutcome::Decided(Op::ApprovalDecision { decision, .. }) => Some(decision),
        _ => None,
    }
}

#[test]
fn keys_before_the_first_frame_go_to_the_input() {
    let t0 = Instant::now();
    let mut approvals = Approvals::default();
    approvals.push(request("ap-1", None));
    // Queued or read before any frame showed the modal.
    for key in [ModalKey::Once, ModalKey::Session, ModalKey::Always] {
        assert!(matches!(approvals.key(key, t0), KeyOutcome::ToInput));
    }
    assert_eq!(approvals.arms_at(), None, "no timer before the first frame");
    approvals.drawn(t0 + ms(5));
    assert_eq!(approvals.arms_at(), Some(t0 + ms(5) + ARM_AFTER));
    assert_eq!(approvals.len(), 1);
}

#[test]
fn keys_in_the_grace_period_go_to_the_input_and_restart_it() {
    let t0 = Instant::now();
    let mut approvals = Approvals::default();
    approvals.push(request("ap-1", None));
    approvals.drawn(t0);
    // A typist at 100 ms a key: the modal never arms while they type.
    for i in 1..=20 {
        let at = t0 + ms(100 * i);
        approvals.tick(at);
        assert!(matches!(
            approvals.key(ModalKey::Once, at),
            KeyOutcome::ToInput
        ));
        assert!(!approvals.shows_armed());
    }
    let last = t0 + ms(2000);
    assert_eq!(approvals.arms_at(), Some(last + ARM_AFTER));
    approvals.tick(last + ARM_AFTER - ms(1));
    assert!(!approvals.shows_armed());
    approvals.tick(last + ARM_AFTER);
    assert!(approvals.shows_armed(), "lit after half a second of quiet");
    assert!(!approvals.is_armed(), "but only a drawn frame arms it");
    assert!(matches!(
        approvals.key(ModalKey::Once, last + ARM_AFTER + ms(1)),
        KeyOutcome::ToInput
    ));
    assert_eq!(approvals.len(), 1);
}

#[test]
fn y_after_arming_approves_once() {
    let t0 = Instant::now();
    let mut approvals = armed(t0);
    let outcome = approvals.key(ModalKey::Once, t0 + ms(900));
    assert_eq!(decision(outcome), Some(ReviewDecision::ApprovedOnce));
    assert!(approvals.is_empty());
}

#[test]
fn n_and_a_decide_once_armed() {
    let t0 = Instant::now();
    for (key, expected) in [
        (ModalKey::Deny, ReviewDecision::Denied),
        (ModalKey::Session, ReviewDecision::ApprovedForSession),
    ] {
        let mut approvals = armed(t0);
        assert_eq!(decision(approvals.key(key, t0 + ms(900))), Some(expected));
    }
}

#[test]
fn p_needs_enter_and_any_other_key_backs_out() {
    let t0 = Instant::now();
    let mut approvals = armed(t0);
    assert!(matches!(
        approvals.key(ModalKey::Always, t0 + ms(900)),
        KeyOutcome::Held
    ));
    assert!(approvals.confirming_always());
    // A second `p` (a held-down key repeats) is not the confirmation.
    assert!(matches!(
        approvals.key(ModalKey::Always, t0 + ms(950)),
        KeyOutcome::Held
    ));
    assert!(!approvals.confirming_always());
    assert_eq!(approvals.len(), 1);
    approvals.key(ModalKey::Always, t0 + ms(1000));
    let outcome = approvals.key(ModalKey::Confirm, t0 + ms(1100));
    assert_eq!(decision(outcome), Some(ReviewDecision::ApprovedAlways));
}

#[test]
fn enter_alone_decides_nothing() {
    let t0 = Instant::now();
    let mut approvals = armed(t0);
    assert!(matches!(
        approvals.key(ModalKey::Confirm, t0 + ms(900)),
        KeyOutcome::Held
    ));
    assert_eq!(approvals.len(), 1);
}

#[test]
fn typing_resumed_while_armed_disarms() {
    let t0 = Instant::now();
    let mut approvals = armed(t0);
    let at = t0 + ms(900);
    assert!(matches!(
        approvals.key(ModalKey::Other, at),
        KeyOutcome::ToInput
    ));
    assert!(!approvals.shows_armed());
    assert_eq!(approvals.arms_at(), Some(at + ARM_AFTER));
    assert!(matches!(
        approvals.key(ModalKey::Once, at + ms(50)),
        KeyOutcome::ToInput
    ));
}

#[test]
fn the_next_request_waits_for_its_own_frame_and_quiet() {
    let t0 = Instant::now();
    let mut approvals = armed(t0);
    approvals.push(request("ap-2", None));
    let at = t0 + ms(900);
    assert!(decision(approvals.key(ModalKey::Once, at)).is_some());
    // A double `y` does not approve the request shown next.
    assert!(matches!(
        approvals.key(ModalKey::Once, at + ms(30)),
        KeyOutcome::ToInput
    ));
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals.arms_at(), None, "not drawn yet");
}

#[test]
fn an_escalation_takes_o_or_a_denial_once_armed() {
    let t0 = Instant::now();
    let mut approvals = Approvals::default();
    approvals.push(request("ap-1", Some("read-only file system")));
    assert!(matches!(
        approvals.key(ModalKey::OutsideSandbox, t0),
        KeyOutcome::ToInput
    ));
    approvals.drawn(t0);
    approvals.tick(t0 + ARM_AFTER);
    approvals.drawn(t0 + ARM_AFTER);
    for key in [ModalKey::Once, ModalKey::Session, ModalKey::Always] {
        assert!(matches!(approvals.key(key, t0 + ms(900)), KeyOutcome::Held));
    }
    let outcome = approvals.key(ModalKey::OutsideSandbox, t0 + ms(900));
    assert_eq!(
        decision(outcome),
        Some(ReviewDecision::ApprovedOutsideSandbox)
    );
}

#[test]
fn a_request_decided_elsewhere_resets_the_guard() {
    let t0 = Instant::now();
    let mut approvals = armed(t0);
    approvals.push(request("ap-2", None));
    approvals.remove("ap-1");
    assert!(!approvals.is_armed());
    assert!(matches!(
        approvals.key(ModalKey::Once, t0 + ms(900)),
        KeyOutcome::ToInput
    ));
}
