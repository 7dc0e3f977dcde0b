//! Hardening: the sandbox holds as root (containers, a Pi set up as root)
//! and as an unprivileged user alike, through the real binary (headless,
//! `--approve-exec`, a scripted model). The machine these run on is root;
//! the unprivileged runs start egirl itself as `nobody` (`setpriv`), with
//! a HOME it owns. Where this kernel lacks the namespaces the tests say why
//! and return.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use super::sandbox::{approved, landlock, mount_namespace, results};
use crate::support::cli::{Cli, events, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

const NOBODY: u32 = 65534;

#[derive(Clone, Copy, Debug, PartialEq)]
enum As {
    /// The test's own user: root on CI.
    Caller,
    /// `nobody`, egirl started through `setpriv`.
    Nobody,
}

fn root() -> bool {
    // SAFETY: a plain getter.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("skipped: not root");
    }
    root
}

fn sandboxed() -> bool {
    landlock() && mount_namespace()
}

/// Who to run as here: the caller, and nobody where the caller is root.
fn users() -> Vec<As> {
    // SAFETY: a plain getter.
    if unsafe { libc::geteuid() } == 0 {
        vec![As::Caller, As::Nobody]
    } else {
        vec![As::Caller]
    }
}

fn chown_tree(path: &Path) {
    let ok = std::process::Command::new("chown")
        .args(["-R", &format!("{NOBODY}:{NOBODY}")])
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "chown {}", path.display());
}

/// `egirl -m go --json --approve-exec` as `who`, with `env` added.
async fn run_as(who: As, cli: &Cli, env: &[(&str, &str)]) -> Output {
    let args = ["-m", "go", "--json", "--approve-exec"];
    if who == As::Caller {
        return cli.run_with_env(&args, env).await;
    }
    chown_tree(cli.dir.path());
    let mut cmd = tokio::process::Command::new("setpriv");
    cmd.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        env!("CARGO_BIN_EXE_egirl"),
        "--config",
    ])
    .arg(cli.config())
    .args(args)
    .current_dir(cli.dir.path())
    .env("HOME", cli.dir.path())
    .env_remove("EGIRL_CONFIG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().await.expect("run egirl as nobody")
}

/// Runs `commands` (one per model step, approved) as `who`; (success,
/// output) of each.
async fn commands_as(
    who: As,
    extra: &str,
    commands: &[String],
    env: &[(&str, &str)],
) -> (Cli, Vec<(bool, String)>) {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, extra);
    let mut replies: Vec<Reply> = commands
        .iter()
        .map(|c| {
            let args = serde_json::json!({ "command": c }).to_string();
            Reply::tool_calls(&[("exec", args.as_str())])
        })
        .collect();
    replies.push(Reply::text("done"));
    fake.push_replies(replies);
    let out = run_as(who, &cli, env).await;
    assert!(out.status.success(), "{who:?}: {}", stderr(&out));
    let results = results(&events(&out));
    assert_eq!(results.len(), commands.len(), "{who:?}: {results:?}");
    (cli, results)
}

/// A block device node for the disk would read and write any file: as
/// root the sandbox once kept every capability (a mount namespace alone).
#[tokio::test]
async fn as_root_a_command_cannot_make_a_device_node() {
    if !root() || !sandboxed() {
        return;
    }
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ev = approved(
        &cli,
        &fake,
        &[
            "mknod disk b 7 0 && ls -l disk",
            "mknod tty c 5 0",
            "mkfifo fifo",
        ],
    )
    .await;
    let r = results(&ev);
    assert!(!r[0].0 && !r[1].0, "{r:?}");
    assert!(!cli.workspace().join("disk").exists(), "{r:?}");
    assert!(!cli.workspace().join("tty").exists(), "{r:?}");
    // A FIFO is no device: it stays.
    assert!(r[2].0, "{r:?}");
}

/// `open_by_handle_at` opens a file by inode: as root it once rewrote
/// `.git/config` past the read-only bind.
#[tokio::test]
async fn as_root_open_by_handle_at_cannot_reach_past_a_read_only_bind() {
    if !root() || !sandboxed() {
        return;
    }
    let fake = FakeLlama::start().await;
    let cli = Cli::holding_its_config(&fake, "");
    let ws = cli.dir.path();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    let script = r#"
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
handle = ctypes.create_string_buffer(8 + 128)
struct.pack_into('I', handle, 0, 128)
mount_id = ctypes.c_int()
if libc.name_to_handle_at(-100, b'.git/config', handle, ctypes.byref(mount_id), 0) != 0:
    sys.exit('name_to_handle_at: ' + os.strerror(ctypes.get_errno()))
fd = libc.open_by_handle_at(os.open('/', os.O_RDONLY), handle, os.O_WRONLY | os.O_APPEND)
if fd < 0:
    sys.exit('open_by_handle_at: ' + os.strerror(ctypes.get_errno()))
os.write(fd, b'\tfsmonitor = touch pwned\n')
print('rewritten')
"#;
    let command = format!("/usr/bin/python3 -c \"{}\"", script.replace('"', "\\\""));
    let ev = approved(&cli, &fake, &[&command]).await;
    let r = &results(&ev)[0];
    assert!(!r.0 && !r.1.contains("rewritten"), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
}

/// The command runs in a PID namespace with a /proc of its own: it sees
/// neither egirl (its argv, its start-up environment with the keys) nor
/// the user's other processes.
#[tokio::test]
async fn a_command_sees_neither_egirl_nor_its_environment() {
    if !sandboxed() {
        return;
    }
    for who in users() {
        let commands = [
            "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done".to_string(),
            "echo hits=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c '^FOO_TOKEN=')".to_string(),
            "ps -e | wc -l".to_string(),
            // Its /proc and the read-only binds stay where they are.
            "umount -l /proc".to_string(),
            "unshare -U -r true".to_string(),
        ];
        let (_cli, r) =
            commands_as(who, "", &commands, &[("FOO_TOKEN", "tok-0123456789abcdef")]).await;
        assert!(r[0].0, "{who:?}: {r:?}");
        assert!(
            !r[0].1.contains("--approve-exec"),
            "{who:?} saw egirl: {}",
            r[0].1
        );
        assert!(
            r[1].1.contains("hits=0"),
            "{who:?} read egirl's environ: {}",
            r[1].1
        );
        // The header, the shell, ps and wc.
        let seen: usize = r[2]
            .1
            .lines()
            .last()
            .unwrap_or("")
            .trim()
            .parse()
            .unwrap_or(99);
        assert!(seen <= 5, "{who:?}: {} processes visible", seen);
        assert!(!r[3].0 && !r[4].0, "{who:?}: {r:?}");
    }
}

/// "Writes only the workspace" holds for metadata too: the mounts outside
/// the writable roots are read-only, so chmod, utime and setxattr fail.
#[tokio::test]
async fn a_command_cannot_change_metadata_outside_the_workspace() {
    if !sandboxed() {
        return;
    }
    for who in users() {
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("id_key");
        std::fs::write(&target, "private\n").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        if who == As::Nobody {
            chown_tree(elsewhere.path());
        }
        let before = std::fs::metadata(&target).unwrap();
        let t = target.display();
        let commands = [
            format!("chmod 4755 {t}"),
            format!("chmod 000 {t}"),
            format!("touch -d 2001-01-01 {t}"),
            format!("/usr/bin/python3 -c \"import os; os.setxattr('{t}', 'user.egirl', b'1')\""),
            format!("chmod 644 {t}"),
        ];
        let (_cli, r) = commands_as(who, "", &commands, &[]).await;
        for (i, result) in r.iter().enumerate() {
            assert!(!result.0, "{who:?}: `{}` ran: {result:?}", commands[i]);
        }
        let after = std::fs::metadata(&target).unwrap();
        assert_eq!(after.mode(), before.mode(), "{who:?}");
        assert_eq!(after.mtime(), before.mtime(), "{who:?}");
        assert_eq!(after.uid(), before.uid(), "{who:?}");
        let name = std::ffi::CString::new("user.egirl").unwrap();
        let path = std::ffi::CString::new(target.to_str().unwrap()).unwrap();
        // SAFETY: a size query on NUL-terminated strings we own.
        let size = unsafe { libc::getxattr(path.as_ptr(), name.as_ptr(), std::ptr::null_mut(), 0) };
        assert_eq!(size, -1, "{who:?}: the xattr was set");
    }
}

/// The `sleep` processes whose argv is exactly `sleep <arg>`.
fn sleeping(arg: &str) -> Vec<i32> {
    let wanted = format!("sleep\0{arg}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            (cmdline == wanted.as_bytes()).then_some(pid)
        })
        .collect()
}

/// Everything a command started ends with it: `setsid` once took a
/// process out of the group exec kills, and it lived on.
#[tokio::test]
async fn nothing_a_command_started_outlives_it() {
    if !sandboxed() {
        return;
    }
    for (who, arg) in users().into_iter().zip(["297.25", "297.5"]) {
        let commands = [format!(
            "setsid nohup sleep {arg} >/dev/null 2>&1 & sleep 0.2; echo started"
        )];
        let (_cli, r) = commands_as(who, "", &commands, &[]).await;
        assert!(r[0].0, "{who:?}: {r:?}");
        let left = sleeping(arg);
        for pid in &left {
            // SAFETY: cleaning up what the test started.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        assert!(left.is_empty(), "{who:?}: survivors {left:?}");
    }
}

/// A workspace (or allowed path) without `.git` cannot be given one: the
/// user's own `git status` would run its hooks outside the sandbox.
#[tokio::test]
async fn a_root_without_git_cannot_be_given_one() {
    if !sandboxed() {
        return;
    }
    for who in users() {
        let allowed = tempfile::tempdir().unwrap();
        if who == As::Nobody {
            chown_tree(allowed.path());
        }
        let a = allowed.path().display();
        let extra = format!("[tools]\nallowed_paths = [\"{a}\"]\n");
        let commands = [
            "mkdir .git".to_string(),
            "echo 'gitdir: /tmp/elsewhere' > .git".to_string(),
            "mkdir -p .git/hooks".to_string(),
            format!("mkdir {a}/.git"),
            "echo fine > notes.md".to_string(),
        ];
        let (cli, r) = commands_as(who, &extra, &commands, &[]).await;
        for result in &r[..4] {
            assert!(!result.0, "{who:?}: {result:?}");
        }
        assert!(r[4].0, "{who:?}: {:?}", r[4]);
        for root in [cli.workspace(), allowed.path().to_path_buf()] {
            assert!(
                std::fs::symlink_metadata(root.join(".git")).is_err(),
                "{who:?}: {}/.git is there",
                root.display()
            );
        }
    }
}

/// A stdio MCP server is killed with egirl, even when egirl gets SIGKILL
/// (no chance to stop it): its parent-death signal.
#[tokio::test]
async fn a_stdio_mcp_server_dies_with_a_killed_egirl() {
    let fake = FakeLlama::start().await;
    // The command keeps egirl busy while the test kills it.
    fake.push_replies([
        Reply::tool_calls(&[
            ("mcp__stuck__anything", "{}"),
            ("exec", r#"{"command": "sleep 30"}"#),
        ]),
        Reply::text("done"),
    ]);
    let root = tempfile::tempdir().unwrap();
    let pid_file = root.path().join("server.pid");
    let config = format!(
        "[mcp.servers.stuck]\ncommand = \"sh\"\nargs = [\"-c\", \"echo $$ > {}; exec sleep 598\"]\nstartup_timeout = \"60s\"\n",
        pid_file.display()
    );
    let cli = Cli::new(&fake, &config);
    let mut egirl = tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
        .arg("--config")
        .arg(cli.config())
        .args(["-m", "go", "--json", "--approve-exec"])
        .env("HOME", cli.dir.path())
        .env_remove("EGIRL_CONFIG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let server: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break pid;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(
        sleeping("598").contains(&server),
        "the server is not running"
    );
    egirl.start_kill().unwrap();
    let _ = egirl.wait().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while sleeping("598").contains(&server) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let left = sleeping("598").contains(&server);
    // SAFETY: cleaning up what the test started, if it is still there.
    unsafe { libc::kill(server, libc::SIGKILL) };
    assert!(!left, "the MCP server outlived a killed egirl");
}
