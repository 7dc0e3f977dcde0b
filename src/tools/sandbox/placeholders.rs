//! Empty `.git` directories made where a writable root has none, so that
//! the mount namespace can bind them read-only like an existing one: a
//! command that created `.git` would have the user's own `git` (a shell
//! prompt) run its hooks and fsmonitor outside the sandbox. git's discovery
//! passes over an empty `.git`.
//!
//! Removing a directory that is a mountpoint in another namespace detaches
//! that mount there: a placeholder removed while another command runs
//! would let that command create `.git` after all. So each command holds
//! a shared `flock` on every root's `.git` for its time, whichever egirl
//! process runs it, and a placeholder is removed (by the process that made
//! it, after the last of its own commands using it) only when an exclusive
//! lock shows nobody else holds it; otherwise it stays, empty.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The placeholders one command uses, and its locks on every root's `.git`.
#[derive(Default)]
pub(super) struct Placeholders {
    made: Vec<PathBuf>,
    held: Vec<(PathBuf, OwnedFd)>,
}

/// The placeholders this process made and how many of its running
/// commands use each.
static PLACEHOLDER_USERS: std::sync::Mutex<Vec<(PathBuf, usize)>> =
    std::sync::Mutex::new(Vec::new());

/// Tries a few times: another egirl may be removing its placeholder.
const LOCK_TRIES: usize = 50;

impl Placeholders {
    pub(super) fn create(roots: &[PathBuf]) -> Self {
        let mut users = PLACEHOLDER_USERS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut this = Self::default();
        for git in roots
            .iter()
            .filter(|root| root.is_dir())
            .map(|root| root.join(".git"))
        {
            for _ in 0..LOCK_TRIES {
                if let Some((_, count)) = users.iter_mut().find(|(p, _)| *p == git) {
                    *count += 1;
                    this.made.push(git.clone());
                } else if std::fs::symlink_metadata(&git).is_err()
                    // Best effort: a root we cannot write, the command cannot either.
                    && std::fs::create_dir(&git).is_ok()
                {
                    users.push((git.clone(), 1));
                    this.made.push(git.clone());
                }
                match shared_lock(&git) {
                    Lock::Held(fd) => {
                        this.held.push((git, fd));
                        break;
                    }
                    Lock::NotADirectory => break,
                    Lock::Busy => {
                        this.release(&mut users, &git);
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                }
            }
        }
        this
    }

    /// Drops this command's use of `git`; the last user in this process
    /// removes it when no other process holds it.
    fn release(&mut self, users: &mut Vec<(PathBuf, usize)>, git: &Path) {
        let lock = self
            .held
            .iter()
            .position(|(p, _)| p == git)
            .map(|at| self.held.remove(at).1);
        let Some(at) = self.made.iter().position(|p| p == git) else {
            return;
        };
        self.made.remove(at);
        let Some(at) = users.iter().position(|(p, _)| p == git) else {
            return;
        };
        users[at].1 -= 1;
        if users[at].1 > 0 {
            return;
        }
        users.remove(at);
        // SAFETY: flock on a descriptor we own.
        let alone = lock.is_some_and(|fd| unsafe {
            libc::flock(fd.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0
        });
        if alone {
            // Only an empty directory goes: whatever the user put there since stays.
            let _ = std::fs::remove_dir(git);
        }
    }
}

enum Lock {
    Held(OwnedFd),
    /// Being removed by its last holder, or replaced: try again.
    Busy,
    /// Not a directory we can open (a file, a dangling link): nothing to hold.
    NotADirectory,
}

/// A shared lock on the directory `git`, still at that path once held.
fn shared_lock(git: &Path) -> Lock {
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(git)
    else {
        return match std::fs::symlink_metadata(git) {
            Ok(_) => Lock::NotADirectory,
            Err(_) => Lock::Busy,
        };
    };
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } != 0 {
        return Lock::Busy;
    }
    let same = match (file.metadata(), std::fs::metadata(git)) {
        (Ok(held), Ok(now)) => held.ino() == now.ino() && held.dev() == now.dev(),
        _ => false,
    };
    if same {
        Lock::Held(file.into())
    } else {
        Lock::Busy
    }
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        let mut users = PLACEHOLDER_USERS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for git in self.made.clone() {
            self.release(&mut users, &git);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Placeholders;

    #[test]
    fn a_placeholder_stays_until_the_last_command_using_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let first = Placeholders::create(std::slice::from_ref(&root));
        let second = Placeholders::create(std::slice::from_ref(&root));
        assert!(root.join(".git").is_dir());
        drop(first);
        assert!(
            root.join(".git").is_dir(),
            "removed under a running command"
        );
        drop(second);
        assert!(!root.join(".git").exists());
        // A `.git` of the user's own is never touched.
        std::fs::create_dir(root.join(".git")).unwrap();
        drop(Placeholders::create(std::slice::from_ref(&root)));
        assert!(root.join(".git").is_dir());
    }

    #[test]
    fn a_placeholder_another_process_holds_stays() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let ours = Placeholders::create(std::slice::from_ref(&root));
        // Another egirl's command: its own open file and shared lock.
        let theirs = std::fs::File::open(root.join(".git")).unwrap();
        // SAFETY: flock on a descriptor we own.
        assert_eq!(unsafe { libc::flock(theirs.as_raw_fd(), libc::LOCK_SH) }, 0);
        drop(ours);
        assert!(root.join(".git").is_dir(), "removed under another process");
    }
}
