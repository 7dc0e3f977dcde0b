//! What this kernel offers the sandbox, probed once per process.
//!
//! Three pieces: Landlock (which ABI), seccomp filters, and a private mount
//! namespace (directly as a privileged root, else through a user namespace).
//! A missing piece is said once: a start-up notice, a line in `egirl doctor`
//! and in the approval modal (through [`super::describe`]).

use std::sync::OnceLock;

use super::mounts::NamespaceKind;

/// The Landlock ABI from which every write is confined: ABI 3 adds
/// truncation, which older kernels let through on read-only files.
pub const LANDLOCK_FULL_ABI: i32 = 3;

#[derive(Clone, Debug)]
pub struct Support {
    /// Landlock ABI version; 0 when Landlock is absent or disabled.
    pub landlock_abi: i32,
    /// Seccomp filters (`SECCOMP_RET_ERRNO`) can be installed.
    pub seccomp: bool,
    /// How a command gets a private mount namespace; Err says why it cannot.
    pub namespace: Result<NamespaceKind, String>,
}

/// The probe's result, computed on first use.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(|| Support {
        landlock_abi: landlock_abi(),
        seccomp: seccomp_filters(),
        namespace: super::mounts::probe_namespace(),
    })
}

impl Support {
    /// The pieces missing for a sandbox that writes (`writes_workspace`:
    /// the protected paths need the mount namespace) and blocks the network
    /// (`blocks_network`), one short phrase each.
    pub fn missing(&self, writes_workspace: bool, blocks_network: bool) -> Vec<String> {
        let mut out = Vec::new();
        match self.landlock_abi {
            0 => out.push("no Landlock (commands may write anywhere)".to_string()),
            abi if abi < LANDLOCK_FULL_ABI => out.push(format!(
                "Landlock ABI {abi} (truncating files is not confined)"
            )),
            _ => {}
        }
        if blocks_network && !self.seccomp {
            out.push("no seccomp filters (the network is not blocked)".to_string());
        }
        if writes_workspace && let Err(why) = &self.namespace {
            out.push(format!(
                "no private mount namespace ({why}): .git, .egirl, sessions and the config stay writable"
            ));
        }
        out
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
