//! Confinement of file tools to the workspace and `[tools] allowed_paths`.
//!
//! Every path a tool touches goes through [`resolve`]: it is made absolute,
//! canonicalized (so `..` and symlinks are followed to where they really
//! lead) and then checked against the roots. A path that does not exist yet
//! (for `write_file`) is resolved through its deepest existing ancestor; the
//! missing rest must be plain names, so nothing can climb out after the
//! check.
//!
//! The check and the later open are not atomic: a process racing to swap a
//! directory for a symlink in between could still escape. The model cannot
//! do that without `exec`, which needs approval.

use std::io;
use std::path::{Component, Path, PathBuf};

/// What the caller is about to do with the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Writes may not touch `<workspace>/.egirl/`: it holds the exec
    /// approvals, and a model that could edit them could approve itself.
    Write,
}

/// Resolves `requested` (relative to the workspace, or absolute) to a
/// canonical path inside the workspace or one of the `allowed` roots.
///
/// The path need not exist; callers report "not found" themselves. The error
/// is one line naming the path and the roots, ready for the model.
pub fn resolve(
    workspace: &Path,
    allowed: &[PathBuf],
    requested: &str,
    access: Access,
) -> Result<PathBuf, String> {
    if requested.trim().is_empty() {
        return Err("the path is empty; give a path relative to the workspace".into());
    }
    if requested.contains('\0') {
        return Err(format!("path `{requested}` contains a NUL byte"));
    }
    let workspace = canonical_root(workspace);
    let expanded = crate::config::expand_home(requested);
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        workspace.join(expanded)
    };
    let resolved = canonicalize_lenient(&joined).map_err(|e| format!("path `{requested}`: {e}"))?;

    let mut roots = vec![workspace.clone()];
    roots.extend(allowed.iter().map(|root| canonical_root(root)));
    if !roots.iter().any(|root| resolved.starts_with(root)) {
        let shown = roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let via = if resolved == joined {
            String::new()
        } else {
            format!(" (it resolves to {})", resolved.display())
        };
        return Err(format!(
            "path `{requested}` is outside the allowed roots{via}; file tools may only use {shown}"
        ));
    }
    if access == Access::Write && resolved.starts_with(workspace.join(".egirl")) {
        return Err(format!(
            "path `{requested}` is inside .egirl/, which holds egirl's own state; file tools may not write there"
        ));
    }
    Ok(resolved)
}

/// How a resolved path is shown to the model: relative to the workspace when
/// inside it (short, and what the model would pass back), absolute otherwise.
pub fn display(workspace: &Path, path: &Path) -> String {
    match path.strip_prefix(canonical_root(workspace)) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// Roots are canonical already (ToolContext promises it); a root that cannot
/// be canonicalized (deleted meanwhile) is used as given, which still only
/// matches paths that canonicalize to below it.
fn canonical_root(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

/// Canonicalizes `path`; when it does not exist, canonicalizes the deepest
/// ancestor that does and appends the rest, which must be plain names.
fn canonicalize_lenient(path: &Path) -> Result<PathBuf, String> {
    match std::fs::canonicalize(path) {
        Ok(canonical) => return Ok(canonical),
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e.to_string()),
        Err(_) => {}
    }
    // Walk up until something exists. `symlink_metadata` rather than
    // `exists()`: a dangling symlink exists as a link, and appending its
    // name to the parent would let a write follow it anywhere.
    let mut existing = path;
    let mut missing = Vec::new();
    while existing.symlink_metadata().is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name);
                existing = parent;
            }
            // A trailing `..` (or `.`) has no file name: the path climbs
            // through a directory that does not exist.
            _ => return Err("`..` after a directory that does not exist".into()),
        }
    }
    if existing.is_symlink() && std::fs::metadata(existing).is_err() {
        return Err(format!(
            "{} is a symlink to a missing target",
            existing.display()
        ));
    }
    let mut resolved = std::fs::canonicalize(existing).map_err(|e| e.to_string())?;
    // The rest is appended without asking the disk, so it must be plain
    // names; `file_name()` guarantees that, but this line is what keeps the
    // confinement honest, so say it explicitly.
    for name in missing.iter().rev() {
        match Path::new(name).components().next() {
            Some(Component::Normal(_)) => resolved.push(name),
            _ => return Err("`..` after a directory that does not exist".into()),
        }
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("src/a.txt"), "a").unwrap();
        let ws = std::fs::canonicalize(ws).unwrap();
        (dir, ws)
    }

    #[test]
    fn relative_paths_resolve_inside_the_workspace() {
        let (_dir, ws) = setup();
        let p = resolve(&ws, &[], "src/a.txt", Access::Read).unwrap();
        assert_eq!(p, ws.join("src/a.txt"));
        let p = resolve(&ws, &[], "src/../src/a.txt", Access::Read).unwrap();
        assert_eq!(p, ws.join("src/a.txt"));
        let p = resolve(&ws, &[], "./new/dir/file.md", Access::Write).unwrap();
        assert_eq!(p, ws.join("new/dir/file.md"));
        assert_eq!(display(&ws, &p), "new/dir/file.md");
        assert_eq!(display(&ws, &ws), ".");
    }

    #[test]
    fn dotdot_escapes_are_refused() {
        let (_dir, ws) = setup();
        for bad in [
            "../x",
            "../ws-other/x",
            "src/../../x",
            "missing/../../x",
            "missing/..",
            "missing/../x",
        ] {
            let err = resolve(&ws, &[], bad, Access::Write).unwrap_err();
            assert!(err.contains(bad), "{bad}: {err}");
        }
        let err = resolve(&ws, &[], "../x", Access::Read).unwrap_err();
        assert!(err.contains("outside"), "{err}");
        assert!(err.contains(&ws.display().to_string()), "{err}");
    }

    #[test]
    fn absolute_paths_outside_are_refused() {
        let (_dir, ws) = setup();
        let err = resolve(&ws, &[], "/etc/passwd", Access::Read).unwrap_err();
        assert!(
            err.contains("/etc/passwd") && err.contains("outside"),
            "{err}"
        );
        assert!(resolve(&ws, &[], "/", Access::Read).is_err());
        let inside = ws.join("src/a.txt");
        let ok = resolve(&ws, &[], inside.to_str().unwrap(), Access::Read).unwrap();
        assert_eq!(ok, inside);
    }

    #[test]
    fn symlinks_pointing_outside_are_refused() {
        let (dir, ws) = setup();
        let outside = dir.path().join("secret");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("key"), "k").unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
        std::os::unix::fs::symlink(outside.join("key"), ws.join("keylink")).unwrap();
        std::os::unix::fs::symlink(outside.join("nope"), ws.join("dangling")).unwrap();

        let err = resolve(&ws, &[], "link/key", Access::Read).unwrap_err();
        assert!(err.contains("resolves to"), "{err}");
        assert!(resolve(&ws, &[], "keylink", Access::Read).is_err());
        // Writing a new file through a symlinked directory is caught too.
        assert!(resolve(&ws, &[], "link/new.txt", Access::Write).is_err());
        // A dangling link must not be written through, nor below.
        assert!(resolve(&ws, &[], "dangling", Access::Write).is_err());
        assert!(resolve(&ws, &[], "dangling/x", Access::Write).is_err());
    }

    #[test]
    fn symlinks_staying_inside_are_fine() {
        let (_dir, ws) = setup();
        std::os::unix::fs::symlink(ws.join("src"), ws.join("alias")).unwrap();
        let p = resolve(&ws, &[], "alias/a.txt", Access::Read).unwrap();
        assert_eq!(p, ws.join("src/a.txt"));
    }

    #[test]
    fn allowed_roots_work() {
        let (dir, ws) = setup();
        let notes = dir.path().join("notes");
        std::fs::create_dir_all(&notes).unwrap();
        let notes = std::fs::canonicalize(notes).unwrap();
        let target = notes.join("todo.md");
        let roots = [notes.clone()];
        let p = resolve(&ws, &roots, target.to_str().unwrap(), Access::Write).unwrap();
        assert_eq!(p, target);
        assert_eq!(display(&ws, &p), target.display().to_string());
        let err = resolve(&ws, &roots, "/etc/passwd", Access::Read).unwrap_err();
        assert!(err.contains(&notes.display().to_string()), "{err}");
    }

    #[test]
    fn egirl_state_is_read_only() {
        let (_dir, ws) = setup();
        let err = resolve(&ws, &[], ".egirl/approvals.toml", Access::Write).unwrap_err();
        assert!(err.contains(".egirl"), "{err}");
        assert!(resolve(&ws, &[], ".egirl/approvals.toml", Access::Read).is_ok());
    }

    #[test]
    fn empty_path_is_refused() {
        let (_dir, ws) = setup();
        assert!(resolve(&ws, &[], "  ", Access::Read).is_err());
    }
}
