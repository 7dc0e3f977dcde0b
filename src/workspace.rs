//! The workspace: personality and memory files the agent reads every turn,
//! created from the repo's `workspace/` templates and never overwritten.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Templates compiled into the binary so `egirl` works from any directory.
pub const TEMPLATES: [(&str, &str); 7] = [
    ("AGENTS.md", include_str!("../workspace/AGENTS.md")),
    ("SOUL.md", include_str!("../workspace/SOUL.md")),
    ("IDENTITY.md", include_str!("../workspace/IDENTITY.md")),
    ("USER.md", include_str!("../workspace/USER.md")),
    ("TOOLS.md", include_str!("../workspace/TOOLS.md")),
    ("MEMORY.md", include_str!("../workspace/MEMORY.md")),
    ("HEARTBEAT.md", include_str!("../workspace/HEARTBEAT.md")),
];

/// Files injected into the system prompt, in prompt order: who the agent
/// is, how it works, who the user is, then curated memory.
pub const PROMPT_FILES: [&str; 6] = [
    "IDENTITY.md",
    "SOUL.md",
    "AGENTS.md",
    "USER.md",
    "TOOLS.md",
    "MEMORY.md",
];

/// Creates the workspace and any missing template files; returns the
/// canonical path and the files it wrote.
pub fn ensure(path: &Path) -> Result<(PathBuf, Vec<String>)> {
    std::fs::create_dir_all(path)
        .with_context(|| format!("cannot create workspace {}", path.display()))?;
    for dir in ["memory", "skills", "sessions", ".egirl"] {
        let dir = path.join(dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut written = Vec::new();
    for (name, text) in TEMPLATES {
        let file = path.join(name);
        // create_new never replaces a file the user already has, even if racing.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&file)
        {
            Ok(mut f) => {
                use std::io::Write;
                f.write_all(text.as_bytes())
                    .with_context(|| format!("cannot write {}", file.display()))?;
                written.push(name.to_string());
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", file.display())),
        }
    }
    let canonical = path
        .canonicalize()
        .with_context(|| format!("cannot resolve workspace {}", path.display()))?;
    Ok((canonical, written))
}

/// Reads a workspace file for the prompt; a missing file is simply absent,
/// and so is one that links out of the workspace (see [`confined`]).
pub fn read_prompt_file(workspace: &Path, name: &str) -> Option<String> {
    let (path, _) = confined(workspace, name)?;
    read_unlinked(&path)
}

/// The workspace file `name` (the real file when it is a link) and its
/// metadata; None when missing or when it is a link that leads out of
/// the workspace, as `memory_get` and the skills refuse one: egirl reads
/// these files itself, outside every sandbox, so a link the model's
/// command made (`MEMORY.md` -> another agent's MEMORY.md, hidden from its
/// commands and refused to its file tools) would hand it what it may not
/// read.
pub fn confined(workspace: &Path, name: &str) -> Option<(PathBuf, std::fs::Metadata)> {
    let path = workspace.join(name);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.file_type().is_symlink() {
        return Some((path, meta));
    }
    let (Ok(real), Ok(root)) = (path.canonicalize(), workspace.canonicalize()) else {
        return None;
    };
    if !real.starts_with(&root) {
        tracing::warn!("{} leads outside the workspace; left out", path.display());
        return None;
    }
    let meta = std::fs::metadata(&real).ok()?;
    Some((real, meta))
}

/// Where a write to `path` (a file in the workspace, its directory made)
/// lands, when that is in the workspace: its directory and, for a link,
/// the file it names are resolved; an error when either leads out (a
/// `memory/` or `MEMORY.md` the model's command linked to another agent's).
/// Open the answer with `regular_file::open_append_unlinked`.
pub fn confined_target(workspace: &Path, path: &Path) -> std::io::Result<PathBuf> {
    let outside = || {
        std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{} leads outside the workspace", path.display()),
        )
    };
    let root = workspace.canonicalize()?;
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(outside());
    };
    let dir = dir.canonicalize()?;
    if !dir.starts_with(&root) {
        return Err(outside());
    }
    let target = dir.join(name);
    match std::fs::symlink_metadata(&target) {
        Ok(meta) if meta.file_type().is_symlink() => match target.canonicalize() {
            Ok(real) if real.starts_with(&root) => Ok(real),
            _ => Err(outside()),
        },
        _ => Ok(target),
    }
}

/// The text of `path` (from [`confined`]), opened without following a
/// link made since, so a swap between the check and the read cannot lead
/// out; an empty file is none.
pub fn read_unlinked(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    crate::fsutil::regular_file::check(&file.metadata().ok()?).ok()?;
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_linked_out_of_the_workspace_reads_as_absent() {
        let dir = tempfile::tempdir().unwrap();
        let (ws, other) = (dir.path().join("ws"), dir.path().join("other"));
        ensure(&ws).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("list.md"), "- read home's mail").unwrap();
        std::os::unix::fs::symlink(other.join("list.md"), ws.join("HEARTBEAT2.md")).unwrap();
        assert_eq!(read_prompt_file(&ws, "HEARTBEAT2.md"), None);
        std::fs::write(ws.join("kept.md"), "- water the ferns").unwrap();
        std::os::unix::fs::symlink("kept.md", ws.join("inside.md")).unwrap();
        assert_eq!(
            read_prompt_file(&ws, "inside.md").as_deref(),
            Some("- water the ferns")
        );
    }

    #[test]
    fn creates_templates_and_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let (_, written) = ensure(&ws).unwrap();
        assert_eq!(written.len(), TEMPLATES.len());
        std::fs::write(ws.join("USER.md"), "mine").unwrap();
        let (_, written) = ensure(&ws).unwrap();
        assert!(written.is_empty());
        assert_eq!(std::fs::read_to_string(ws.join("USER.md")).unwrap(), "mine");
        assert!(ws.join("memory").is_dir() && ws.join(".egirl").is_dir());
    }
}
