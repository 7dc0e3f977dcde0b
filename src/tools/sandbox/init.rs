//! The first processes of the command's PID namespace.
//!
//! After [`super::mounts::MountPlan::enter`] unshared the PID namespace,
//! the child std forked (the "keeper") forks twice: first PID 1 of the new
//! namespace, egirl's own idle process, then the command's process, which
//! mounts its own `/proc` and goes on to the rest of the sandbox and the
//! exec. The keeper stays behind in egirl's namespace, closes every
//! descriptor (std's close-on-exec error pipe among them, or `spawn()`
//! would wait for the command's end), waits for the command, then ends
//! PID 1 and exits with the command's status (128 + the signal when it was
//! killed).
//!
//! When PID 1 ends, the kernel kills everything else in the namespace: a
//! command leaves nothing running behind it (`setsid nohup … &` included).
//! Each holds a parent-death signal (SIGKILL): the keeper towards the egirl
//! thread that spawned it, PID 1 and the command towards the keeper; so
//! killing egirl, or the keeper (exec's timeout and stop kill its process
//! group), kills the whole namespace.
//!
//! PID 1 is not the command: a command that was PID 1 could clear its own
//! death signal (`prctl`, or an exec that changes its credentials) and
//! leave the keeper's group (`setsid`), and outlive its timeout and egirl.
//! egirl's PID 1 never execs (its death signal stays), stays non-dumpable
//! (its memory out of the command's reach), blanks its copy of egirl's
//! command line and cannot be signalled from inside its namespace.
//!
//! Only raw, async-signal-safe syscalls: the caller is a forked child of a
//! threaded process.

use std::io;

use super::mounts::check;

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

/// In the keeper: forks PID 1 and the command's process and returns Ok
/// only in the latter (the keeper exits with the command's status); Err
/// when a fork failed. `arguments`: see [`own_arguments`].
pub fn fork_first_process(arguments: Option<(usize, usize)>) -> io::Result<()> {
    let mut alive = [0 as libc::c_int; 2];
    // SAFETY: raw syscalls in a forked child; no allocation, no lock.
    unsafe {
        // Its read end sees EOF once the keeper is gone: the only way for
        // a child to notice the keeper died before its own death signal
        // was set.
        check(libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC))?;
        let init = fork_watching(alive)?;
        if init == 0 {
            idle(arguments);
        }
        let command = match fork_watching(alive) {
            Ok(pid) => pid,
            Err(e) => {
                libc::kill(init, libc::SIGKILL);
                return Err(e);
            }
        };
        if command > 0 {
            keep(command, init, alive[1]);
        }
    }
    Ok(())
}

/// Forks; in the child (0 returned) the death signal towards the keeper
/// is set, or the child ends at once when the keeper is already gone.
unsafe fn fork_watching(alive: [libc::c_int; 2]) -> io::Result<libc::pid_t> {
    // SAFETY: raw syscalls in a forked child; no allocation, no lock.
    unsafe {
        let pid = libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_ulong, 0, 0, 0, 0);
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid > 0 {
            return Ok(pid as libc::pid_t);
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
    Ok(0)
}

/// PID 1's life: no descriptor, children reaped by the kernel (SIGCHLD
/// ignored), egirl's command line blanked, waiting to be killed.
unsafe fn idle(arguments: Option<(usize, usize)>) -> ! {
    // SAFETY: raw syscalls in a forked child; it never returns into std.
    unsafe {
        libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
        libc::signal(libc::SIGCHLD, libc::SIG_IGN);
        if let Some((start, end)) = arguments {
            // This process's own copy of the argument strings, on the
            // stack the kernel laid out; nothing reads them again.
            std::ptr::write_bytes(start as *mut u8, 0, end - start);
        }
        loop {
            libc::pause();
        }
    }
}

/// The keeper's life: holds `alive` open, waits for `command`, ends `init`
/// (and with it the namespace) and exits as the command did.
unsafe fn keep(command: libc::pid_t, init: libc::pid_t, alive: libc::c_int) -> ! {
    // SAFETY: raw syscalls in a forked child; it never returns into std.
    unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        if alive > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, (alive - 1) as u32, 0u32);
        }
        libc::syscall(libc::SYS_close_range, (alive + 1) as u32, u32::MAX, 0u32);
        let mut status = 0;
        loop {
            let waited = libc::waitpid(command, &mut status, 0);
            if waited == command {
                break;
            }
            if waited == -1 && *libc::__errno_location() != libc::EINTR {
                status = 1 << 8;
                break;
            }
        }
        // Everything the command left running goes with PID 1; reaped
        // once the namespace is empty.
        libc::kill(init, libc::SIGKILL);
        let mut ignored = 0;
        while libc::waitpid(init, &mut ignored, 0) == -1 && *libc::__errno_location() == libc::EINTR
        {
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
