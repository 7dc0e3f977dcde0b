//! What bounds an approved command and the file tools: the protected paths
//! they share, and the OS sandbox every `exec` runs in, however it was
//! approved (once, a rule, `approval = "full"`, any surface). A delegated
//! Claude Code runs in it too, widened by [`prepare_with`] (see
//! `delegate_claude_code::confine`).
//!
//! `[tools.exec] sandbox`:
//! - `workspace-write` (default): the command reads the whole filesystem and
//!   writes only the workspace, `[tools] allowed_paths`, a private temp dir
//!   (fresh per command, `TMPDIR` points there, removed afterwards) and
//!   `/dev/null` and friends; the protected paths inside those stay
//!   read-only.
//! - `read-only`: writes only the private temp dir.
//! - `required`: `workspace-write`, but a command is refused when the kernel
//!   lacks a piece, instead of running with what there is.
//! - `off`: no sandbox, exactly as before it existed.
//!
//! `network = false` (default) lets commands open no socket, Unix ones
//! included (a daemon on one may run commands outside the sandbox).
//!
//! How (Linux), applied in the forked child between fork and exec, with
//! everything built in the parent so the child makes only raw,
//! async-signal-safe syscalls (no allocation, no locks):
//! 1. [`mounts`]: a user namespace (root's too: root inside holds its
//!    capabilities only there, so no device nodes, no file handles), a
//!    mount namespace where every mount is read-only but the writable
//!    roots, which hold the protected paths read-only again, and a PID
//!    namespace. A writable root without `.git` gets an empty read-only
//!    one for the command's time ([`placeholders`]);
//! 2. [`init`]: the forked child forks PID 1 of the new namespace (egirl's
//!    own, idle) and the command's process, which mounts its own `/proc`;
//!    the command sees none of egirl's or the user's processes, and
//!    everything it started dies when it ends, or when egirl does
//!    (parent-death signals);
//! 3. where user namespaces are off, a root egirl still gets the mount and
//!    PID namespaces, and [`privileges`] drops every capability;
//! 4. `no_new_privs`, then Landlock ([`filesystem`]): read and execute
//!    everywhere, write only the writable roots, never a device node;
//! 5. a seccomp filter ([`syscalls`]): device nodes, file handles, ptrace,
//!    mount changes, new namespaces and, with `network = false`, sockets.
//!
//! The `pre_exec` route was chosen over re-executing egirl as a helper
//! binary (codex's linux-sandbox): it costs no extra exec, and the closure
//! is sound because it only touches memory prepared before the fork (the
//! second fork is a raw `clone`, the keeper never returns into std). What
//! the kernel lacks is probed once ([`probe`]) and said once.
//!
//! The loaded `.env` files read as empty ([`mounts`] binds `/dev/null` over
//! them): redaction would not catch `rev .env`.
//!
//! Not sandboxed: other reads (a command may read any file the user can:
//! what it prints is redacted elsewhere), Unix sockets when
//! `network = true`, nested `.git` directories below a root's own, a
//! missing start-up file the command creates in a writable root (egirl
//! never loads one untrusted), and whatever runs outside `exec` (egirl
//! itself).

pub mod env;
pub mod filesystem;
pub mod init;
pub mod mounts;
pub mod placeholders;
pub mod privileges;
pub mod probe;
pub mod protected;
pub mod refusal;
pub mod syscalls;

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use protected::ProtectedPaths;

/// Makes egirl's own process non-dumpable, once at start.
///
/// egirl's environment holds its secrets, and `/proc/<egirl>/environ`
/// shows the environment egirl was started with, whatever it removed
/// since: a command could read its parent's (`/proc/$PPID/environ`), in
/// another form than redaction knows (`| rev`). A non-dumpable process's
/// /proc files belong to root, so a command running as the user cannot
/// read them (as `ssh-agent` does for its keys). Commands are unaffected:
/// exec makes them dumpable again, and the sandbox's child turns it back
/// on itself while it writes its uid map. A sandboxed command does not
/// see egirl at all (its own PID namespace); this covers `sandbox = "off"`
/// for an egirl that is not root.
pub fn hide_own_environment() {
    // SAFETY: a plain prctl on this process; failure only leaves it dumpable.
    let rc = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    if rc != 0 {
        tracing::debug!(
            "could not make egirl non-dumpable: {}",
            std::io::Error::last_os_error()
        );
    }
}

use crate::config::{ExecConfig, ExecSandbox};
use crate::tools::ToolContext;
use mounts::MountPlan;
use placeholders::Placeholders;
use seccompiler::BpfProgram;

/// One line for the approval modal, the tools pane and the tool output:
/// the sandbox a command will run in, e.g. "workspace-write, no network",
/// with what this kernel lacks.
pub fn describe(exec: &ExecConfig) -> String {
    let mode = match exec.sandbox {
        ExecSandbox::Off => return "off (no sandbox)".to_string(),
        ExecSandbox::WorkspaceWrite => "workspace-write",
        ExecSandbox::Required => "workspace-write (required)",
        ExecSandbox::ReadOnly => "read-only",
    };
    let net = if exec.network {
        "network"
    } else {
        "no network"
    };
    let gaps = gaps(exec);
    if gaps.is_empty() {
        format!("{mode}, {net}")
    } else if exec.sandbox == ExecSandbox::Required {
        format!("{mode}, {net}: refused here ({})", short_gaps(exec))
    } else {
        format!("{mode}, {net} (incomplete: {})", short_gaps(exec))
    }
}

/// What this kernel lacks for the configured sandbox, one phrase each.
pub fn gaps(exec: &ExecConfig) -> Vec<String> {
    if exec.sandbox == ExecSandbox::Off {
        return Vec::new();
    }
    probe::support().missing(!exec.network)
}

fn short_gaps(exec: &ExecConfig) -> String {
    gaps(exec)
        .iter()
        .map(|g| g.split(" (").next().unwrap_or(g).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The start-up notice (and `egirl doctor` line) when the sandbox is
/// incomplete on this kernel; None when nothing is missing.
pub fn notice(exec: &ExecConfig) -> Option<String> {
    let gaps = gaps(exec);
    if gaps.is_empty() {
        return None;
    }
    let list = gaps.join("; ");
    Some(if exec.sandbox == ExecSandbox::Required {
        format!(
            "exec sandbox: this kernel lacks {list}; with [tools.exec] sandbox = \"required\" every command is refused"
        )
    } else {
        format!(
            "exec sandbox: this kernel lacks {list}; commands run with what is available (sandbox = \"required\" refuses them instead)"
        )
    })
}

fn writes_workspace(exec: &ExecConfig) -> bool {
    matches!(
        exec.sandbox,
        ExecSandbox::WorkspaceWrite | ExecSandbox::Required
    )
}

/// A sandbox prepared for one command: attach it to the command with
/// [`Prepared::apply`]; dropping it removes the private temp dir.
pub struct Prepared {
    /// As [`describe`] says it.
    pub label: String,
    tmp: TempDir,
    child: Arc<ChildSetup>,
    /// Removed after the command (declared after `child`: dropped later).
    _placeholders: Placeholders,
}

/// Everything the child needs, built before the fork.
struct ChildSetup {
    /// egirl's pid, read before the fork.
    egirl: libc::pid_t,
    /// egirl's command line in memory, blanked in PID 1 ([`init::own_arguments`]).
    arguments: Option<(usize, usize)>,
    mounts: Option<MountPlan>,
    landlock: Option<OwnedFd>,
    seccomp: Option<Arc<BpfProgram>>,
}

/// The sandbox for a command in `ctx`: Ok(None) when `sandbox = "off"`,
/// Err(one line for the model) when it must not run.
pub fn prepare(ctx: &ToolContext) -> Result<Option<Prepared>, String> {
    prepare_with(ctx, &ctx.exec, &Widening::default())
}

/// What a caller other than exec adds to the sandbox of `[tools.exec]`
/// (a delegated Claude Code: its own state dir, the `.env` files of its
/// directory).
#[derive(Default)]
pub struct Widening {
    /// Writable besides the workspace rules and the private temp dir.
    pub writable: Vec<PathBuf>,
    /// Read as empty besides the loaded `.env` files.
    pub hidden: Vec<PathBuf>,
}

/// As [`prepare`], with `exec` in place of `[tools.exec]` and `extra`.
pub fn prepare_with(
    ctx: &ToolContext,
    exec: &ExecConfig,
    extra: &Widening,
) -> Result<Option<Prepared>, String> {
    if exec.sandbox == ExecSandbox::Off {
        return Ok(None);
    }
    let support = probe::support();
    let gaps = gaps(exec);
    if exec.sandbox == ExecSandbox::Required && !gaps.is_empty() {
        return Err(format!(
            "refused: [tools.exec] sandbox = \"required\" and this kernel lacks {}",
            gaps.join("; ")
        ));
    }
    let tmp = TempDir::new()?;
    let isolation = support.namespace.as_ref().ok().copied();
    let mut writable: Vec<PathBuf> = Vec::new();
    let mut placeholders = Placeholders::default();
    if writes_workspace(exec) {
        writable.push(ctx.workspace.clone());
        writable.extend(ctx.allowed_paths.iter().cloned());
        if isolation.is_some() {
            placeholders = Placeholders::create(&writable);
        }
    }
    let protected = protected_inside(ctx, &writable);
    writable.push(tmp.path.clone());
    writable.extend(extra.writable.iter().cloned());
    let mut hidden = ctx.protected.env_files().to_vec();
    hidden.extend(ctx.protected.secret_files());
    hidden.extend(extra.hidden.iter().cloned());

    let mounts = match isolation {
        Some(isolation) => Some(
            MountPlan::new(isolation, &writable, &protected)?
                .hiding(&hidden)
                .hiding_dirs(&ctx.protected.other_workspaces()),
        ),
        None => None,
    };
    let landlock = if support.landlock_abi > 0 {
        filesystem::ruleset(&writable)?
    } else {
        None
    };
    let seccomp = if support.seccomp {
        Some(syscalls::filter(syscalls::Refusing {
            network: !exec.network,
            metadata: !isolation.is_some_and(|i| i.read_only_elsewhere),
        })?)
    } else {
        None
    };
    Ok(Some(Prepared {
        label: describe(exec),
        tmp,
        child: Arc::new(ChildSetup {
            egirl: std::process::id() as libc::pid_t,
            arguments: init::own_arguments(),
            mounts,
            landlock,
            seccomp,
        }),
        _placeholders: placeholders,
    }))
}

/// The protected paths that lie inside a writable root: the fixed list,
/// plus the `.git` of each allowed path. egirl's own directories are
/// created first when missing, so a command cannot plant them.
fn protected_inside(ctx: &ToolContext, writable: &[PathBuf]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = ctx.protected.read_only().to_vec();
    paths.extend(ctx.allowed_paths.iter().map(|root| root.join(".git")));
    let own = [ctx.workspace.join(".egirl"), ctx.workspace.join("sessions")];
    paths
        .into_iter()
        .filter(|p| mounts::inside(p, writable))
        .filter(|p| {
            if own.contains(p) && !p.exists() {
                // Best effort: a directory we cannot create cannot be
                // planted by the command either (same permissions).
                let _ = std::fs::create_dir_all(p);
            }
            std::fs::symlink_metadata(p).is_ok()
        })
        .collect()
}

impl Prepared {
    /// Points `TMPDIR` at the private temp dir and confines the child
    /// between fork and exec.
    pub fn apply(&self, cmd: &mut tokio::process::Command) {
        cmd.env("TMPDIR", &self.tmp.path);
        let child = self.child.clone();
        // SAFETY: `enter` only makes raw syscalls on memory built before
        // the fork (paths, maps, the ruleset fd, the BPF program); it
        // allocates nothing and takes no lock.
        unsafe {
            cmd.pre_exec(move || child.enter());
        }
    }

    pub fn tmp_dir(&self) -> &Path {
        &self.tmp.path
    }
}

impl ChildSetup {
    /// In the child std forked: the namespaces (where it goes on as the
    /// keeper, [`init`], and only PID 1 returns), then the restrictions.
    fn enter(&self) -> std::io::Result<()> {
        let mut privileged = false;
        if let Some(mounts) = &self.mounts {
            init::die_with_parent(self.egirl)?;
            mounts.enter()?;
            init::fork_first_process(self.arguments)?;
            mounts::mount_proc()?;
            privileged = mounts.isolation().kind == mounts::NamespaceKind::Privileged;
        }
        if privileged {
            privileges::drop_all()?;
        }
        if privileged || self.landlock.is_some() || self.seccomp.is_some() {
            // SAFETY: plain prctl; required before both restrictions.
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if let Some(fd) = &self.landlock {
            // SAFETY: the ruleset fd is open (inherited across fork).
            let rc =
                unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) };
            if rc != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if let Some(program) = &self.seccomp {
            syscalls::install(program)?;
        }
        Ok(())
    }
}

/// A private temp dir (0700), removed with everything in it on drop.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> Result<Self, String> {
        use std::os::unix::fs::DirBuilderExt;
        let path = std::env::temp_dir().join(format!("egirl-exec-{}", uuid::Uuid::new_v4()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| {
                format!(
                    "cannot create the command's temp dir {}: {e}",
                    path.display()
                )
            })?;
        // Canonical, so the Landlock rule and TMPDIR agree with what the
        // command sees (e.g. /tmp behind a symlink).
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        Ok(Self { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
