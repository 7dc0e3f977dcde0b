//! Opening only regular files, without blocking on anything else.
//!
//! `open(2)` on a FIFO waits for a writer (or, to append, a reader), for
//! ever, and no interrupt wakes a blocking thread: a FIFO named
//! `memory/x.md` hung `memory_get` and the turn with it. Devices and
//! sockets are no files to read as text either. Files the model can name
//! (the file tools, memory, the workspace's own files) are opened here:
//! with `O_NONBLOCK`, so a FIFO opens at once, then checked with `fstat` on
//! the open file, so a regular file swapped for a FIFO between a check and
//! the open is still refused.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Opens `path` for reading if it is a regular file (after symlinks).
pub fn open(path: &Path) -> io::Result<File> {
    open_with(path, OpenOptions::new().read(true))
}

/// Opens `path` for appending, creating it, if it is (or becomes) a
/// regular file.
pub fn open_append(path: &Path) -> io::Result<File> {
    open_with(path, OpenOptions::new().create(true).append(true))
}

/// Opens `path` for appending, creating it, if it is a regular file that
/// is not a link (an `ELOOP` error for one).
pub fn open_append_unlinked(path: &Path) -> io::Result<File> {
    open_with_flags(
        path,
        OpenOptions::new().create(true).append(true),
        libc::O_NOFOLLOW,
    )
}

/// The whole content of a regular file.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = open(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The whole content of a regular file, as UTF-8.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Ok when `meta` is a regular file; else an error naming what it is.
pub fn check(meta: &Metadata) -> io::Result<()> {
    let kind = meta.file_type();
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a file"
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("not a regular file ({what})"),
    ))
}

fn open_with(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    open_with_flags(path, options, 0)
}

fn open_with_flags(path: &Path, options: &mut OpenOptions, flags: i32) -> io::Result<File> {
    // Checked first so that a device is never even opened.
    match std::fs::metadata(path) {
        Ok(meta) => check(&meta)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    // O_NONBLOCK only changes how FIFOs and devices open and read; reads
    // of a regular file never block on it.
    let file = options.custom_flags(libc::O_NONBLOCK | flags).open(path)?;
    check(&file.metadata()?)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn fifos_devices_and_directories_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.md");
        mkfifo(&fifo);
        for path in [fifo.as_path(), Path::new("/dev/null"), dir.path()] {
            let err = read(path).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{path:?}");
            assert!(err.to_string().contains("not a regular file"), "{err}");
            assert!(open_append(path).is_err(), "{path:?}");
        }
    }

    #[test]
    fn regular_files_read_and_append() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.md");
        std::io::Write::write_all(&mut open_append(&file).unwrap(), b"one\n").unwrap();
        std::io::Write::write_all(&mut open_append(&file).unwrap(), b"two\n").unwrap();
        assert_eq!(read_to_string(&file).unwrap(), "one\ntwo\n");
    }
}
