//! `/approvals`, `egirl approvals list|revoke` (see tests/daily/mod.rs).

use serde_json::{Value, json};

use crate::support::cli::Cli;
use crate::support::fake_llama::{FakeLlama, Reply};
use crate::tui::pty::{ARMED, Pty};

const COMMAND: &str = "echo approvals-daily";

fn exec(command: &str) -> Reply {
    Reply::tool_calls(&[("exec", &json!({ "command": command }).to_string())])
}

/// The approvals file of a PTY run's workspace.
fn approvals_file(dir: &std::path::Path) -> std::path::PathBuf {
    dir.join("ws/.egirl/approvals.toml")
}

/// An exec approved "always" and a host "for the session" show in
/// `/approvals` under their kinds; `d` revokes the exec rule: the file no
/// longer holds it and the same command asks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_lists_each_kind_and_d_revokes_one() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        exec(COMMAND),
        Reply::text("ran it once"),
        Reply::tool_calls(&[(
            "web_fetch",
            &json!({ "url": "http://localhost:1/page" }).to_string(),
        )]),
        Reply::text("fetched or not"),
        exec(COMMAND),
        Reply::text("asked again"),
    ]);
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n[tools.web]\nallow_private = true\n",
        dir.path().join("logs").display(),
        fake.url()
    );
    std::fs::write(dir.path().join("egirl.toml"), config).expect("config");

    let mut pty = Pty::spawn(dir.path());
    pty.wait_for("Type a message").await;
    pty.send("run it\r");
    pty.wait_for("Approve exec?").await;
    pty.wait_for(ARMED).await;
    // `p` then Enter: permanently.
    pty.send("p");
    pty.send("\r");
    pty.wait_for("ran it once").await;
    let file = std::fs::read_to_string(approvals_file(dir.path())).expect("approvals file");
    assert!(file.contains(COMMAND), "{file}");

    pty.send("fetch it\r");
    pty.wait_for("Approve web_fetch?").await;
    pty.wait_for(ARMED).await;
    pty.send("a");
    pty.wait_for("fetched or not").await;

    pty.send("/approvals\r");
    pty.wait_for("Approvals · d revokes").await;
    let screen = pty.contents();
    for shown in [
        "hosts (web_fetch)",
        "localhost",
        COMMAND,
        "permanent",
        "session",
        "added",
    ] {
        assert!(screen.contains(shown), "`{shown}` missing:\n{screen}");
    }
    assert!(
        screen.contains("exec prefixes") || screen.contains("exact commands"),
        "{screen}"
    );
    // The exec group comes first: its rule is selected.
    pty.send("d");
    pty.wait_for(&format!("revoked `{COMMAND}`")).await;
    let file = std::fs::read_to_string(approvals_file(dir.path())).expect("approvals file");
    assert!(!file.contains(COMMAND), "{file}");
    pty.send("\x1b");
    // Typed right after, `a` would read as Alt+a: wait for the overlay to close.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while pty.contents().contains("Approvals · d revokes") {
        assert!(std::time::Instant::now() < deadline, "{}", pty.contents());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    pty.send("again\r");
    pty.wait_for("Approve exec?").await;
    pty.wait_for(ARMED).await;
    pty.send("n");
    pty.wait_for("asked again").await;
    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));
}

/// `egirl approvals list --json` on a planted file (one from before dates
/// were kept, with a comment) and `egirl approvals revoke ID`.
#[tokio::test]
async fn the_shell_lists_and_revokes_permanent_rules() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[tools.exec]\nallow = [\"make check\"]\n");
    let egirl_dir = cli.workspace().join(".egirl");
    std::fs::create_dir_all(&egirl_dir).expect("mkdir");
    let planted = "# mine: keep me\nallow = [\"git status\", \"cargo test --lib\"]\nhosts = [\"docs.rs\"]\nmcp = [\"mcp__fs__write_file\"]\n\n[added.hosts]\n\"docs.rs\" = \"2026-01-02T03:04:05Z\"\n";
    std::fs::write(egirl_dir.join("approvals.toml"), planted).expect("plant");

    let out = cli.run(&["approvals", "list", "--json"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listing: Value = serde_json::from_slice(&out.stdout).expect("json");
    let rules = listing["rules"].as_array().expect("rules");
    let find = |rule: &str| -> &Value {
        rules
            .iter()
            .find(|r| r["rule"] == rule)
            .unwrap_or_else(|| panic!("{rule} missing: {listing}"))
    };
    assert_eq!(find("make check")["scope"], "config");
    assert_eq!(find("git status")["kind"], "exec_prefix");
    assert_eq!(find("cargo test --lib")["kind"], "exec_argv");
    assert_eq!(find("docs.rs")["kind"], "host");
    assert_eq!(find("docs.rs")["added"], "2026-01-02T03:04:05Z");
    assert_eq!(find("mcp__fs__write_file")["kind"], "mcp");
    assert!(find("git status").get("added").is_none());
    assert_eq!(find("git status")["scope"], "permanent");
    assert!(
        listing["note"]
            .as_str()
            .unwrap_or("")
            .contains("session rules"),
        "{listing}"
    );

    let text = cli.run(&["approvals", "list"]).await;
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(text.contains("before dates were kept"), "{text}");
    assert!(text.contains("exact commands:"), "{text}");

    let id = find("git status")["id"].as_str().expect("id").to_string();
    let out = cli.run(&["approvals", "revoke", &id]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = std::fs::read_to_string(egirl_dir.join("approvals.toml")).expect("file");
    assert!(!file.contains("git status"), "{file}");
    assert!(file.starts_with("# mine: keep me\n"), "{file}");
    for kept in ["cargo test --lib", "docs.rs", "mcp__fs__write_file"] {
        assert!(file.contains(kept), "{kept} lost:\n{file}");
    }

    // Again: gone. A config rule: not revocable here.
    let again = cli.run(&["approvals", "revoke", &id]).await;
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("no approval rule has the id"));
    let config_id = find("make check")["id"].as_str().expect("id").to_string();
    let config = cli.run(&["approvals", "revoke", &config_id]).await;
    assert_eq!(config.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&config.stderr).contains("egirl.toml"));
}

/// A broken approvals file is named in one line, with where it breaks
/// (toml's own text quoted the source and a caret over several lines).
#[tokio::test]
async fn a_broken_approvals_file_is_one_line_with_its_position() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let egirl_dir = cli.workspace().join(".egirl");
    std::fs::create_dir_all(&egirl_dir).expect("mkdir");
    std::fs::write(
        egirl_dir.join("approvals.toml"),
        "allow = [\"ls\"]\n[added\n",
    )
    .expect("plant");
    let out = cli.run(&["approvals", "list"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.contains("created workspace"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("approvals.toml is not valid (line 2, column"),
        "{err}"
    );
}

/// No command in the help answers "not yet": the help overlay, as drawn,
/// lists `/approvals` and says "not yet" nowhere; nor do the docs.
#[test]
fn no_not_yet_is_left_in_the_help() {
    use egirl::surfaces::tui::{App, AppOptions, Overlay, Theme, commands::COMMANDS, render};
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    let mut app = App::new(AppOptions {
        session: "s".into(),
        theme: Theme::default(),
        theme_dirs: Vec::new(),
        model: "m".into(),
        endpoint: "http://127.0.0.1:1".into(),
        context_length: 1024,
    });
    app.overlay = Some(Overlay::Help);
    let area = Rect::new(0, 0, 160, 120);
    let mut buf = Buffer::empty(area);
    render(&app, area, &mut buf);
    let shown: String = (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                + "\n"
        })
        .collect();
    assert!(shown.contains("/approvals"), "{shown}");
    assert!(!shown.to_lowercase().contains("not yet"), "{shown}");
    for command in COMMANDS {
        assert!(
            !command.help.to_lowercase().contains("not yet"),
            "{}: {}",
            command.name,
            command.help
        );
    }
    for doc in ["docs/tui.md", "README.md"] {
        let page =
            std::fs::read_to_string(format!("{}/{doc}", env!("CARGO_MANIFEST_DIR"))).expect("doc");
        assert!(!page.to_lowercase().contains("not yet"), "{doc}");
    }
}

/// Attached to `egirl serve`: `list_approvals` and `revoke_approval` go
/// through the gateway (its `check_op` lets a client send them) and are
/// answered by that core's events.
#[tokio::test]
async fn the_gateway_answers_list_and_revoke() {
    use crate::gateway::daemon::{Daemon, Raw};
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama, &[]).await;
    let file = daemon.dir.path().join("ws/.egirl/approvals.toml");
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    std::fs::write(&file, "allow = [\"git status\", \"ls\"]\n").expect("plant");
    let (mut raw, _hello) = Raw::hello(&daemon.socket, None).await;

    let command = |id: &str, command: Value| {
        json!({"frame": "op", "id": id, "op": {
            "type": "command", "session": "cli-approvals", "command": command}})
    };
    raw.send(&command("ap-1", json!({"name": "list_approvals"})))
        .await;
    let listed = answer(&mut raw, "ap-1").await;
    assert_eq!(listed["type"], "approval_rules", "{listed}");
    let rules = listed["rules"].as_array().expect("rules");
    let git = rules
        .iter()
        .find(|r| r["rule"] == "git status")
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(git["scope"], "permanent");

    let id = git["id"].clone();
    raw.send(&command(
        "ap-2",
        json!({"name": "revoke_approval", "id": id}),
    ))
    .await;
    let revoked = answer(&mut raw, "ap-2").await;
    assert_eq!(revoked["type"], "approval_revoked", "{revoked}");
    assert_eq!(revoked["rule"], "git status");
    let text = std::fs::read_to_string(&file).expect("file");
    assert!(
        !text.contains("git status") && text.contains("\"ls\""),
        "{text}"
    );

    raw.send(&command(
        "ap-3",
        json!({"name": "revoke_approval", "id": "00000000"}),
    ))
    .await;
    let refused = answer(&mut raw, "ap-3").await;
    assert_eq!(refused["type"], "error", "{refused}");
    let (status, lines, _dir) = daemon.stop().await;
    assert!(status.success(), "{lines:?}");
}

/// The first event answering submission `id`.
async fn answer(raw: &mut crate::gateway::daemon::Raw, id: &str) -> Value {
    loop {
        let frame = raw.recv().await;
        if frame["frame"] == "event" && frame["event"]["submission"] == id {
            return frame["event"].clone();
        }
        assert_ne!(frame["frame"], "rejected", "{frame}");
    }
}
