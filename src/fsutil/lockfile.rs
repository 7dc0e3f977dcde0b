//! Advisory file locks (flock): the kernel drops them when the process
//! exits, however it exits, so a crash never leaves a stale lock behind.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// An exclusive lock, held until dropped.
#[derive(Debug)]
pub struct FileLock {
    file: File,
    path: PathBuf,
}

impl FileLock {
    /// Takes the lock without waiting: `Ok(None)` when another process (or
    /// another open of the file in this one) holds it.
    pub fn try_acquire(path: &Path) -> Result<Option<Self>> {
        let file = open(path)?;
        match flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
            Ok(()) => Ok(Some(Self {
                file,
                path: path.to_path_buf(),
            })),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot lock {}", path.display())),
        }
    }

    /// Waits for the lock (for short critical sections such as a
    /// read-modify-write of a small file).
    pub fn acquire(path: &Path) -> Result<Self> {
        let file = open(path)?;
        loop {
            match flock(&file, libc::LOCK_EX) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot lock {}", path.display()));
                }
            }
        }
        Ok(Self {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Writes a note into the lock file (the holder's pid) for whoever
    /// finds it taken.
    pub fn write_note(&mut self, note: &str) -> Result<()> {
        let write = |file: &mut File| -> std::io::Result<()> {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            file.write_all(note.as_bytes())?;
            file.flush()
        };
        write(&mut self.file).with_context(|| format!("cannot write {}", self.path.display()))
    }
}

/// The note the holder left in a lock file (empty when none or unreadable).
pub fn read_note(path: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut file) = File::open(path) {
        let _ = file.read_to_string(&mut text);
    }
    text.trim().to_string()
}

fn open(path: &Path) -> Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    // Never truncated on open: the holder's note must survive a failed try.
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))
}

fn flock(file: &File, operation: libc::c_int) -> std::io::Result<()> {
    // SAFETY: flock on a descriptor we own; it only reads its arguments.
    let rc = unsafe { libc::flock(file.as_raw_fd(), operation) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".egirl/services.lock");
        let mut first = FileLock::try_acquire(&path).unwrap().expect("free");
        first.write_note("pid 42").unwrap();
        assert!(FileLock::try_acquire(&path).unwrap().is_none());
        assert_eq!(read_note(&path), "pid 42");
        drop(first);
        assert!(FileLock::try_acquire(&path).unwrap().is_some());
    }
}
