//! What this kernel offers the sandbox, probed once per process.
//!
//! Three pieces: Landlock (which ABI), seccomp filters, and the private
//! namespaces (user, mount with everything read-only but the writable
//! roots, PID with its own `/proc`; as a root where user namespaces are off,
//! mount and PID with every capability dropped).
//! A missing piece is said once: a start-up notice, a line in `egirl doctor`
//! and in the approval modal (through [`super::describe`]).

use std::sync::OnceLock;

use std::io;

use super::mounts::{Isolation, MountPlan, NamespaceKind};

/// The Landlock ABI from which every write is confined: ABI 3 adds
/// truncation, which older kernels let through on read-only files.
pub const LANDLOCK_FULL_ABI: i32 = 3;

#[derive(Clone, Debug)]
pub struct Support {
    /// Landlock ABI version; 0 when Landlock is absent or disabled.
    pub landlock_abi: i32,
    /// Seccomp filters (`SECCOMP_RET_ERRNO`) can be installed.
    pub seccomp: bool,
    /// How a command gets its private namespaces; Err says why it cannot.
    pub namespace: Result<Isolation, String>,
}

/// The probe's result, computed on first use.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(|| Support {
        landlock_abi: landlock_abi(),
        seccomp: seccomp_filters(),
        namespace: probe_namespace(),
    })
}

impl Support {
    /// The pieces missing for the sandbox, one short phrase each;
    /// `blocks_network`: seccomp is needed for the network too.
    pub fn missing(&self, blocks_network: bool) -> Vec<String> {
        let mut out = Vec::new();
        match self.landlock_abi {
            0 => out.push("no Landlock (commands may write anywhere)".to_string()),
            abi if abi < LANDLOCK_FULL_ABI => out.push(format!(
                "Landlock ABI {abi} (truncating files is not confined)"
            )),
            _ => {}
        }
        if !self.seccomp {
            let what = if blocks_network {
                "the network, device nodes and file handles are not blocked"
            } else {
                "device nodes and file handles are not blocked"
            };
            out.push(format!("no seccomp filters ({what})"));
        }
        match &self.namespace {
            Err(why) => out.push(format!(
                "no private namespaces ({why}): .git, .egirl, sessions and the config stay writable, and commands see egirl's processes"
            )),
            Ok(found) => {
                if found.kind == NamespaceKind::Privileged {
                    out.push(
                        "no user namespace (root's capabilities are dropped instead)".to_string(),
                    );
                }
                if !found.read_only_elsewhere {
                    out.push(
                        "no mount_setattr (permissions, owners and times cannot be changed at all)"
                            .to_string(),
                    );
                }
            }
        }
        out
    }
}

/// Tries each way to the private namespaces in a throwaway child: a user
/// namespace first (root too), then, as root, the namespaces without one.
fn probe_namespace() -> Result<Isolation, String> {
    // SAFETY: a plain getter.
    let root = unsafe { libc::geteuid() } == 0;
    let mut first_error = None;
    for kind in [NamespaceKind::User, NamespaceKind::Privileged] {
        if kind == NamespaceKind::Privileged && !root {
            continue;
        }
        for read_only_elsewhere in [true, false] {
            let isolation = Isolation {
                kind,
                read_only_elsewhere,
            };
            match try_in_child(isolation) {
                Ok(()) => return Ok(isolation),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
    }
    Err(first_error.unwrap_or_else(|| "no way to a namespace".into()))
}

fn try_in_child(isolation: Isolation) -> Result<(), String> {
    let plan = MountPlan::new(isolation, &[], &[])?;
    // SAFETY: the child makes only raw, async-signal-safe calls and leaves
    // with _exit; the parent waits for it.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork failed: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        let entered = plan
            .enter()
            .and_then(|()| super::init::fork_first_process(None))
            .and_then(|()| super::mounts::mount_proc());
        let code = match entered {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().unwrap_or(libc::EINVAL),
        };
        // SAFETY: ends the child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    if waited != pid || !libc::WIFEXITED(status) {
        return Err("the namespace probe did not exit".into());
    }
    match libc::WEXITSTATUS(status) {
        0 => Ok(()),
        errno => Err(match isolation.kind {
            NamespaceKind::Privileged => format!(
                "unshare(CLONE_NEWNS | CLONE_NEWPID): {}",
                io::Error::from_raw_os_error(errno)
            ),
            NamespaceKind::User => {
                format!("user namespaces: {}", io::Error::from_raw_os_error(errno))
            }
        }),
    }
}

fn landlock_abi() -> i32 {
    // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    // SAFETY: the version query reads no memory.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    i32::try_from(abi).unwrap_or(0).max(0)
}

fn seccomp_filters() -> bool {
    let errno_action: u32 = libc::SECCOMP_RET_ERRNO;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL only reads the u32 we pass.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0u32,
            &errno_action as *const u32,
        )
    };
    rc == 0
}
