//! The first process of the command's PID namespace.
//!
//! After [`super::mounts::MountPlan::enter`] unshared the PID namespace,
//! the child std forked (the "keeper") forks once more: that child is PID 1
//! of the new namespace, mounts its own `/proc` and goes on to the rest of
//! the sandbox and the exec. The keeper stays behind in egirl's namespace,
//! closes every descriptor (std's close-on-exec error pipe among them, or
//! `spawn()` would wait for the command's end), waits for PID 1 and exits
//! with its status (128 + the signal when it was killed).
//!
//! When PID 1 ends, the kernel kills everything else in the namespace: a
//! command leaves nothing running behind it (`setsid nohup … &` included).
//! Each holds a parent-death signal (SIGKILL): the keeper towards the egirl
//! thread that spawned it, PID 1 towards the keeper; so killing egirl, or
//! the keeper (exec's timeout and stop kill its process group), kills the
//! whole namespace.
//!
//! Only raw, async-signal-safe syscalls: the caller is a forked child of a
//! threaded process.

use std::io;

use super::mounts::check;

/// In the keeper: returns Ok only in the new PID 1 (never in the keeper,
/// which exits with PID 1's status); Err when the fork failed.
pub fn fork_first_process() -> io::Result<()> {
    let mut alive = [0 as libc::c_int; 2];
    // SAFETY: raw syscalls in a forked child; no allocation, no lock.
    unsafe {
        // Its read end sees EOF once the keeper is gone: the only way for
        // PID 1 to notice the keeper died before its own death signal was
        // set.
        check(libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC))?;
        let pid = libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_ulong, 0, 0, 0, 0);
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid > 0 {
            keep(pid as libc::pid_t, alive[1]);
        }
        libc::close(alive[1]);
        check(libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ))?;
        let mut poll = libc::pollfd {
            fd: alive[0],
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&mut poll, 1, 0) != 0 {
            libc::_exit(137);
        }
        libc::close(alive[0]);
    }
    Ok(())
}

/// The keeper's life: holds `alive` open, waits for `first`, exits as it
/// did.
unsafe fn keep(first: libc::pid_t, alive: libc::c_int) -> ! {
    // SAFETY: raw syscalls in a forked child; it never returns into std.
    unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        if alive > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (alive - 1) as u32, 0u32);
        }
        libc::syscall(libc::SYS_close_range, (alive + 1) as u32, u32::MAX, 0u32);
        let mut status = 0;
        loop {
            let waited = libc::waitpid(first, &mut status, 0);
            if waited == first {
                break;
            }
            if waited == -1 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(1);
            }
        }
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else if libc::WIFSIGNALED(status) {
            128 + libc::WTERMSIG(status)
        } else {
            1
        };
        libc::_exit(code)
    }
}

/// The keeper's own death signal, towards the egirl thread that forked it;
/// Err when egirl is already gone (`egirl` its pid, read before the fork).
pub fn die_with_parent(egirl: libc::pid_t) -> io::Result<()> {
    // SAFETY: plain prctl and getppid.
    unsafe {
        check(libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ))?;
        if libc::getppid() != egirl {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    Ok(())
}
