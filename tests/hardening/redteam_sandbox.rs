//! Ways out of the exec sandbox a steered model tried, through the real
//! binary (headless, `--approve-exec`, a scripted model).

use crate::support::cli::Cli;
use crate::support::fake_llama::{FakeLlama, Reply};

/// Clears its own parent-death signal, leaves the keeper's process group
/// and keeps appending to `alive` in the workspace for ten seconds.
const OUTLIVER: &str = r#"
import ctypes, os, time
ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)
os.setsid()
os.close(1); os.close(2)
for _ in range(50):
    try:
        with open("alive", "a") as f: f.write("x")
    except OSError: pass
    time.sleep(0.2)
"#;

#[tokio::test]
async fn a_command_that_clears_its_death_signal_still_dies_at_its_timeout() {
    if !crate::hardening::sandbox::mount_namespace() || !python3() {
        return;
    }
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    std::fs::create_dir_all(cli.workspace()).unwrap();
    let script = cli.dir.path().join("outliver.py");
    std::fs::write(&script, OUTLIVER).unwrap();
    let args = serde_json::json!({
        "command": format!("exec python3 {}", script.display()),
        "timeout_secs": 2,
    })
    .to_string();
    fake.push_replies(vec![
        Reply::tool_calls(&[("exec", args.as_str())]),
        Reply::text("done"),
    ]);
    let out = cli.run(&["-m", "go", "--json", "--approve-exec"]).await;
    assert!(
        out.status.success(),
        "{}",
        crate::support::cli::stderr(&out)
    );
    let alive = cli.workspace().join("alive");
    let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let at_end = size(&alive);
    assert!(at_end > 0, "the command never ran");
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(
        size(&alive),
        at_end,
        "the command went on writing after its timeout killed it"
    );
}

/// `add_key` of a user key named `name` into the session keyring, which
/// the command shares with egirl (and the user's login).
fn planting(name: &str) -> String {
    format!(
        "python3 -c \"import ctypes; l = ctypes.CDLL(None); print('added', l.syscall({}, b'user', b'{name}', b'v', 1, -3))\"",
        libc::SYS_add_key
    )
}

#[tokio::test]
async fn a_command_cannot_change_egirls_keyrings() {
    if !crate::hardening::sandbox::mount_namespace() || !python3() {
        return;
    }
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    std::fs::create_dir_all(cli.workspace()).unwrap();
    let name = format!("egirl-planted-{}", std::process::id());
    // As after a login (pam_keyinit): a session keyring of its own, which
    // egirl (spawned from this thread) inherits.
    // SAFETY: KEYCTL_JOIN_SESSION_KEYRING with no name: a fresh anonymous one.
    let joined = unsafe { libc::syscall(libc::SYS_keyctl, 1, std::ptr::null::<libc::c_char>()) };
    assert!(joined >= 0, "{}", std::io::Error::last_os_error());
    let ev = crate::hardening::sandbox::approved(&cli, &fake, &[planting(&name).as_str()]).await;
    let results = crate::hardening::sandbox::results(&ev);
    let desc = std::ffi::CString::new(name).unwrap();
    // SAFETY: a keyctl search with NUL-terminated strings of ours.
    let found = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            10, // KEYCTL_SEARCH
            -3, // KEY_SPEC_SESSION_KEYRING
            c"user".as_ptr(),
            desc.as_ptr(),
            0,
        )
    };
    if found >= 0 {
        // SAFETY: unlinks the key this test planted.
        unsafe { libc::syscall(libc::SYS_keyctl, 9, found, -3) };
    }
    assert!(
        found < 0,
        "the command put a key in egirl's session keyring: {results:?}"
    );
}

pub(crate) fn python3() -> bool {
    let ok = std::process::Command::new("python3")
        .arg("-c")
        .arg("")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: no python3");
    }
    ok
}

/// An exec step of a scripted run, then "done".
fn exec_then_done(command: &str) -> Vec<Reply> {
    let args = serde_json::json!({ "command": command }).to_string();
    vec![
        Reply::tool_calls(&[("exec", args.as_str())]),
        Reply::text("done"),
    ]
}

/// Two egirls on one workspace without `.git` (a chat surface and the
/// user's TUI): the first one's command ending must not take the read-only
/// `.git` away from the second one's, still running.
#[tokio::test]
async fn another_egirls_command_ending_leaves_git_read_only() {
    if !crate::hardening::sandbox::landlock() || !crate::hardening::sandbox::mount_namespace() {
        return;
    }
    let (fake_a, fake_b) = (FakeLlama::start().await, FakeLlama::start().await);
    let (a, b) = (Cli::new(&fake_a, ""), Cli::new(&fake_b, ""));
    let ws = a.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    let ws_arg = ws.display().to_string();
    fake_a.push_replies(exec_then_done("sleep 2"));
    fake_b.push_replies(exec_then_done(
        "sleep 4; mkdir -p .git && printf '[core]\\n\\tfsmonitor = touch pwned\\n' > .git/config && echo planted",
    ));
    let args = |ws: &str| -> Vec<String> {
        ["--workspace", ws, "-m", "go", "--json", "--approve-exec"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let (args_a, args_b) = (args(&ws_arg), args(&ws_arg));
    let run_a = async {
        let argv: Vec<&str> = args_a.iter().map(String::as_str).collect();
        a.run(&argv).await
    };
    let run_b = async {
        tokio::time::sleep(std::time::Duration::from_millis(700)).await;
        let argv: Vec<&str> = args_b.iter().map(String::as_str).collect();
        b.run(&argv).await
    };
    let (out_a, out_b) = tokio::join!(run_a, run_b);
    assert!(
        out_a.status.success(),
        "{}",
        crate::support::cli::stderr(&out_a)
    );
    let results = crate::hardening::sandbox::results(&crate::support::cli::events(&out_b));
    assert!(
        !ws.join(".git/config").exists(),
        "the second command planted .git/config: {results:?}"
    );
}

/// A System V shared memory segment made by a command stays behind it in
/// egirl's IPC namespace (state outside every writable root, which other
/// processes of the same user can attach to) unless the command has an IPC
/// namespace of its own.
#[tokio::test]
async fn a_command_leaves_no_shared_memory_behind() {
    if !crate::hardening::sandbox::mount_namespace() || !python3() {
        return;
    }
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    std::fs::create_dir_all(cli.workspace()).unwrap();
    let key = 0x6567_0000 | (std::process::id() as i32 & 0xffff);
    // IPC_CREAT | 0600
    let command = format!(
        "python3 -c \"import ctypes; print('segment', ctypes.CDLL(None).shmget({key}, 4096, 0o1600))\""
    );
    let ev = crate::hardening::sandbox::approved(&cli, &fake, &[command.as_str()]).await;
    let results = crate::hardening::sandbox::results(&ev);
    assert!(results[0].1.contains("segment"), "{results:?}");
    // SAFETY: looks the key up; removes a segment the command left.
    let left = unsafe { libc::shmget(key, 0, 0) };
    if left >= 0 {
        // SAFETY: IPC_RMID on the segment found above.
        unsafe { libc::shmctl(left, libc::IPC_RMID, std::ptr::null_mut()) };
    }
    assert!(left < 0, "the command's segment outlived it: {results:?}");
}

/// Root inside the sandbox's user namespace is uid 0 to the kernel, and
/// sysctl files check the uid, not a capability: a `/proc` the command
/// could write would let it set `kernel.core_pattern` (a program the kernel
/// runs as root). Landlock refuses the write where the kernel has it; the
/// command's own `/proc` is read-only as well, for kernels without.
#[tokio::test]
async fn the_commands_proc_is_read_only() {
    if !crate::hardening::sandbox::mount_namespace() {
        return;
    }
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    std::fs::create_dir_all(cli.workspace()).unwrap();
    // Opens for writing without writing anything.
    let ev = crate::hardening::sandbox::approved(
        &cli,
        &fake,
        &["exec 3>>/proc/sys/kernel/core_pattern && echo opened"],
    )
    .await;
    let results = crate::hardening::sandbox::results(&ev);
    assert!(!results[0].0, "{results:?}");
    assert!(
        results[0].1.contains("Read-only file system"),
        "{results:?}"
    );
}

/// egirl's state dir (the trust store and the recorded writable roots) in
/// an allowed path: a command that wrote it could trust a config of its
/// own and drop the root that gives it away, for the next start to load.
#[tokio::test]
async fn the_trust_store_stays_read_only_in_an_allowed_path() {
    if !crate::hardening::sandbox::landlock() || !crate::hardening::sandbox::mount_namespace() {
        return;
    }
    let fake = FakeLlama::start().await;
    // `~` is the Cli's own dir: the state dir is ~/.config/egirl.
    let cli = Cli::new(&fake, "[tools]\nallowed_paths = [\"~/.config\"]\n");
    let state = cli.dir.path().join(".config/egirl");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("trusted.toml"), "").unwrap();
    let ev = crate::hardening::sandbox::approved(
        &cli,
        &fake,
        &[
            &format!(
                "echo '# planted' >> {}",
                state.join("trusted.toml").display()
            ),
            &format!(
                "printf '/elsewhere\\n' > {}",
                state.join("writable-roots").display()
            ),
            "echo fine > ~/.config/other.conf",
        ],
    )
    .await;
    let results = crate::hardening::sandbox::results(&ev);
    assert!(results[2].0, "{results:?}");
    assert_eq!(
        std::fs::read_to_string(state.join("trusted.toml")).unwrap(),
        "",
        "{results:?}"
    );
    let roots = std::fs::read_to_string(state.join("writable-roots")).unwrap_or_default();
    assert!(!roots.contains("/elsewhere"), "{roots}: {results:?}");
}
