//! The seccomp filter: syscalls a sandboxed command may not make, refused
//! with `EPERM`.
//!
//! Always refused, for what they would reach past the mounts and Landlock:
//! - device nodes (`mknod*` of a block or character device: one on the
//!   disk reads and writes any file); FIFOs and sockets stay;
//! - file handles (`open_by_handle_at` opens a file by inode, past any
//!   read-only bind; `name_to_handle_at` makes the handle);
//! - other processes' memory (`ptrace`, `process_vm_readv/writev`);
//! - mount changes (`mount`, `umount2`, `pivot_root` and the new mount API:
//!   the fresh `/proc` and the read-only binds stay where they are);
//! - namespaces (`setns`, `unshare` with a `CLONE_NEW*` flag);
//! - the kernel keyrings (`keyctl`, `add_key`, `request_key`): the session
//!   keyring is shared with egirl and the user's login, past every mount.
//!
//! With `network = false`, `socket()` and io_uring (whose
//! `IORING_OP_SOCKET` would go around a syscall filter) too. Why seccomp
//! and not a network namespace: it blocks UDP, raw and Unix sockets alike
//! (a tmux server, the systemd user manager or docker run commands for
//! whoever connects, outside the sandbox). `socketpair()` stays.
//!
//! Where the mounts cannot make everything but the writable roots read-only
//! (no mount namespace, or no `mount_setattr`), metadata changes
//! (`chmod`, `chown`, `utime*`, `*xattr`) are refused everywhere instead.
//!
//! A program for another architecture (32-bit syscalls) is killed rather
//! than let through; x32 numbers are refused like their x86_64 twins.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// x32 syscalls on x86_64 carry this bit and pass the arch check.
#[cfg(target_arch = "x86_64")]
const X32_BIT: i64 = 0x4000_0000;

/// What the filter refuses besides the fixed list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusing {
    pub network: bool,
    pub metadata: bool,
}

/// The program for `refusing`, built once per process per variant.
pub fn filter(refusing: Refusing) -> Result<Arc<BpfProgram>, String> {
    type Built = OnceLock<Result<Arc<BpfProgram>, String>>;
    static FILTERS: [Built; 4] = [const { OnceLock::new() }; 4];
    let slot = usize::from(refusing.network) * 2 + usize::from(refusing.metadata);
    FILTERS[slot]
        .get_or_init(|| build(refusing).map(Arc::new))
        .clone()
}

const ALWAYS: &[i64] = &[
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fsconfig,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_setns,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
];

const NETWORK: &[i64] = &[
    libc::SYS_socket,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
];

const METADATA: &[i64] = &[
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    libc::SYS_fchmodat2,
    libc::SYS_fchown,
    libc::SYS_fchownat,
    libc::SYS_utimensat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_chmod,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_chown,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_lchown,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_utime,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_utimes,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_futimesat,
];

const NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
    0x80, // CLONE_NEWTIME
];

type Rules = BTreeMap<i64, Vec<SeccompRule>>;

fn build(refusing: Refusing) -> Result<BpfProgram, String> {
    let fail = |e: &dyn std::fmt::Display| format!("cannot build the seccomp filter: {e}");
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| fail(&e))?;
    let mut rules = Rules::new();
    let mut lists = vec![ALWAYS];
    if refusing.network {
        lists.push(NETWORK);
    }
    if refusing.metadata {
        lists.push(METADATA);
    }
    for nr in lists.into_iter().flatten() {
        rules.insert(*nr, Vec::new());
    }
    device_nodes(&mut rules).map_err(|e| fail(&e))?;
    let unshare = NAMESPACE_FLAGS
        .iter()
        .map(|&flag| masked(0, flag as u64, flag as u64))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(&e))?;
    rules.insert(libc::SYS_unshare, unshare);
    #[cfg(target_arch = "x86_64")]
    {
        let native: Vec<(i64, Vec<SeccompRule>)> =
            rules.iter().map(|(nr, r)| (*nr, r.clone())).collect();
        for (nr, r) in native {
            rules.insert(nr | X32_BIT, r);
        }
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

/// `mknod` and `mknodat` when the mode names a block or character device.
fn device_nodes(rules: &mut Rules) -> Result<(), seccompiler::BackendError> {
    let kinds = [libc::S_IFBLK as u64, libc::S_IFCHR as u64];
    let mask = libc::S_IFMT as u64;
    let by_mode = |arg: u8| -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
        kinds.iter().map(|&kind| masked(arg, mask, kind)).collect()
    };
    rules.insert(libc::SYS_mknodat, by_mode(2)?);
    #[cfg(target_arch = "x86_64")]
    rules.insert(libc::SYS_mknod, by_mode(1)?);
    Ok(())
}

/// A rule matching `(arg & mask) == value`.
fn masked(arg: u8, mask: u64, value: u64) -> Result<SeccompRule, seccompiler::BackendError> {
    SeccompRule::new(vec![SeccompCondition::new(
        arg,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::MaskedEq(mask),
        value,
    )?])
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
