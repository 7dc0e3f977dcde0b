//! The network filter: a seccomp program that refuses `socket()` and
//! io_uring (whose `IORING_OP_SOCKET` and `IORING_OP_CONNECT` would go
//! around a syscall filter), with `EPERM`.
//!
//! Why seccomp and not a network namespace: it needs no privilege (a user
//! namespace may be off), and it blocks UDP and raw sockets too (Landlock's
//! network rules, ABI 4, only cover TCP bind and connect). Unix sockets are
//! refused as well: a tmux server, the systemd user manager or docker run
//! commands for whoever connects, outside the sandbox. `socketpair()` stays
//! (a private pair reaches nobody). A program for another architecture
//! (32-bit syscalls) is killed rather than let through.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, SeccompRule, TargetArch};

/// x32 syscalls on x86_64 carry this bit and pass the arch check.
#[cfg(target_arch = "x86_64")]
const X32_BIT: i64 = 0x4000_0000;

/// The program, built once per process (it never changes).
pub fn filter() -> Result<Arc<BpfProgram>, String> {
    static FILTER: OnceLock<Result<Arc<BpfProgram>, String>> = OnceLock::new();
    FILTER.get_or_init(|| build().map(Arc::new)).clone()
}

fn build() -> Result<BpfProgram, String> {
    let fail = |e: &dyn std::fmt::Display| format!("cannot build the network filter: {e}");
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| fail(&e))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for always in [
        libc::SYS_socket,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        rules.insert(always, Vec::new());
    }
    #[cfg(target_arch = "x86_64")]
    {
        rules.insert(libc::SYS_socket | X32_BIT, Vec::new());
        rules.insert(libc::SYS_io_uring_setup | X32_BIT, Vec::new());
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| fail(&e))?;
    BpfProgram::try_from(filter).map_err(|e| fail(&e))
}

/// In the forked child: installs `program` (no_new_privs is already set).
/// No allocation.
pub fn install(program: &BpfProgram) -> std::io::Result<()> {
    let prog = libc::sock_fprog {
        len: program.len() as libc::c_ushort,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: the kernel copies the program; `prog` outlives the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0u32,
            &prog as *const libc::sock_fprog,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
