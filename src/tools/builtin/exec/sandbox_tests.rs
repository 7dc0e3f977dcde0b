//! The sandbox through the `exec` tool, in-process. The same cases run
//! against the real binary in tests/hardening/sandbox.rs.

use std::path::Path;

use serde_json::json;

use crate::config::ExecApproval;
use crate::config::{ExecConfig, ExecSandbox};
use crate::tools::ToolContext;
use crate::tools::approval::test_context;
use crate::tools::builtin::exec;
use crate::tools::sandbox::*;

/// None (and a printed reason) where this kernel cannot confine writes.
fn landlock() -> Option<()> {
    let abi = probe::support().landlock_abi;
    if abi < probe::LANDLOCK_FULL_ABI {
        eprintln!("skipped: Landlock ABI {abi} on this kernel");
        return None;
    }
    Some(())
}

/// A TUI context with no surface listening: a refused command is not
/// offered outside the sandbox (nobody could answer).
fn ctx(dir: &Path, mode: ExecSandbox) -> ToolContext {
    let mut ctx = test_context(dir, ExecApproval::Full);
    ctx.exec.sandbox = mode;
    ctx
}

async fn run(ctx: &ToolContext, command: &str) -> crate::tools::ToolOutput {
    exec::run(&json!({ "command": command }), ctx).await
}

#[tokio::test]
async fn workspace_write_confines_writes_to_the_workspace_and_its_tmp() {
    let Some(()) = landlock() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    let ctx = ctx(&ws, ExecSandbox::WorkspaceWrite);
    let outside = dir.path().join("outside.txt");

    let out = run(&ctx, &format!("touch {}", outside.display())).await;
    assert!(!out.success, "{}", out.output);
    assert!(!outside.exists());
    assert!(
        out.output.contains("[sandbox: workspace-write, no network"),
        "{}",
        out.output
    );

    let out = run(&ctx, "echo hi > inside.txt && cat inside.txt").await;
    assert!(out.success, "{}", out.output);
    assert_eq!(
        std::fs::read_to_string(ws.join("inside.txt")).unwrap(),
        "hi\n"
    );

    let out = run(&ctx, "echo x > .git/config").await;
    assert!(!out.success, "{}", out.output);
    assert!(!ws.join(".git/config").exists());

    let out = run(
        &ctx,
        "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo \"$TMPDIR\"",
    )
    .await;
    assert!(out.success, "{}", out.output);
    let tmp = out.output.lines().last().unwrap().to_string();
    assert!(tmp.contains("egirl-exec-"), "{}", out.output);
    assert!(
        !Path::new(&tmp).exists(),
        "the private tmp outlived the command"
    );

    let out = run(
        &ctx,
        "echo ok > /dev/null && echo fine > /dev/stdout && echo e > /dev/stderr",
    )
    .await;
    assert!(out.success, "{}", out.output);
    assert!(out.output.contains("fine"), "{}", out.output);
}

#[tokio::test]
async fn read_only_writes_nothing_but_its_tmp() {
    let Some(()) = landlock() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path(), ExecSandbox::ReadOnly);
    let out = run(&ctx, "touch made.txt").await;
    assert!(!out.success, "{}", out.output);
    assert!(!dir.path().join("made.txt").exists());
    let out = run(
        &ctx,
        "touch \"$TMPDIR/x\" && cat /etc/hostname >/dev/null; echo read",
    )
    .await;
    assert!(out.success, "{}", out.output);
}

#[tokio::test]
async fn off_runs_unconfined() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ctx = ctx(&ws, ExecSandbox::Off);
    let outside = dir.path().join("outside.txt");
    let out = run(
        &ctx,
        &format!("touch {} && echo \"${{TMPDIR:-unset}}\"", outside.display()),
    )
    .await;
    assert!(out.success, "{}", out.output);
    assert!(outside.exists());
    assert!(!out.output.contains("[sandbox:"), "{}", out.output);
}

#[tokio::test]
async fn sockets_other_than_unix_are_refused_without_network() {
    if !probe::support().seccomp {
        eprintln!("skipped: no seccomp filters on this kernel");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let mut ctx = ctx(dir.path(), ExecSandbox::WorkspaceWrite);
    let out = run(&ctx, &connect).await;
    assert!(!out.success, "{}", out.output);
    assert!(!out.output.contains("connected"), "{}", out.output);
    ctx.exec.network = true;
    let out = run(&ctx, &connect).await;
    assert!(out.success, "{}", out.output);
}

#[test]
fn describe_says_mode_and_network() {
    let mut exec = ExecConfig {
        sandbox: ExecSandbox::Off,
        ..ExecConfig::default()
    };
    assert_eq!(describe(&exec), "off (no sandbox)");
    exec.sandbox = ExecSandbox::ReadOnly;
    exec.network = true;
    assert!(describe(&exec).starts_with("read-only, network"));
}

/// A TUI context whose approval requests we can see and answer.
fn attended(dir: &Path) -> (ToolContext, crate::bus::EventReceiver) {
    use crate::tools::approval::{Approver, PendingApprovals};
    let bus = crate::bus::EventBus::new();
    let events = bus.subscribe();
    let mut ctx = test_context(dir, ExecApproval::Full);
    ctx.approver = std::sync::Arc::new(Approver::new(
        bus,
        PendingApprovals::new(),
        ctx.exec.clone(),
        dir.join(".egirl/approvals.toml"),
        std::time::Duration::from_secs(5),
    ));
    (ctx, events)
}

/// Answers the next approval request, which must be an escalation.
async fn answer_escalation(
    events: &mut crate::bus::EventReceiver,
    ctx: &ToolContext,
    decision: crate::protocol::ReviewDecision,
) {
    use crate::protocol::{ApprovalRequest, EventKind};
    loop {
        let event = events.recv().await.unwrap();
        if let EventKind::ApprovalRequest(ApprovalRequest {
            id,
            escalation,
            sandbox,
            ..
        }) = event.kind
        {
            let reason = escalation.expect("an escalation");
            assert!(reason.contains("outside.txt"), "{reason}");
            assert_eq!(sandbox.as_deref(), Some("workspace-write, no network"));
            ctx.approver
                .pending()
                .resolve(&id, decision, crate::protocol::Origin::Tui);
            return;
        }
    }
}

#[tokio::test]
async fn attended_refusal_asks_to_rerun_outside_and_only_o_approves() {
    use crate::protocol::ReviewDecision;
    let Some(()) = landlock() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let outside = dir.path().join("outside.txt");
    let command = format!("touch {}", outside.display());

    // Full approval and a plain "once" do not take it outside.
    for decision in [ReviewDecision::ApprovedOnce, ReviewDecision::Denied] {
        let (ctx, mut events) = attended(&ws);
        let (out, ()) = tokio::join!(
            run(&ctx, &command),
            answer_escalation(&mut events, &ctx, decision)
        );
        assert!(!out.success, "{}", out.output);
        assert!(
            out.output.contains("not re-run outside the sandbox"),
            "{}",
            out.output
        );
        assert!(!outside.exists());
    }

    let (ctx, mut events) = attended(&ws);
    let (out, ()) = tokio::join!(
        run(&ctx, &command),
        answer_escalation(&mut events, &ctx, ReviewDecision::ApprovedOutsideSandbox)
    );
    assert!(out.success, "{}", out.output);
    assert!(
        out.output.starts_with("[re-run outside the sandbox"),
        "{}",
        out.output
    );
    assert!(outside.exists());
    // Never remembered: nothing was saved as a rule.
    assert!(ctx.approver.rules("test").is_empty());
}

#[test]
fn missing_pieces_are_named() {
    let bare = probe::Support {
        landlock_abi: 0,
        seccomp: false,
        namespace: Err("user namespaces: Operation not permitted".into()),
    };
    let gaps = bare.missing(true);
    assert_eq!(gaps.len(), 3, "{gaps:?}");
    assert!(gaps[0].starts_with("no Landlock"), "{gaps:?}");
    assert!(gaps[1].starts_with("no seccomp"), "{gaps:?}");
    assert!(gaps[2].contains("Operation not permitted"), "{gaps:?}");
    // Every mode needs the namespaces (read-only too: the PID namespace)
    // and seccomp (device nodes, file handles), network or not.
    assert_eq!(bare.missing(false).len(), 3);
    let old = probe::Support {
        landlock_abi: 2,
        seccomp: true,
        namespace: Ok(mounts::Isolation {
            kind: mounts::NamespaceKind::User,
            read_only_elsewhere: true,
        }),
    };
    assert_eq!(
        old.missing(true),
        vec!["Landlock ABI 2 (truncating files is not confined)".to_string()]
    );
    // Root where user namespaces are off, on a kernel before mount_setattr.
    let rootish = probe::Support {
        landlock_abi: 5,
        seccomp: true,
        namespace: Ok(mounts::Isolation {
            kind: mounts::NamespaceKind::Privileged,
            read_only_elsewhere: false,
        }),
    };
    let gaps = rootish.missing(true);
    assert!(gaps[0].contains("capabilities are dropped"), "{gaps:?}");
    assert!(gaps[1].contains("cannot be changed at all"), "{gaps:?}");
}

/// egirl makes itself non-dumpable at start so that a command cannot read
/// its parent's start-up environment (`/proc/$PPID/environ`, secrets
/// included) even with the sandbox off or without Landlock (which already
/// keeps a confined command out of its parent's /proc); the sandbox (its
/// user-namespace path above all: the uid map) must still work.
#[tokio::test]
async fn a_non_dumpable_egirl_still_sandboxes_and_hides_its_environment() {
    let Some(()) = landlock() else { return };
    hide_own_environment();
    // SAFETY: reads this process's flag.
    assert_eq!(unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) }, 0);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".git")).unwrap();

    let sandboxed = ctx(&ws, ExecSandbox::WorkspaceWrite);
    let out = run(&sandboxed, "echo hi > inside.txt && echo x > .git/config").await;
    assert!(!out.success, "{}", out.output);
    assert!(ws.join("inside.txt").exists(), "{}", out.output);
    assert!(!ws.join(".git/config").exists());

    let unconfined = ctx(&ws, ExecSandbox::Off);
    let out = run(&unconfined, "head -c 1 /proc/$PPID/environ >/dev/null").await;
    // SAFETY: plain getter.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!("as root, a command is root: /proc/$PPID/environ stays readable");
    } else {
        assert!(!out.success, "{}", out.output);
    }
}

/// What a delegation adds (`prepare_with`): a writable dir outside the
/// workspace, more files read as empty, and the network whatever
/// `[tools.exec] network` says.
#[tokio::test]
async fn a_widening_adds_writable_dirs_and_hidden_files() {
    let Some(()) = landlock() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let state = dir.path().join("state");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(ws.join(".env.local"), "K=secret-value\n").unwrap();
    let ctx = ctx(&ws, ExecSandbox::WorkspaceWrite);
    let exec = ExecConfig {
        network: true,
        ..ctx.exec.clone()
    };
    let extra = Widening {
        writable: vec![state.clone()],
        hidden: vec![ws.join(".env.local")],
    };
    let prepared = prepare_with(&ctx, &exec, &extra).unwrap().unwrap();
    assert_eq!(prepared.label, "workspace-write, network");
    let script = format!(
        "echo s > {state}/s; echo o > {outside}; cat .env.local; echo end",
        state = state.display(),
        outside = dir.path().join("outside").display()
    );
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c").arg(script).current_dir(&ws);
    prepared.apply(&mut cmd);
    let out = cmd.output().await.unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "end\n");
    assert_eq!(std::fs::read_to_string(state.join("s")).unwrap(), "s\n");
    assert!(!dir.path().join("outside").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join(".env.local")).unwrap(),
        "K=secret-value\n"
    );
}
