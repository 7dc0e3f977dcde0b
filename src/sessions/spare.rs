//! A new session's transcript file, made ahead of time. Creating a file
//! allocates an inode: 15 to 40 µs on ext4, and several hundred for half
//! a minute after many files were deleted nearby (docs/benchmarks.md, "a
//! new session's file"). A new session's first append renames the spare
//! into place instead, and the spare is made again after the turn, off
//! its path.
//!
//! The spare is `sessions/.spare`: not a `.jsonl`, so no listing of the
//! sessions sees it, and no session id can name it (`validate_id`).

use std::fs::{File, OpenOptions};
use std::path::Path;

const SPARE: &str = ".spare";

/// Makes `sessions/.spare` (empty) when it is missing. A failure is
/// ignored: the next new session then creates its file as before.
pub fn refill(sessions: &Path) {
    let _ = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(sessions.join(SPARE));
}

/// The spare renamed to `path` and opened for appending, when there is a
/// spare and nothing is at `path` yet (the rename never replaces a file:
/// a session file made meanwhile by another process stays as it is).
/// What the rename put there is written through only when it is an empty
/// regular file, never a link; anything else is removed again and `None`
/// sends the caller to create its file as before.
pub fn claim(path: &Path) -> Option<File> {
    let spare = path.parent()?.join(SPARE);
    rename_no_replace(&spare, path).ok()?;
    let file = open_for_append(path);
    match file {
        Some(file) => Some(file),
        None => {
            let _ = std::fs::remove_file(path);
            None
        }
    }
}

/// `path` opened to append without following a link at it, when it is an
/// empty regular file with no other name (not a hard link to a file
/// elsewhere).
fn open_for_append(path: &Path) -> Option<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let file = OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    (meta.is_file() && meta.len() == 0 && meta.nlink() == 1).then_some(file)
}

#[cfg(target_os = "linux")]
fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
    };
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: both are NUL-terminated paths that live across the call;
    // AT_FDCWD makes relative paths resolve as `std::fs` resolves them.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Elsewhere no rename refuses to replace a file in one step: no spare.
#[cfg(not(target_os = "linux"))]
fn rename_no_replace(_from: &Path, _to: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spare_is_renamed_into_place_once_and_made_again_by_refill() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.jsonl");
        assert!(claim(&a).is_none(), "no spare yet");
        assert!(!a.exists());
        refill(dir.path());
        refill(dir.path());
        let mut file = claim(&a).expect("the spare");
        std::io::Write::write_all(&mut file, b"{}\n").unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "{}\n");
        assert!(!dir.path().join(SPARE).exists());
        assert!(claim(&dir.path().join("b.jsonl")).is_none(), "used up");
        refill(dir.path());
        assert!(dir.path().join(SPARE).exists());
    }

    #[test]
    fn an_existing_session_file_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.jsonl");
        std::fs::write(&a, "kept\n").unwrap();
        refill(dir.path());
        assert!(claim(&a).is_none());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "kept\n");
        assert!(dir.path().join(SPARE).exists(), "the spare stays");
    }

    #[test]
    fn a_link_or_a_filled_file_as_the_spare_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "precious\n").unwrap();
        let sessions = dir.path().join("sessions");
        std::fs::create_dir(&sessions).unwrap();
        std::os::unix::fs::symlink(&outside, sessions.join(SPARE)).unwrap();
        let a = sessions.join("a.jsonl");
        assert!(claim(&a).is_none());
        assert!(std::fs::symlink_metadata(&a).is_err(), "the link is gone");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious\n");

        std::fs::write(sessions.join(SPARE), "not empty\n").unwrap();
        assert!(claim(&a).is_none());
        assert!(!a.exists());

        let empty = dir.path().join("empty.txt");
        std::fs::write(&empty, "").unwrap();
        std::fs::hard_link(&empty, sessions.join(SPARE)).unwrap();
        assert!(claim(&a).is_none(), "a second name of a file elsewhere");
        assert!(!a.exists() && empty.exists());
    }
}
