//! Tests of the exec approval policy, rules and parked requests.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::bus::EventReceiver;
use crate::config::ExecApproval;
use crate::protocol::Event;
use crate::protocol::{ApprovalDecision, ApprovalRequest};
use crate::protocol::{Origin, ReviewDecision};

fn argv_ok(rule: &str, command: &str) -> bool {
    auto_approvable(command).is_some_and(|argv| rule_matches(rule, &argv))
}

#[test]
fn rules_match_parsed_argv_prefixes() {
    let table = [
        ("git status", "git status", true),
        ("git status", "git status -s", true),
        ("git status", "  git   'status'  -s", true),
        ("git status", "git statusx", false),
        ("git status", "git", false),
        ("git status", "git log", false),
        ("ls", "ls -la src", true),
        ("ls", "lsblk", false),
        ("cargo test", "FOO=1 cargo test", false),
        // Shell syntax is never covered, quoted or not.
        ("git status", "git status; rm -rf ~", false),
        ("git status", "git status && rm x", false),
        ("git status", "git status || rm x", false),
        ("git status", "git status | sh", false),
        ("git status", "git status > out", false),
        ("git status", "git status < in", false),
        ("git status", "git status $(rm x)", false),
        ("git status", "git status `rm x`", false),
        ("git status", "git status ${X}", false),
        ("git status", "git status &", false),
        ("git status", "git status (x)", false),
        ("git status", "git status\nrm x", false),
        ("git status", "git status\rrm x", false),
        ("git status", "git status ';'", false),
        ("git status", "git status 'unbalanced", false),
        ("", "git status", false),
    ];
    for (rule, command, expected) in table {
        assert_eq!(
            argv_ok(rule, command),
            expected,
            "rule `{rule}` vs `{command}`"
        );
    }
}

#[test]
fn recorded_prefixes() {
    assert_eq!(
        approval_prefix("git status -s").as_deref(),
        Some("git status")
    );
    assert_eq!(
        approval_prefix("cargo test --lib").as_deref(),
        Some("cargo test")
    );
    assert_eq!(approval_prefix("ls").as_deref(), Some("ls"));
    assert_eq!(approval_prefix("ls -la").as_deref(), Some("ls -la"));
    assert_eq!(
        approval_prefix("rm -rf build").as_deref(),
        Some("rm -rf build")
    );
    assert_eq!(
        approval_prefix("python 'my script.py' -v").as_deref(),
        Some("python 'my script.py'")
    );
    assert_eq!(approval_prefix("ls | wc"), None);
}

/// `p` on `find . -name '*.md'` once saved `find .`, which then
/// covered `find . -exec touch X {} +`.
#[test]
fn prefix_rules_never_cover_options_that_run_or_write_something_else() {
    let table = [
        ("find .", "find . -name '*.md'", true),
        // Unquoted, bash matches `*.md` against the files first (one could
        // be named `-delete.md`...): asked, like any glob that could.
        ("find .", "find . -name *.md", false),
        ("ls", "ls src/*.rs", true),
        ("find .", "find . {-delete,}", false),
        ("find .", "find . $'-delete'", false),
        ("find .", "find . -exec touch X {} +", false),
        ("find .", "find . -name x -delete", false),
        ("find .", "find . -fprint out", false),
        ("git", "git log", true),
        ("git", "git -c core.pager=sh log", false),
        ("git log", "git log --exec-path=/tmp", false),
        ("git", "git config core.fsmonitor x", false),
        ("sed", "sed -n p f", true),
        ("sed", "sed -i s/a/b/ f", false),
        ("python3", "python3 script.py", true),
        ("python3", "python3 -c print(1)", false),
        ("bash", "bash -c ls", false),
        ("xargs", "xargs", true),
        ("xargs", "xargs rm", false),
        ("env", "env ls", false),
        ("sudo", "sudo ls", false),
        ("timeout 5", "timeout 5 rm x", false),
        ("tar", "tar -xf a.tar --to-command=sh", false),
        ("rsync", "rsync -e ssh a b", false),
        // A rule that is exactly the argv covers it, and nothing longer.
        (
            "find . -exec touch X {} +",
            "find . -exec touch X {} +",
            true,
        ),
        ("find . -exec touch X", "find . -exec touch X {} +", false),
        ("sudo ls", "sudo ls", true),
        ("sudo ls", "sudo ls /root", false),
    ];
    for (rule, command, expected) in table {
        assert_eq!(
            argv_ok(rule, command),
            expected,
            "rule `{rule}` vs `{command}`"
        );
    }
}

#[test]
fn widening_commands_are_remembered_as_their_exact_argv() {
    for command in [
        "find . -name '*.md' -exec touch X {} +",
        "git -c core.pager=cat log",
        "sed -i s/a/b/ notes.md",
        "xargs rm",
        "env FOO=1 make",
        "sudo apt update",
        "python3 -c 'import this'",
        "perl -e 1",
        "tar xf a.tar --to-command=cat",
    ] {
        let rule = approval_prefix(command).expect(command);
        assert_eq!(
            shell_words::split(&rule).unwrap(),
            shell_words::split(command).unwrap(),
            "{command}"
        );
        assert!(argv_ok(&rule, command), "{command}");
    }
    assert_eq!(
        approval_prefix("find . -name '*.md'").as_deref(),
        Some("find .")
    );
}

#[test]
fn first_answer_wins() {
    let pending = PendingApprovals::new();
    let mut rx = pending.park("a");
    assert!(pending.is_pending("a"));
    assert!(pending.resolve("a", ReviewDecision::Denied, Origin::Discord("1".into())));
    assert!(!pending.resolve("a", ReviewDecision::ApprovedOnce, Origin::Tui));
    assert!(!pending.resolve("unknown", ReviewDecision::ApprovedOnce, Origin::Tui));
    assert_eq!(
        rx.try_recv().unwrap(),
        (ReviewDecision::Denied, Origin::Discord("1".into()))
    );
}

struct Harness {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
    events: EventReceiver,
    pending: PendingApprovals,
}

fn harness(approval: ExecApproval, allow: &[&str], origin: Origin) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let bus = EventBus::new();
    let events = bus.subscribe();
    let pending = PendingApprovals::new();
    let exec = ExecConfig {
        approval,
        allow: allow.iter().map(|s| s.to_string()).collect(),
        ..ExecConfig::default()
    };
    let file = dir.path().join(".egirl/approvals.toml");
    let approver = Approver::new(bus, pending.clone(), exec, file, Duration::from_millis(50));
    let mut ctx = test_context(dir.path(), approval);
    ctx.approver = Arc::new(approver);
    ctx.origin = origin;
    Harness {
        _dir: dir,
        ctx,
        events,
        pending,
    }
}

/// Waits for the request event, answers it, and returns the check's verdict.
async fn answer(
    h: &mut Harness,
    command: &str,
    decision: ReviewDecision,
) -> Result<Granted, Refusal> {
    let ctx = h.ctx.clone();
    let command = command.to_string();
    let check = tokio::spawn(async move { ctx.approver.check_exec(&command, &ctx).await });
    let Some(Event {
        kind: EventKind::ApprovalRequest(ApprovalRequest { id, tool, .. }),
        ..
    }) = h.events.recv().await
    else {
        panic!("expected an approval request");
    };
    assert_eq!(tool, "exec");
    assert!(h.pending.resolve(&id, decision, Origin::Tui));
    let verdict = check.await.unwrap();
    let decided = h.events.recv().await.map(|e| e.kind);
    let expected = EventKind::ApprovalDecision(ApprovalDecision {
        id,
        decision,
        by: "tui".into(),
    });
    assert_eq!(decided, Some(expected));
    verdict
}

#[tokio::test]
async fn policies_without_asking() {
    let h = harness(ExecApproval::Full, &[], Origin::Tui);
    assert!(
        h.ctx
            .approver
            .check_exec("rm -rf x | y", &h.ctx)
            .await
            .is_ok()
    );
    let h = harness(ExecApproval::Deny, &["ls"], Origin::Tui);
    assert!(h.ctx.approver.check_exec("ls", &h.ctx).await.is_err());
    let h = harness(ExecApproval::Allowlist, &["git status"], Origin::Tui);
    assert!(
        h.ctx
            .approver
            .check_exec("git status -s", &h.ctx)
            .await
            .is_ok()
    );
    assert!(h.ctx.approver.check_exec("git push", &h.ctx).await.is_err());
    assert!(
        h.ctx
            .approver
            .check_exec("git status | sh", &h.ctx)
            .await
            .is_err()
    );
    let h = harness(ExecApproval::Ask, &["ls"], Origin::Tui);
    assert!(h.ctx.approver.check_exec("ls -la", &h.ctx).await.is_ok());
}

#[tokio::test]
async fn ask_resolved_by_a_decision() {
    let mut h = harness(ExecApproval::Ask, &["git status"], Origin::Tui);
    assert!(
        answer(&mut h, "git status | sh", ReviewDecision::ApprovedOnce)
            .await
            .is_ok()
    );
    let denied = answer(&mut h, "make", ReviewDecision::Denied).await;
    assert_eq!(denied, Err(Refusal::DeniedByUser));
}

#[tokio::test]
async fn session_scope_is_remembered_for_that_session_only() {
    let mut h = harness(ExecApproval::Ask, &[], Origin::Tui);
    assert!(
        answer(
            &mut h,
            "cargo test --lib",
            ReviewDecision::ApprovedForSession
        )
        .await
        .is_ok()
    );
    let verdict = h.ctx.approver.check_exec("cargo test -q", &h.ctx).await;
    assert_eq!(
        verdict.map(|granted| granted.to_string()),
        Ok("allowed by rule `cargo test`".to_string())
    );
    assert_eq!(
        h.ctx.approver.rules("test"),
        vec![("cargo test".to_string(), "session")]
    );
    assert!(h.ctx.approver.rules("other").is_empty());
    // Nothing was written to disk.
    assert!(!h.ctx.workspace.join(".egirl/approvals.toml").exists());
}

#[tokio::test]
async fn the_request_names_the_rule_and_a_widening_command_is_remembered_exactly() {
    let mut h = harness(ExecApproval::Ask, &[], Origin::Tui);
    let ctx = h.ctx.clone();
    let check = tokio::spawn(async move {
        ctx.approver
            .check_exec("find . -name x -delete", &ctx)
            .await
    });
    let Some(Event {
        kind: EventKind::ApprovalRequest(ApprovalRequest { id, rule, .. }),
        ..
    }) = h.events.recv().await
    else {
        panic!("expected an approval request");
    };
    assert_eq!(rule.as_deref(), Some("find . -name x -delete"));
    assert!(
        h.pending
            .resolve(&id, ReviewDecision::ApprovedForSession, Origin::Tui)
    );
    assert!(check.await.unwrap().is_ok());
    assert_eq!(
        h.ctx.approver.rules("test"),
        vec![("find . -name x -delete".to_string(), "session")]
    );
    // `find . -name x` is not covered by that rule: it is asked about.
    let ctx = h.ctx.clone();
    let asked = tokio::spawn(async move { ctx.approver.check_exec("find . -name x", &ctx).await });
    let _decision = h.events.recv().await;
    let request = h.events.recv().await.map(|e| e.kind);
    assert!(
        matches!(request, Some(EventKind::ApprovalRequest(ApprovalRequest { ref rule, .. })) if rule.as_deref() == Some("find .")),
        "{request:?}"
    );
    asked.abort();
}

#[tokio::test]
async fn always_scope_is_saved_and_reloaded() {
    let mut h = harness(ExecApproval::Ask, &[], Origin::Tui);
    let file = h.ctx.workspace.join(".egirl/approvals.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "allow = [\"ls\"]\n").unwrap();
    assert!(
        answer(&mut h, "git status", ReviewDecision::ApprovedAlways)
            .await
            .is_ok()
    );
    assert_eq!(read_rules_file(&file).unwrap(), vec!["ls", "git status"]);

    let fresh = Approver::new(
        EventBus::new(),
        PendingApprovals::new(),
        h.ctx.exec.clone(),
        file,
        Duration::ZERO,
    );
    let verdict = fresh.check_exec("git status -s", &h.ctx).await;
    assert_eq!(
        verdict.map(|granted| granted.to_string()),
        Ok("allowed by rule `git status`".to_string())
    );
}

#[tokio::test]
async fn unattended_requests_time_out_as_denied() {
    let mut h = harness(ExecApproval::Ask, &[], Origin::Cron("nightly".into()));
    let verdict = h.ctx.approver.check_exec("make", &h.ctx).await;
    assert!(verdict.is_err_and(|e| e.to_string().contains("no one approved within 50ms")));
    let request = h.events.recv().await.unwrap();
    let EventKind::ApprovalRequest(ApprovalRequest { id, .. }) = request.kind else {
        panic!("{request:?}")
    };
    let decision = h.events.recv().await.unwrap().kind;
    assert!(
        matches!(decision, EventKind::ApprovalDecision(ApprovalDecision { ref by, .. }) if by == "timeout"),
        "{decision:?}"
    );
    assert!(
        !h.pending
            .resolve(&id, ReviewDecision::ApprovedOnce, Origin::Tui)
    );
}

#[tokio::test]
async fn cancel_denies_as_interrupted() {
    let mut h = harness(ExecApproval::Ask, &[], Origin::Tui);
    let ctx = h.ctx.clone();
    let check = tokio::spawn(async move { ctx.approver.check_exec("make", &ctx).await });
    let request = h.events.recv().await.unwrap();
    assert!(matches!(request.kind, EventKind::ApprovalRequest(_)));
    h.ctx.cancel.cancel();
    assert_eq!(check.await.unwrap(), Err(Refusal::Interrupted));
    let decision = h.events.recv().await.unwrap().kind;
    assert!(
        matches!(decision, EventKind::ApprovalDecision(ApprovalDecision { ref by, .. }) if by == "interrupt"),
        "{decision:?}"
    );
}
