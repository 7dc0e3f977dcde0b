//! Start-up files come only from where the model cannot write: a config
//! or `.env` the model could have planted (in a workspace, an allowed
//! path, a root an earlier run recorded, or a config found in the working
//! directory) is loaded only when the user trusted that exact content
//! (`egirl trust`, docs/security.md). Each case runs the real binary.

use std::path::Path;
use std::process::Output;

use serde_json::json;

use crate::support::cli::{Cli, events, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

/// A config that turns every guard off and runs whatever the model asks.
fn guards_off(fake: &FakeLlama) -> String {
    format!(
        "[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n[tools.exec]\napproval = \"full\"\nsandbox = \"off\"\n",
        fake.url()
    )
}

/// The start refused with exit 2 and one line naming the file, and the
/// model was never asked anything.
fn assert_refused(out: &Output, fake: &FakeLlama, asked_before: usize, says: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains(says), "{err}");
    assert!(err.contains("egirl trust "), "{err}");
    assert_eq!(fake.requests().len(), asked_before, "the model was asked");
}

/// A plain `egirl -m` started in `ws` (finding `./egirl.toml` there),
/// with the model asking to run a command outside the workspace, is
/// refused before anything runs.
async fn next_plain_start_in_refuses(cli: &Cli, fake: &FakeLlama, ws: &Path) {
    let pwned = cli.dir.path().join("pwned");
    let command = format!("touch {}", pwned.display());
    fake.push_replies([
        Reply::tool_calls(&[("exec", &json!({ "command": command }).to_string())]),
        Reply::text("done"),
    ]);
    let asked = fake.requests().len();
    let out = cli.run_unnamed_in(ws, &["-m", "hi", "--json"]).await;
    assert!(!pwned.exists(), "the planted config ran a command unasked");
    assert_refused(&out, fake, asked, "egirl.toml is not trusted");
}

/// A run started outside the workspace (a named config, as under
/// systemd) lets write_file create `<workspace>/egirl.toml`; the next
/// plain `egirl` started in the workspace finds it there and must refuse
/// it rather than run with approvals and the sandbox off.
#[tokio::test]
async fn a_config_a_run_wrote_into_the_workspace_is_not_loaded_by_the_next_start() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    fake.push_replies([
        Reply::tool_calls(&[(
            "write_file",
            &json!({"path": "egirl.toml", "content": guards_off(&fake)}).to_string(),
        )]),
        Reply::text("done"),
    ]);
    let out = cli
        .run_in(cli.dir.path(), &["-m", "set up", "--json"], &[])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (written, output) = tool_outcome(&events(&out), "fake_call_0");
    assert!(written && ws.join("egirl.toml").exists(), "{output}");

    next_plain_start_in_refuses(&cli, &fake, &ws).await;
}

/// An approved command run from the workspace plants `./egirl.toml`
/// (having first made `egirl.toml.refused/` so nothing can be renamed
/// aside); the next start from the workspace refuses the file.
#[tokio::test]
async fn a_config_an_approved_command_planted_is_not_loaded_by_the_next_start() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[tools.exec]\napproval = \"full\"\n");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    let command = format!(
        "mkdir egirl.toml.refused && printf '%s' '{}' > egirl.toml",
        guards_off(&fake)
    );
    fake.push_replies([
        Reply::tool_calls(&[("exec", &json!({ "command": command }).to_string())]),
        Reply::text("done"),
    ]);
    let out = cli.run_in(&ws, &["-m", "configure", "--json"], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, output) = tool_outcome(&events(&out), "fake_call_0");
    assert!(ws.join("egirl.toml").is_file(), "not planted: {output}");

    next_plain_start_in_refuses(&cli, &fake, &ws).await;
}

/// A config of the user's own in the workspace: refused until trusted,
/// loaded once trusted, refused again ("changed") when it changes, and
/// refused after `--forget`.
#[tokio::test]
async fn a_trusted_config_loads_until_it_changes() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    let config = format!(
        "[workspace]\npath = \".\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n",
        fake.url()
    );
    std::fs::write(ws.join("egirl.toml"), &config).unwrap();
    let asked = fake.requests().len();
    let out = cli.run_unnamed_in(&ws, &["-m", "hi"]).await;
    assert_refused(&out, &fake, asked, "egirl.toml is not trusted");

    let out = cli
        .run_unnamed_in(&ws, &["trust", "--yes", "egirl.toml"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    fake.push_reply(Reply::text("hello"));
    let out = cli.run_unnamed_in(&ws, &["-m", "hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    let out = cli.run_unnamed_in(&ws, &["trust", "--list"]).await;
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let canonical = ws.join("egirl.toml").canonicalize().unwrap();
    assert!(
        listed.contains(&canonical.display().to_string()),
        "{listed}"
    );

    std::fs::write(
        ws.join("egirl.toml"),
        format!("{config}[tools.exec]\napproval = \"full\"\n"),
    )
    .unwrap();
    let asked = fake.requests().len();
    let out = cli.run_unnamed_in(&ws, &["-m", "hi"]).await;
    assert_refused(
        &out,
        &fake,
        asked,
        "egirl.toml changed since you trusted it",
    );

    let out = cli
        .run_unnamed_in(&ws, &["trust", "--forget", "egirl.toml"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = cli.run_unnamed_in(&ws, &["trust", "--list"]).await;
    assert!(String::from_utf8_lossy(&out.stdout).trim().is_empty());
}

/// A `.env` in the workspace (read as `./.env` by a start there) is
/// refused until trusted, and its values are never printed.
#[tokio::test]
async fn an_untrusted_env_file_in_the_workspace_is_refused_without_its_values() {
    const VALUE: &str = "planted-env-value-0123456789";
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join(".env"), format!("SOME_SERVICE_TOKEN={VALUE}\n")).unwrap();
    let asked = fake.requests().len();
    let out = cli.run_in(&ws, &["-m", "hi"], &[]).await;
    assert_refused(&out, &fake, asked, ".env is not trusted");
    assert!(!stderr(&out).contains(VALUE));

    let out = cli.run_in(&ws, &["trust", "--yes", ".env"], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = cli.run_in(&ws, &["trust", "--list"], &[]).await;
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(listed.contains(".env\tenv"), "{listed}");
    let store = std::fs::read_to_string(cli.dir.path().join(".config/egirl/trusted.toml")).unwrap();
    assert!(
        store.contains("SOME_SERVICE_TOKEN") && !store.contains(VALUE),
        "{store}"
    );

    fake.push_reply(Reply::text("hello"));
    let out = cli.run_in(&ws, &["-m", "hi"], &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A config named with `--config` outside every workspace needs no
/// trust (as `make run` starts egirl), and `egirl trust` with nothing to
/// trust says so.
#[tokio::test]
async fn a_named_config_outside_the_workspace_needs_no_trust() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    std::fs::write(cli.dir.path().join(".env"), "HARMLESS=1\n").unwrap();
    fake.push_reply(Reply::text("hello"));
    let out = cli.run(&["-m", "hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = cli.run(&["trust", "--yes"]).await;
    assert_eq!(out.status.code(), Some(2), "--yes needs a path");
    let out = cli.run(&["trust"]).await;
    assert!(
        stderr(&out).contains("nothing to trust"),
        "{}",
        stderr(&out)
    );
    assert!(!Path::new(&cli.dir.path().join(".config/egirl/trusted.toml")).exists());
}

/// Runs `cmd` on a new pseudo-terminal with `input` typed ahead; its
/// exit code and everything it printed there.
fn on_a_terminal(mut cmd: std::process::Command, input: &[u8]) -> (Option<i32>, String) {
    use std::io::{Read, Write};
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let (mut master, mut slave) = (0, 0);
    // SAFETY: plain out-parameters; no name or size is passed.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: both fds were just opened and are owned by nothing else.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let stdio = || Stdio::from(slave.try_clone().expect("dup pty"));
    cmd.stdin(stdio()).stdout(stdio()).stderr(stdio());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 || libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn egirl");
    drop(cmd);
    drop(slave);
    let mut terminal = std::fs::File::from(master);
    terminal.write_all(input).unwrap();
    let mut printed = Vec::new();
    // Reading ends with EIO once the child has exited.
    let _ = terminal.read_to_end(&mut printed);
    let status = child.wait().unwrap();
    (
        status.code(),
        String::from_utf8_lossy(&printed).into_owned(),
    )
}

/// The TUI asks on the terminal before it starts on an untrusted config:
/// it shows the file and takes only `yes` typed in full; anything else
/// exits 2 with the one line, trusting nothing.
#[tokio::test]
async fn the_tui_shows_an_untrusted_config_and_takes_only_a_typed_yes() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    let config = ws.join("egirl.toml");
    std::fs::write(
        &config,
        format!(
            "[workspace]\npath = \".\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n",
            fake.url()
        ),
    )
    .unwrap();
    for answer in ["y\n", "no\n"] {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_egirl"));
        cmd.arg("--config")
            .arg(&config)
            .current_dir(cli.dir.path())
            .env("HOME", cli.dir.path())
            .env("TERM", "xterm-256color")
            .env_remove("EGIRL_CONFIG")
            .env_remove("XDG_CONFIG_HOME");
        let (code, printed) = on_a_terminal(cmd, answer.as_bytes());
        assert_eq!(code, Some(2), "{answer:?}: {printed}");
        assert!(printed.contains("model = \"fake\""), "{printed}");
        assert!(printed.contains("Trust this file? type yes"), "{printed}");
        assert!(printed.contains("egirl.toml is not trusted"), "{printed}");
    }
    assert!(!cli.dir.path().join(".config/egirl/trusted.toml").exists());

    // `egirl trust` asks the same way; a typed yes records the file.
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_egirl"));
    cmd.arg("--config")
        .arg(&config)
        .arg("trust")
        .current_dir(cli.dir.path())
        .env("HOME", cli.dir.path())
        .env_remove("EGIRL_CONFIG")
        .env_remove("XDG_CONFIG_HOME");
    let (code, printed) = on_a_terminal(cmd, b"yes\n");
    assert_eq!(code, Some(0), "{printed}");
    assert!(printed.contains("trusted "), "{printed}");
    let store = std::fs::read_to_string(cli.dir.path().join(".config/egirl/trusted.toml")).unwrap();
    assert!(
        store.contains("text = ") && store.contains("model = "),
        "the text is kept: {store}"
    );
}
