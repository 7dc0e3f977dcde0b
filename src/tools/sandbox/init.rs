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
//! PID 1 is not the command: once `/proc` is mounted it forks the command
//! ([`fork_command`]) and only waits. A command that was PID 1 itself could
//! clear its own death signal (`prctl`, or an exec that changes its
//! credentials) and leave the keeper's group (`setsid`), and outlive its
//! timeout and egirl. egirl's PID 1 never execs, stays non-dumpable (its
//! memory out of the command's reach) and cannot be signalled from inside
//! its namespace.
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

/// Where egirl's command line lies in its memory (`arg_start`, `arg_end`
/// of `/proc/self/stat`), read in the parent: PID 1 is a copy of egirl
/// that the command can see, and its `/proc/1/cmdline` would show egirl's
/// arguments.
pub fn own_arguments() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // After the command name, which may hold spaces and parentheses, the
    // fields go on from the third: arg_start is the 48th.
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace().skip(45);
    let start = fields.next()?.parse().ok()?;
    let end = fields.next()?.parse().ok()?;
    (start < end).then_some((start, end))
}

/// In PID 1, once its `/proc` is mounted: returns Ok only in the forked
/// child, which goes on to become the command; PID 1 itself blanks its
/// copy of egirl's command line (`arguments`, see [`own_arguments`]), waits
/// for the command and exits as it did (see the module doc).
pub fn fork_command(arguments: Option<(usize, usize)>) -> io::Result<()> {
    // SAFETY: raw syscalls in a forked child; no allocation, no lock.
    unsafe {
        let pid = libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_ulong, 0, 0, 0, 0);
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid > 0 {
            if let Some((start, end)) = arguments {
                // This process's own copy of the argument strings, on the
                // stack the kernel laid out; nothing reads them again.
                std::ptr::write_bytes(start as *mut u8, 0, end - start);
            }
            keep(pid as libc::pid_t, -1);
        }
    }
    Ok(())
}

/// The keeper's (and PID 1's) life: holds `alive` open (none: -1), closes
/// every other descriptor, waits for `first`, exits as it did. Waiting for
/// any child reaps the orphans PID 1 inherits.
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
            let waited = libc::waitpid(-1, &mut status, 0);
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
