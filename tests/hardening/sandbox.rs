//! Hardening: the OS sandbox every `exec` runs in, through the real binary
//! (headless, `--approve-exec`, a scripted model). Where this kernel cannot
//! confine writes (no Landlock, or an ABI before 3) the write tests print
//! why and return; the network tests need seccomp filters.

use std::path::Path;

use serde_json::Value;

use crate::support::cli::{Cli, events, of_type, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

pub(super) fn landlock() -> bool {
    let abi = egirl::tools::sandbox::probe::support().landlock_abi;
    if abi < egirl::tools::sandbox::probe::LANDLOCK_FULL_ABI {
        eprintln!("skipped: this kernel's Landlock (ABI {abi}) cannot confine writes");
        return false;
    }
    true
}

fn seccomp() -> bool {
    let ok = egirl::tools::sandbox::probe::support().seccomp;
    if !ok {
        eprintln!("skipped: this kernel has no seccomp filters");
    }
    ok
}

pub(crate) fn mount_namespace() -> bool {
    match &egirl::tools::sandbox::probe::support().namespace {
        Ok(_) => true,
        Err(why) => {
            eprintln!("skipped: no private mount namespace ({why})");
            false
        }
    }
}

/// Runs `commands` one per model turn step, approved, and returns the
/// events; the model ends with "done".
pub(super) async fn approved(cli: &Cli, fake: &FakeLlama, commands: &[&str]) -> Vec<Value> {
    let mut replies: Vec<Reply> = commands
        .iter()
        .map(|c| {
            let args = serde_json::json!({ "command": c }).to_string();
            Reply::tool_calls(&[("exec", args.as_str())])
        })
        .collect();
    replies.push(Reply::text("done"));
    fake.push_replies(replies);
    let out = cli.run(&["-m", "go", "--json", "--approve-exec"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    events(&out)
}

pub(super) fn results(events: &[Value]) -> Vec<(bool, String)> {
    of_type(events, "tool_result")
        .into_iter()
        .map(|e| {
            (
                e["success"].as_bool().unwrap_or(false),
                e["output"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn an_approved_command_cannot_create_a_file_outside_the_workspace() {
    if !landlock() {
        return;
    }
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("escaped.txt");
    let ev = approved(
        &cli,
        &fake,
        &[&format!("touch {}", outside.display()), "touch inside.txt"],
    )
    .await;
    let results = results(&ev);
    assert!(!results[0].0, "{:?}", results[0]);
    assert!(!outside.exists(), "the sandbox let a write out");
    assert!(results[1].0, "{:?}", results[1]);
    assert!(cli.workspace().join("inside.txt").exists());
    // Both the call and its result say what it ran in.
    let call = ev.iter().find(|e| e["type"] == "tool_call").unwrap();
    assert_eq!(call["sandbox"], "workspace-write, no network", "{call}");
    assert!(
        results[1]
            .1
            .contains("[sandbox: workspace-write, no network]"),
        "{}",
        results[1].1
    );
}

#[tokio::test]
async fn git_config_and_the_config_file_in_the_workspace_stay_read_only() {
    if !landlock() || !mount_namespace() {
        return;
    }
    let fake = FakeLlama::start().await;
    let cli = Cli::holding_its_config(&fake, "");
    let ws = cli.dir.path();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    let config_before = std::fs::read_to_string(cli.config()).unwrap();
    let ev = approved(
        &cli,
        &fake,
        &[
            "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config",
            "echo '[tools.exec]' >> egirl.toml",
            "rm -f egirl.toml",
            "touch .git/hooks-planted",
            "echo fine > notes.md",
        ],
    )
    .await;
    let results = results(&ev);
    for r in &results[..4] {
        assert!(!r.0, "{r:?}");
    }
    assert!(results[4].0, "{:?}", results[4]);
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(
        std::fs::read_to_string(cli.config()).unwrap(),
        config_before
    );
    assert!(!ws.join(".git/hooks-planted").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.md")).unwrap(),
        "fine\n"
    );
}

/// Connects to a listener of ours with bash's /dev/tcp.
fn connect_command(port: u16) -> String {
    format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
}

#[tokio::test]
async fn no_network_unless_network_is_true() {
    if !seccomp() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();

    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ev = approved(&cli, &fake, &[&connect_command(port)]).await;
    let r = &results(&ev)[0];
    assert!(!r.0 && !r.1.contains("connected"), "{r:?}");
    assert!(listener.accept().is_err(), "a connection got through");

    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[tools.exec]\nnetwork = true\n");
    let ev = approved(&cli, &fake, &[&connect_command(port)]).await;
    let r = &results(&ev)[0];
    assert!(r.0 && r.1.contains("connected"), "{r:?}");
    assert!(r.1.contains("[sandbox: workspace-write, network]"), "{r:?}");
}

#[tokio::test]
async fn read_only_cannot_write_the_workspace_but_its_tmp() {
    if !landlock() {
        return;
    }
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[tools.exec]\nsandbox = \"read-only\"\n");
    let ev = approved(
        &cli,
        &fake,
        &[
            "touch made.txt",
            "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"",
        ],
    )
    .await;
    let results = results(&ev);
    assert!(!results[0].0, "{:?}", results[0]);
    assert!(!cli.workspace().join("made.txt").exists());
    assert!(results[1].0, "{:?}", results[1]);
}

#[tokio::test]
async fn the_private_tmp_is_fresh_per_command_and_removed() {
    if !landlock() {
        return;
    }
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ev = approved(
        &cli,
        &fake,
        &[
            "echo one > \"$TMPDIR/file\" && echo \"$TMPDIR\"",
            "test ! -e \"$TMPDIR/file\" && echo \"$TMPDIR\"",
        ],
    )
    .await;
    let results = results(&ev);
    let tmp = |r: &(bool, String)| {
        assert!(r.0, "{r:?}");
        r.1.lines().last().unwrap().to_string()
    };
    let (first, second) = (tmp(&results[0]), tmp(&results[1]));
    assert_ne!(first, second);
    for dir in [first, second] {
        assert!(dir.contains("egirl-exec-"), "{dir}");
        assert!(!Path::new(&dir).exists(), "{dir} outlived its command");
    }
}

#[tokio::test]
async fn sandbox_off_restores_the_unconfined_behaviour() {
    let fake = FakeLlama::start().await;
    let cli = Cli::holding_its_config(&fake, "[tools.exec]\nsandbox = \"off\"\n");
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("written.txt");
    std::fs::create_dir_all(cli.dir.path().join(".git")).unwrap();
    let ev = approved(
        &cli,
        &fake,
        &[&format!(
            "touch {} && echo x > .git/config && echo \"tmp=${{TMPDIR:-unset}}\"",
            outside.display()
        )],
    )
    .await;
    let r = &results(&ev)[0];
    assert!(r.0, "{r:?}");
    assert!(outside.exists());
    assert!(cli.dir.path().join(".git/config").exists());
    assert!(!r.1.contains("[sandbox:"), "{r:?}");
    assert!(!r.1.contains("egirl-exec-"), "{r:?}");
}

#[tokio::test]
async fn headless_never_runs_a_command_outside_the_sandbox() {
    if !landlock() {
        return;
    }
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("escaped.txt");
    let ev = approved(&cli, &fake, &[&format!("touch {}", outside.display())]).await;
    let requests: Vec<&Value> = ev
        .iter()
        .filter(|e| e["type"] == "approval_request")
        .collect();
    // One request, for the sandboxed run, which says where it runs; no
    // escalation is raised for a headless run, even with --approve-exec.
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["sandbox"], "workspace-write, no network");
    assert!(requests[0].get("escalation").is_none());
    let r = &results(&ev)[0];
    assert!(!r.0, "{r:?}");
    assert!(!outside.exists());
}

/// `approval = "full"` and allow rules skip the question, not the sandbox.
#[tokio::test]
async fn full_approval_and_rules_still_run_sandboxed() {
    if !landlock() {
        return;
    }
    let elsewhere = tempfile::tempdir().unwrap();
    for (extra, name) in [
        ("[tools.exec]\napproval = \"full\"\n", "full.txt"),
        ("[tools.exec]\nallow = [\"touch\"]\n", "rule.txt"),
    ] {
        let fake = FakeLlama::start().await;
        let cli = Cli::new(&fake, extra);
        let outside = elsewhere.path().join(name);
        let args = serde_json::json!({ "command": format!("touch {}", outside.display()) });
        fake.push_replies([
            Reply::tool_calls(&[("exec", args.to_string().as_str())]),
            Reply::text("done"),
        ]);
        let out = cli.run(&["-m", "go", "--json"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        let ev = events(&out);
        assert!(
            !ev.iter().any(|e| e["type"] == "approval_request"),
            "{extra}: nothing should ask"
        );
        let r = &results(&ev)[0];
        assert!(!r.0, "{extra}: {r:?}");
        assert!(!outside.exists(), "{extra}: the write got out");
    }
}
