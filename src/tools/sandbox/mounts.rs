//! Read-only bind mounts over the protected paths, in a mount namespace of
//! the command's own.
//!
//! Landlock only grants, it cannot deny a subtree of a writable root; so the
//! protected paths inside the workspace (`.git`, `.egirl`, `sessions`, the
//! config, the loaded `.env` files) are bound onto themselves and remounted
//! read-only in a private mount namespace. Root with `CAP_SYS_ADMIN` unshares
//! the mount namespace alone; anyone else goes through a new user namespace
//! that maps only their own uid and gid (the mounts are then "locked": the
//! remount keeps the flags read with statvfs in the parent, or the kernel
//! refuses it). `/` is made a slave first so nothing leaks to the host.
//! Landlock's restriction, applied afterwards, forbids the command to
//! unmount them.
//!
//! Everything is prepared in the parent; [`MountPlan::enter`] runs in the
//! forked child and makes only raw, async-signal-safe syscalls.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// How this process gets a private mount namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamespaceKind {
    /// Root with `CAP_SYS_ADMIN`: `unshare(CLONE_NEWNS)` alone.
    Privileged,
    /// Anyone else: a user namespace mapping only our own uid and gid.
    User,
}

pub struct MountPlan {
    kind: NamespaceKind,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Each path to make read-only, with the flags its mount must keep.
    targets: Vec<(CString, libc::c_ulong)>,
    /// Files the command reads as empty (`/dev/null` bound over them).
    hidden: Vec<CString>,
}

impl MountPlan {
    /// A plan for `paths` (those that exist; the rest are skipped).
    pub fn new(kind: NamespaceKind, paths: &[PathBuf]) -> Result<Self, String> {
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let mut targets = Vec::new();
        for path in paths {
            if std::fs::symlink_metadata(path).is_err() {
                continue;
            }
            let c = CString::new(path.as_os_str().as_bytes())
                .map_err(|_| format!("{} has a NUL byte", path.display()))?;
            let locked = locked_flags(&c)
                .map_err(|e| format!("cannot read the mount flags of {}: {e}", path.display()))?;
            targets.push((c, locked));
        }
        Ok(Self {
            kind,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            targets,
            hidden: Vec::new(),
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

    pub fn is_empty(&self) -> bool {
        self.targets.is_empty() && self.hidden.is_empty()
    }

    /// In the forked child: a private mount namespace with every target
    /// read-only. Only async-signal-safe syscalls, no allocation.
    pub fn enter(&self) -> io::Result<()> {
        let flags = match self.kind {
            NamespaceKind::Privileged => libc::CLONE_NEWNS,
            NamespaceKind::User => libc::CLONE_NEWNS | libc::CLONE_NEWUSER,
        };
        // SAFETY: raw syscalls on NUL-terminated strings prepared in the parent.
        unsafe {
            check(libc::unshare(flags))?;
            if self.kind == NamespaceKind::User {
                write_proc(c"/proc/self/setgroups", b"deny")?;
                write_proc(c"/proc/self/uid_map", &self.uid_map)?;
                write_proc(c"/proc/self/gid_map", &self.gid_map)?;
            }
            let none = std::ptr::null();
            check(libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            ))?;
            for (path, locked) in &self.targets {
                check(libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    none,
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
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
        }
        Ok(())
    }
}

/// Tries each way to a private mount namespace in a throwaway child.
pub fn probe_namespace() -> Result<NamespaceKind, String> {
    // SAFETY: a plain getter.
    let root = unsafe { libc::geteuid() } == 0;
    let mut last = String::new();
    for kind in [NamespaceKind::Privileged, NamespaceKind::User] {
        if kind == NamespaceKind::Privileged && !root {
            continue;
        }
        match try_in_child(kind) {
            Ok(()) => return Ok(kind),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn try_in_child(kind: NamespaceKind) -> Result<(), String> {
    let plan = MountPlan::new(kind, &[])?;
    // SAFETY: the child makes only the async-signal-safe calls of `enter`
    // and leaves with _exit; the parent waits for it.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork failed: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        let code = match plan.enter() {
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
        errno => Err(match kind {
            NamespaceKind::Privileged => format!(
                "unshare(CLONE_NEWNS): {}",
                io::Error::from_raw_os_error(errno)
            ),
            NamespaceKind::User => {
                format!("user namespaces: {}", io::Error::from_raw_os_error(errno))
            }
        }),
    }
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

fn check(rc: libc::c_int) -> io::Result<()> {
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
