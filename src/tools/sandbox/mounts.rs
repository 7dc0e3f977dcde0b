//! The command's namespaces: a user namespace (root's too), a mount
//! namespace in which everything is read-only but the writable roots, an
//! IPC namespace and a PID namespace (entered by [`super::init`]).
//!
//! Landlock only grants, it cannot deny a subtree of a writable root, and it
//! does not cover metadata (`chmod`, `chown`, `utime`, `setxattr`) at all.
//! So in a private mount namespace every mount is made read-only
//! (`mount_setattr(AT_RECURSIVE)` on `/`), the writable roots are bound
//! back read-write, and the protected paths inside them (`.git`, `.egirl`,
//! `sessions`, the config, the loaded `.env` files) bound read-only again.
//! `EROFS` then stops every write and every metadata change elsewhere, as
//! root too.
//!
//! The user namespace maps only the caller's own uid and gid (root: 0 to
//! 0): root inside has its capabilities in the new namespace only, so it
//! cannot make device nodes, open files by handle or change what the mounts
//! it inherited lock. Where user namespaces are off, root unshares the
//! mount and PID namespaces directly and drops every capability afterwards
//! ([`super::privileges`]); anyone else gets no namespace at all.
//!
//! Everything is prepared in the parent; [`MountPlan::enter`] runs in the
//! forked child and makes only raw, async-signal-safe syscalls.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// How this process gets its private namespaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamespaceKind {
    /// A user namespace mapping only our own uid and gid (root too).
    User,
    /// Root where user namespaces are off: mount and PID namespaces with
    /// every capability dropped before the exec.
    Privileged,
}

/// What the probe found to work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Isolation {
    pub kind: NamespaceKind,
    /// Every mount but the writable roots is read-only (`mount_setattr`,
    /// Linux 5.12); when false, metadata changes are refused by seccomp.
    pub read_only_elsewhere: bool,
}

pub struct MountPlan {
    isolation: Isolation,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Bound back read-write, parents first.
    writable: Vec<CString>,
    /// Each path to make read-only, with the flags its mount must keep.
    targets: Vec<(CString, libc::c_ulong)>,
    /// Files the command reads as empty (`/dev/null` bound over them).
    hidden: Vec<CString>,
    /// Directories the command sees empty (a read-only tmpfs over them).
    hidden_dirs: Vec<CString>,
}

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;

impl MountPlan {
    /// A plan making `protected` read-only inside `writable` (those that
    /// exist; the rest are skipped).
    pub fn new(
        isolation: Isolation,
        writable: &[PathBuf],
        protected: &[PathBuf],
    ) -> Result<Self, String> {
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let mut targets = Vec::new();
        for path in protected {
            if std::fs::symlink_metadata(path).is_err() {
                continue;
            }
            let c = c_path(path)?;
            let locked = locked_flags(&c)
                .map_err(|e| format!("cannot read the mount flags of {}: {e}", path.display()))?;
            targets.push((c, locked));
        }
        let mut roots: Vec<&PathBuf> = writable
            .iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .collect();
        roots.sort_by_key(|p| p.components().count());
        roots.dedup();
        let writable = if isolation.read_only_elsewhere {
            roots
                .into_iter()
                .map(|p| c_path(p))
                .collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        Ok(Self {
            isolation,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            writable,
            targets,
            hidden: Vec::new(),
            hidden_dirs: Vec::new(),
        })
    }

    /// Binds `/dev/null` over each of `files` (those that are regular
    /// files): the loaded `.env` files, which a command would otherwise
    /// print in a form redaction does not recognise (`rev`, `base64`).
    pub fn hiding(mut self, files: &[PathBuf]) -> Self {
        self.hidden = files
            .iter()
            .filter(|f| f.is_file())
            .filter_map(|f| CString::new(f.as_os_str().as_bytes()).ok())
            .collect();
        self
    }

    /// Mounts an empty read-only tmpfs over each of `dirs` (those that
    /// exist): other agents' workspaces, which an agent's commands may
    /// neither read nor change.
    pub fn hiding_dirs(mut self, dirs: &[PathBuf]) -> Self {
        self.hidden_dirs = dirs
            .iter()
            .filter(|d| d.is_dir())
            .filter_map(|d| CString::new(d.as_os_str().as_bytes()).ok())
            .collect();
        self
    }

    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// In the forked child: new user (unless privileged), mount and PID
    /// namespaces, with the mounts of the plan. The PID namespace holds the
    /// next child forked ([`super::init`]). Only async-signal-safe
    /// syscalls, no allocation.
    pub fn enter(&self) -> io::Result<()> {
        let user = self.isolation.kind == NamespaceKind::User;
        // An IPC namespace of its own: System V and POSIX IPC objects the
        // command makes go with it, and those of egirl's other processes
        // are out of its reach.
        let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
        if user {
            flags |= libc::CLONE_NEWUSER;
        }
        // SAFETY: raw syscalls on NUL-terminated strings prepared in the parent.
        unsafe {
            // egirl is non-dumpable (`hide_own_environment`), which would
            // make /proc/self/uid_map root's; this child needs its own.
            if user {
                check(libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0))?;
            }
            check(libc::unshare(flags))?;
            if user {
                write_proc(c"/proc/self/setgroups", b"deny")?;
                write_proc(c"/proc/self/uid_map", &self.uid_map)?;
                write_proc(c"/proc/self/gid_map", &self.gid_map)?;
                // This process lives as long as the command, in egirl's
                // PID namespace: its /proc files (egirl's environment) go
                // back to root.
                check(libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0))?;
            }
            let none = std::ptr::null();
            check(libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            ))?;
            if self.isolation.read_only_elsewhere {
                set_read_only(c"/", true, libc::AT_RECURSIVE)?;
                for root in &self.writable {
                    bind(root, root)?;
                    set_read_only(root, false, 0)?;
                }
            }
            for (path, locked) in &self.targets {
                bind(path, path)?;
                check(libc::mount(
                    none,
                    path.as_ptr(),
                    none,
                    libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | locked,
                    std::ptr::null(),
                ))?;
            }
            for path in &self.hidden {
                check(libc::mount(
                    c"/dev/null".as_ptr(),
                    path.as_ptr(),
                    none,
                    libc::MS_BIND,
                    std::ptr::null(),
                ))?;
            }
            for path in &self.hidden_dirs {
                check(libc::mount(
                    c"tmpfs".as_ptr(),
                    path.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"size=4k,mode=555".as_ptr().cast(),
                ))?;
            }
            // std changed into the command's directory before this: that
            // directory still points at the mount below the new ones (the
            // read-only one). Entering it again by name lands on top.
            let mut cwd = [0u8; libc::PATH_MAX as usize];
            if !libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()).is_null() {
                check(libc::chdir(cwd.as_ptr().cast()))?;
            }
        }
        Ok(())
    }
}

/// In the first process of the PID namespace: a `/proc` of its own, which
/// shows only the command's processes. Read-only: root in the user
/// namespace is uid 0 to the kernel, and the sysctl files check the uid,
/// not a capability (`kernel.core_pattern` names a program the kernel runs
/// as root); Landlock refuses those writes too, where the kernel has it.
pub fn mount_proc() -> io::Result<()> {
    // SAFETY: a raw mount on static strings.
    check(unsafe {
        libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
            std::ptr::null(),
        )
    })
}

unsafe fn bind(from: &CString, to: &CString) -> io::Result<()> {
    // SAFETY: NUL-terminated strings prepared in the parent.
    check(unsafe {
        libc::mount(
            from.as_ptr(),
            to.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    })
}

/// `mount_setattr` setting (`read_only`) or clearing the read-only flag of
/// the mount at `path` (and those below it with `AT_RECURSIVE`).
unsafe fn set_read_only(path: &std::ffi::CStr, read_only: bool, flags: i32) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `attr` outlives the call; its size is passed with it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn c_path(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{} has a NUL byte", path.display()))
}

/// The flags a remount of `path`'s mount must keep (a locked mount refuses
/// to drop them).
fn locked_flags(path: &CString) -> io::Result<libc::c_ulong> {
    // SAFETY: statvfs fills the zeroed struct we own.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    check(unsafe { libc::statvfs(path.as_ptr(), &mut st) })?;
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(pairs
        .iter()
        .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
        .fold(0, |acc, (_, ms)| acc | ms))
}

/// open + write + close, as the child may (no allocation).
unsafe fn write_proc(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: the caller is the child; path is NUL-terminated, bytes ours.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        check(fd)?;
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n != bytes.len() as isize {
            return Err(err);
        }
    }
    Ok(())
}

pub(super) fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `path` lies under one of `roots`.
pub fn inside(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| path.starts_with(r))
}
