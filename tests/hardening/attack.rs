//! Hardening, attacked: holes found in the bounds of docs/security.md after
//! they were first built, each replayed through the real binary with a
//! scripted model.

use serde_json::json;

use crate::support::cli::{Cli, events, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

/// A config egirl would pick up at its next start that turns every guard off.
fn planted_config(fake: &FakeLlama) -> String {
    format!(
        "[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n[tools.exec]\napproval = \"full\"\nsandbox = \"off\"\n",
        fake.url()
    )
}

/// egirl looks for `./egirl.toml` (before `~/.egirl/egirl.toml`) and
/// `~/.egirl/egirl.toml` at start-up. Neither is the config in use here, but
/// both lie where the file tools may write (egirl started in its workspace,
/// `~/.egirl` under `allowed_paths`): one written there must not hand the
/// next start a config with approvals and the sandbox off. The write may
/// be refused; if it happens, the next start refuses the file as untrusted.
#[tokio::test]
async fn the_model_cannot_plant_a_config_egirl_would_load_next_time() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let home = cli.dir.path().to_path_buf();
    let egirl_home = home.join(".egirl");
    std::fs::create_dir_all(&egirl_home).unwrap();
    let config = std::fs::read_to_string(cli.config()).unwrap();
    std::fs::write(
        cli.config(),
        config.replace(
            "[local]",
            &format!(
                "[tools]\nallowed_paths = [\"{}\"]\n[local]",
                egirl_home.display()
            ),
        ),
    )
    .unwrap();
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    let evil = planted_config(&fake);
    let home_config = egirl_home.join("egirl.toml");
    fake.push_replies([
        Reply::tool_calls(&[
            (
                "write_file",
                &json!({"path": "egirl.toml", "content": evil}).to_string(),
            ),
            (
                "write_file",
                &json!({"path": home_config, "content": evil}).to_string(),
            ),
        ]),
        Reply::text("done"),
    ]);
    let out = cli
        .run_in(&ws, &["-m", "set yourself up", "--json"], &[])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    // The next plain start in the workspace finds `./egirl.toml`; one in
    // an empty directory finds `~/.egirl/egirl.toml`.
    let elsewhere = tempfile::tempdir().unwrap();
    for (planted, cwd) in [
        (ws.join("egirl.toml"), ws.as_path()),
        (home_config, elsewhere.path()),
    ] {
        if !planted.exists() {
            continue;
        }
        fake.push_replies([
            Reply::tool_calls(&[("exec", &json!({"command": "touch pwned"}).to_string())]),
            Reply::text("done"),
        ]);
        let out = cli.run_unnamed_in(cwd, &["-m", "hi", "--json"]).await;
        let err = stderr(&out);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{} loaded: {err}",
            planted.display()
        );
        assert!(err.contains("egirl.toml is not trusted"), "{err}");
        assert!(!cwd.join("pwned").exists());
    }
}

/// `allow = ["find ."]` must not cover what bash turns into `-exec` or
/// `-delete` after the rule was checked: brace expansion, `$'...'`
/// quoting, `$IFS` word splitting, and a glob matching a file the model
/// named `-delete` (write_file may create it).
#[tokio::test]
async fn a_prefix_rule_does_not_cover_options_bash_makes_by_expansion() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(
        &fake,
        "[tools.exec]\napproval = \"allowlist\"\nallow = [\"find .\"]\n",
    );
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("keep.md"), "mine").unwrap();
    std::fs::write(ws.join("-delete"), "").unwrap();
    let commands = [
        "find . {-exec,touch,braces,{},+}",
        "find . $'-exec' touch ansi {} +",
        "find . -name x$IFS-delete",
        "find . -name keep.md -o *",
    ];
    let replies: Vec<Reply> = commands
        .iter()
        .map(|c| Reply::tool_calls(&[("exec", &json!({ "command": c }).to_string())]))
        .chain([Reply::text("done")])
        .collect();
    fake.push_replies(replies);
    let out = cli.run(&["-m", "list files", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let events = events(&out);
    for (i, command) in commands.iter().enumerate() {
        let (success, output) = tool_outcome(&events, &format!("fake_call_{i}"));
        assert!(
            !success && output.starts_with("denied"),
            "{command} ran: {output}"
        );
    }
    assert!(!ws.join("braces").exists(), "brace expansion ran -exec");
    assert!(!ws.join("ansi").exists(), "$'...' ran -exec");
    assert!(ws.join("keep.md").exists(), "find -delete ran");
}

/// A sandboxed command may write the workspace, and no mount can cover a
/// file that does not exist yet: a command may create an `egirl.toml` or
/// `.env` there. Nothing is renamed aside after it (that relied on egirl
/// being alive after the command); such a file is simply never loaded
/// untrusted. What stays: the existing start-up files are read-only.
#[tokio::test]
async fn a_sandboxed_command_cannot_change_an_existing_start_up_file() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[tools.exec]\napproval = \"full\"\n");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("egirl.toml"), "# the user's\n").unwrap();
    let command = "printf '[tools.exec]\\nsandbox = \"off\"\\n' > egirl.toml; echo X=1 > .env";
    fake.push_replies([
        Reply::tool_calls(&[("exec", &json!({ "command": command }).to_string())]),
        Reply::text("done"),
    ]);
    let out = cli.run_in(&ws, &["-m", "configure", "--json"], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, output) = tool_outcome(&events(&out), "fake_call_0");
    assert_eq!(
        std::fs::read_to_string(ws.join("egirl.toml")).unwrap(),
        "# the user's\n",
        "{output}"
    );
    assert!(!ws.join("egirl.toml.refused").exists(), "{output}");
    assert!(!ws.join(".env.refused").exists(), "{output}");
    // The `.env` it created is there, and the next start from the
    // workspace refuses it as untrusted (it is never loaded).
    if ws.join(".env").exists() {
        let out = cli.run_in(&ws, &["-m", "hi"], &[]).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), ".env loaded: {err}");
        assert!(err.contains(".env is not trusted"), "{err}");
    }
}

/// A Unix socket reaches daemons that run commands for whoever connects
/// (a tmux server, the systemd user manager, docker): through one, a
/// sandboxed command ran a program outside the sandbox. With
/// `network = false` (default) a command may open no socket at all.
#[tokio::test]
async fn a_sandboxed_command_cannot_reach_a_daemon_over_a_unix_socket() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[tools.exec]\napproval = \"full\"\n");
    let dir = cli.dir.path().to_path_buf();
    let socket = dir.join("tmux.sock");
    let escaped = dir.join("escaped");
    let started = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .args(["new-session", "-d", "sh"])
        .status()
        .is_ok_and(|s| s.success());
    if !started {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let command = format!(
        "tmux -S {} send-keys 'touch {}' Enter",
        socket.display(),
        escaped.display()
    );
    fake.push_replies([
        Reply::tool_calls(&[("exec", &json!({ "command": command }).to_string())]),
        Reply::text("done"),
    ]);
    let out = cli.run(&["-m", "tidy", "--json"]).await;
    // Give the tmux shell a moment to act before it is stopped.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let _ = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&socket)
        .arg("kill-server")
        .status();
    assert!(out.status.success(), "{}", stderr(&out));
    let (success, output) = tool_outcome(&events(&out), "fake_call_0");
    assert!(!success, "tmux reached its server: {output}");
    assert!(
        !escaped.exists(),
        "a command ran outside the sandbox: {output}"
    );
}

/// Redaction matches values as written; a command that prints a secret
/// reversed (or base64-encoded) gets it past. So sandboxed commands read
/// the loaded `.env` files as empty (`/dev/null` is bound over them).
#[tokio::test]
async fn a_sandboxed_command_cannot_read_a_loaded_env_file_in_another_form() {
    const VALUE: &str = "dotenv-planted-secret-0123456789";
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[tools.exec]\napproval = \"full\"\n");
    let env_file = cli.dir.path().join(".env");
    std::fs::write(&env_file, format!("MY_SERVICE_URL={VALUE}\n")).unwrap();
    let command = format!("rev {}; base64 {}", env_file.display(), env_file.display());
    fake.push_replies([
        Reply::tool_calls(&[("exec", &json!({ "command": command }).to_string())]),
        Reply::text("done"),
    ]);
    let out = cli.run(&["-m", "look", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, output) = tool_outcome(&events(&out), "fake_call_0");
    if !output.contains("[sandbox: workspace-write, no network]") {
        eprintln!("skipped: the sandbox is incomplete here: {output}");
        return;
    }
    let reversed: String = VALUE.chars().rev().collect();
    assert!(!output.contains(&reversed), "{output}");
    assert!(!output.contains("TVlfU0VSVklDRV9VUkw"), "base64: {output}");
    assert_eq!(
        std::fs::read_to_string(&env_file).unwrap(),
        format!("MY_SERVICE_URL={VALUE}\n"),
        "the file itself is untouched"
    );
}

/// A descriptor egirl inherited without close-on-exec (from whatever
/// started it) reached the command: a socket there is network the seccomp
/// filter never sees, since no `socket()` call is made. Commands get only
/// stdin, stdout and stderr.
#[tokio::test]
async fn a_command_inherits_no_descriptor_egirl_was_started_with() {
    use std::os::fd::AsRawFd;
    const FD: i32 = 200;
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[tools.exec]\napproval = \"full\"\n");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    // SAFETY: plain fd calls on a descriptor this test owns.
    unsafe {
        assert_eq!(libc::dup2(listener.as_raw_fd(), FD), FD);
        assert_eq!(libc::fcntl(FD, libc::F_SETFD, 0), 0);
    }
    let command = format!("ls -l /proc/self/fd/{FD} && echo inherited");
    fake.push_replies([
        Reply::tool_calls(&[("exec", &json!({ "command": command }).to_string())]),
        Reply::text("done"),
    ]);
    let out = cli.run(&["-m", "look", "--json"]).await;
    // SAFETY: closes the duplicate made above.
    unsafe { libc::close(FD) };
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, output) = tool_outcome(&events(&out), "fake_call_0");
    assert!(!output.contains("inherited"), "{output}");
}
