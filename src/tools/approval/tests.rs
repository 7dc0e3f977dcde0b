//! Tests of the exec approval policy, rules and parked requests.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::bus::EventReceiver;
use crate::config::ExecApproval;
use crate::protocol::Event;
use crate::protocol::{ApprovalDecision, ApprovalRequest};
use crate::protocol::{Origin, ReviewDecision};

/// Whether a remembered rule (approvals file, session) covers `command`.
fn argv_ok(rule: &str, command: &str) -> bool {
    rule_covers(rule, command, RuleOrigin::Saved)
}

/// Whether a `[tools.exec] allow` rule covers `command`.
fn config_ok(rule: &str, command: &str) -> bool {
    rule_covers(rule, command, RuleOrigin::Config)
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
        approval_prefix("sed -n 1,5p notes.md").as_deref(),
        Some("sed -n 1,5p")
    );
    assert_eq!(approval_prefix("ls").as_deref(), Some("ls"));
    assert_eq!(approval_prefix("ls -la").as_deref(), Some("ls -la"));
    // Outside the table of read-only commands: the exact argv.
    assert_eq!(
        approval_prefix("cargo test --lib").as_deref(),
        Some("cargo test --lib")
    );
    assert_eq!(
        approval_prefix("rm -rf build").as_deref(),
        Some("rm -rf build")
    );
    assert_eq!(
        approval_prefix("python 'my script.py' -v").as_deref(),
        Some("python 'my script.py' -v")
    );
    assert_eq!(approval_prefix("ls | wc"), None);
    assert_eq!(
        rule_preview("git status -s").as_deref(),
        Some(
            "`git status` and longer commands the read-only table accepts (shows the working tree's state)"
        )
    );
    assert_eq!(
        rule_preview("cargo test --lib").as_deref(),
        Some("exactly `cargo test --lib`")
    );
    assert_eq!(rule_preview("ls | wc"), None);
}

/// A rule `p` saved for an innocent command once covered a longer one
/// that runs code: getopt abbreviations (`--expr`, `--compress`,
/// `--outp`), sed's own `e` command, `git grep -O`, `git log --output`.
#[test]
fn saved_rules_widen_only_to_what_the_table_accepts() {
    let table = [
        ("sed -n 1,5p", "sed -n 1,5p other.md", true),
        (
            "sed -n 1,5p",
            "sed -n 1,5p --expr=1e'touch pwned' notes.md",
            false,
        ),
        ("sed -n", "sed -n '1e touch pwned' notes.md", false),
        ("sed -n", "sed -n 's/x/y/w out' notes.md", false),
        ("sed -n 1,5p", "sed -n 1,5p --in-pl notes.md", false),
        ("sort", "sort notes.md", true),
        ("sort", "sort --compress=sh notes.md", false),
        ("sort", "sort --outp=x notes.md", false),
        ("git grep", "git grep -n foo", true),
        ("git grep", "git grep -Ovim foo", false),
        ("git grep", "git grep --open-files-in=vim foo", false),
        ("git log", "git log --oneline", true),
        ("git log", "git log --output=x", false),
        ("git log", "git log --ext-diff -p", false),
        ("cargo test", "cargo test", true),
        ("cargo test", "cargo test --lib", false),
    ];
    for (rule, command, expected) in table {
        assert_eq!(
            argv_ok(rule, command),
            expected,
            "rule `{rule}` vs `{command}`"
        );
    }
}

/// `[tools.exec] allow` is the user's own: it widens to what the table
/// does not know, and within the table's grammar for what it knows.
#[test]
fn config_prefixes_widen_past_the_table_only_where_it_does_not_know() {
    let table = [
        ("cargo test", "cargo test --lib", true),
        ("python3", "python3 script.py", true),
        ("git", "git commit -m x", true),
        ("sudo", "sudo ls", true),
        ("git status", "git status -s", true),
        ("find .", "find . -exec touch X {} +", false),
        ("git", "git -c core.pager=sh log", false),
        ("git log", "git log --output=x", false),
        ("sed -n", "sed -n --expr=1e'touch pwned' f", false),
        ("sort", "sort --compress=sh f", false),
        ("cargo test", "cargo test; rm x", false),
        ("cargo test", "cargo test $(rm x)", false),
    ];
    for (rule, command, expected) in table {
        assert_eq!(
            config_ok(rule, command),
            expected,
            "rule `{rule}` vs `{command}`"
        );
    }
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
        // Not in the table: a remembered prefix covers only itself.
        ("python3", "python3 script.py", false),
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
        "cargo test --lib",
        "sed -n 1,5p --expr=1e'touch pwned' notes.md",
        "git log --output=x",
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
            "git log --oneline",
            ReviewDecision::ApprovedForSession
        )
        .await
        .is_ok()
    );
    let verdict = h.ctx.approver.check_exec("git log -5", &h.ctx).await;
    assert_eq!(
        verdict.map(|granted| granted.to_string()),
        Ok("allowed by rule `git log`".to_string())
    );
    assert_eq!(
        h.ctx.approver.rules("test"),
        vec![("git log".to_string(), "session")]
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
