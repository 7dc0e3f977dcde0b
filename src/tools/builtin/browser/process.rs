//! The Chromium process: launched by egirl itself (not by a DevTools
//! crate) so that it gets egirl's environment minus its secrets, a process
//! group of its own (killed whole on close) and `PR_SET_PDEATHSIG`, which
//! the kernel sends when the thread that spawned it dies. That thread is
//! one launcher thread living as long as the process, so a killed egirl
//! (even SIGKILL) takes its browsers with it.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

/// A running Chromium; killed (its whole process group) when dropped.
pub struct Process {
    pid: i32,
    child: Mutex<Option<Child>>,
    profile: PathBuf,
}

impl Process {
    /// Kills the browser and its helpers, reaps it, removes its profile.
    pub fn kill(&self) {
        let Ok(mut child) = self.child.lock() else {
            return;
        };
        if let Some(mut child) = child.take() {
            // SAFETY: signalling the process group of the browser we started.
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_dir_all(&self.profile);
        }
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Where a session's profile lives: `$EGIRL_CACHE/browser/<session>-<pid>`
/// (`<agent>.<session>-<pid>` for an agent's; else `$XDG_CACHE_HOME/egirl`,
/// else `~/.cache/egirl`): never in the workspace, one per egirl process
/// (two egirls resuming one session would fight over a profile's lock)
/// and one per agent (two agents share a channel's session id).
pub fn profile_dir(agent: Option<&str>, session: &str) -> PathBuf {
    let cache = std::env::var_os("EGIRL_CACHE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .filter(|v| !v.is_empty())
                .map(|d| PathBuf::from(d).join("egirl"))
        })
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/egirl")))
        .unwrap_or_else(|| std::env::temp_dir().join("egirl-cache"));
    let owner = match agent {
        Some(agent) => format!("{agent}.{session}"),
        None => session.to_string(),
    };
    let name: String = owner
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    cache
        .join("browser")
        .join(format!("{name}-{}", std::process::id()))
}

/// Removes the profiles of egirls that are gone (killed before they
/// could remove their own): `<session>-<pid>` with no process `<pid>`.
fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_string_lossy()
            .rsplit_once('-')
            .and_then(|(_, pid)| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The browser's DevTools pipes, egirl's ends: what it writes to Chromium
/// (its fd 3) and what it reads from it (its fd 4).
pub struct DevToolsPipes {
    pub to: tokio::net::unix::pipe::Sender,
    pub from: tokio::net::unix::pipe::Receiver,
}

/// Starts Chromium on a fresh profile, DevTools on a pipe pair (no port).
pub fn launch(
    bin: &Path,
    profile: &Path,
    env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    proxy_port: u16,
) -> Result<(Process, DevToolsPipes), String> {
    let _ = std::fs::remove_dir_all(profile);
    if let Some(parent) = profile.parent() {
        sweep_stale(parent);
    }
    std::fs::create_dir_all(profile).map_err(|e| {
        format!(
            "cannot create the browser profile {}: {e}",
            profile.display()
        )
    })?;
    let log = profile.join("chromium.log");
    let stderr = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut command = Command::new(bin);
    command
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", profile.display()))
        // http and https through egirl's proxy (`proxy`); every other
        // scheme (ws, wss: DevTools' Fetch never pauses them, so nothing
        // could judge them) to a SOCKS proxy on a port nobody serves.
        .arg(format!(
            "--proxy-server=http=127.0.0.1:{proxy_port};https=127.0.0.1:{proxy_port};socks=socks5://127.0.0.1:9"
        ))
        .arg("about:blank")
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .process_group(0);
    // Chromium refuses to run as root with its sandbox on.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        command.arg("--no-sandbox");
    }
    let pipe_error = |e: std::io::Error| format!("cannot make the browser's DevTools pipes: {e}");
    let (its_in, our_out) = cloexec_pipe().map_err(pipe_error)?;
    let (our_in, its_out) = cloexec_pipe().map_err(pipe_error)?;
    let (child_in, child_out) = (its_in.as_raw_fd(), its_out.as_raw_fd());
    // SAFETY: prctl, fcntl and dup2 are async-signal-safe. Copied above
    // 10 first, so neither end is overwritten by the other's dup2.
    unsafe {
        command.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            let high_in = libc::fcntl(child_in, libc::F_DUPFD_CLOEXEC, 10);
            let high_out = libc::fcntl(child_out, libc::F_DUPFD_CLOEXEC, 10);
            if high_in < 0
                || high_out < 0
                || libc::dup2(high_in, 3) < 0
                || libc::dup2(high_out, 4) < 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child =
        spawn_on_launcher(command).map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    // Chromium holds its own ends now: a closed pipe then means it is gone.
    drop((its_in, its_out));
    let process = Process {
        pid: child.id() as i32,
        child: Mutex::new(Some(child)),
        profile: profile.to_path_buf(),
    };
    let to = tokio::net::unix::pipe::Sender::from_owned_fd(our_out).map_err(pipe_error)?;
    let from = tokio::net::unix::pipe::Receiver::from_owned_fd(our_in).map_err(pipe_error)?;
    Ok((process, DevToolsPipes { to, from }))
}

/// A pipe (read end, write end), both closed on exec.
fn cloexec_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both were just opened and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Headless, quiet (no background requests of its own, no sync, no
/// crash reports, no first-run pages), WebRTC kept off local addresses.
const FLAGS: &[&str] = &[
    "--headless",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-breakpad",
    "--disable-extensions",
    "--disable-default-apps",
    "--dns-prefetch-disable",
    // QUIC (UDP) would not go through the proxy.
    "--disable-quic",
    "--mute-audio",
    "--password-store=basic",
    "--use-mock-keychain",
    "--hide-scrollbars",
    "--window-size=1280,800",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    // Loopback too goes through the proxy (`launch`), which Chromium would
    // otherwise never proxy.
    "--proxy-bypass-list=<-loopback>",
    // DevTools on fds 3 and 4 (`launch`), never on a port another process
    // could connect to.
    "--remote-debugging-pipe",
];

impl Process {
    /// Why Chromium is no longer running (its exit and the last line of
    /// its log), when it is not: what a start that got no answer says.
    pub fn exited(&self) -> Option<String> {
        let status = match self.child.lock() {
            Ok(mut child) => child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
                .map(|s| s.to_string()),
            Err(_) => None,
        }?;
        let log = std::fs::read_to_string(self.profile.join("chromium.log")).unwrap_or_default();
        let last = log
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let hint = if log.contains("sandbox") {
            " (Chromium's sandbox cannot run here: user namespaces are off, or its setuid helper is missing)"
        } else {
            ""
        };
        Some(format!("Chromium exited ({status}) at start: {last}{hint}"))
    }
}

type Launch = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Spawns `command` from the launcher thread (see the module's doc).
fn spawn_on_launcher(command: Command) -> std::io::Result<Child> {
    static LAUNCHER: OnceLock<Mutex<mpsc::Sender<Launch>>> = OnceLock::new();
    let launcher = LAUNCHER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Launch>();
        let _ = std::thread::Builder::new()
            .name("egirl-browser-launcher".into())
            .spawn(move || {
                while let Ok((mut command, reply)) = rx.recv() {
                    let _ = reply.send(command.spawn());
                }
            });
        Mutex::new(tx)
    });
    let (reply, answer) = mpsc::channel();
    let sent = launcher
        .lock()
        .map_err(|_| std::io::Error::other("the launcher is gone"))?
        .send((command, reply));
    if sent.is_err() {
        return Err(std::io::Error::other("the launcher thread is gone"));
    }
    answer
        .recv()
        .map_err(|_| std::io::Error::other("the launcher thread is gone"))?
}
