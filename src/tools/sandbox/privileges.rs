//! Root without a user namespace: every capability dropped before the exec.
//!
//! Where user namespaces are off, a root egirl still unshares the mount and
//! PID namespaces (it holds `CAP_SYS_ADMIN`), but the command would keep
//! every capability: device nodes, file handles, `chmod` on anything. So
//! the last step before the exec empties the bounding set (nothing can be
//! regained through a setuid or file-capability binary), clears the
//! ambient, inheritable, permitted and effective sets, and locks the
//! securebits so that uid 0 means no capability at the exec either
//! (`SECBIT_NOROOT`). The command is then an ordinary process of uid 0: it
//! still owns root's files.

use std::io;

use super::mounts::check;

const SECUREBITS: libc::c_ulong = (libc::SECBIT_NOROOT
    | libc::SECBIT_NOROOT_LOCKED
    | libc::SECBIT_NO_SETUID_FIXUP
    | libc::SECBIT_NO_SETUID_FIXUP_LOCKED
    | libc::SECBIT_KEEP_CAPS_LOCKED
    | libc::SECBIT_NO_CAP_AMBIENT_RAISE
    | libc::SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) as libc::c_ulong;

/// Higher than any capability a kernel knows: dropping an unknown one
/// fails with EINVAL, which ends the loop.
const CAP_CEILING: libc::c_ulong = 64;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// In the forked child, last before no_new_privs: drops every capability
/// for good. No allocation.
pub fn drop_all() -> io::Result<()> {
    // SAFETY: raw prctl and capset on memory of this frame.
    unsafe {
        check(libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0))?;
        for cap in 0..CAP_CEILING {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                break;
            }
        }
        check(libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        ))?;
        let mut header = CapHeader {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        let rc = libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            data.as_ptr(),
        );
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As root where user namespaces are off: after `drop_all` a uid 0
    /// process can make no device node and has no capability left.
    #[test]
    fn root_keeps_no_capability() {
        // SAFETY: a plain getter.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: not root");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let node = std::ffi::CString::new(dir.path().join("null").to_str().unwrap()).unwrap();
        // SAFETY: the child makes raw syscalls only and leaves with _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let code = unsafe {
                if drop_all().is_err() {
                    libc::_exit(2);
                }
                let made = libc::mknod(node.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3));
                let mut header = CapHeader {
                    version: CAPABILITY_VERSION_3,
                    pid: 0,
                };
                let mut data = [CapData {
                    effective: 1,
                    permitted: 1,
                    inheritable: 1,
                }; 2];
                libc::syscall(
                    libc::SYS_capget,
                    &mut header as *mut CapHeader,
                    data.as_mut_ptr(),
                );
                let none = data
                    .iter()
                    .all(|d| d.effective == 0 && d.permitted == 0 && d.inheritable == 0);
                let bounded = libc::prctl(libc::PR_CAPBSET_READ, 0, 0, 0, 0) == 0;
                if made == -1 && none && bounded { 0 } else { 1 }
            };
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status));
        assert_eq!(libc::WEXITSTATUS(status), 0);
        assert!(!dir.path().join("null").exists());
    }
}
