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

/// Reads a workspace file for the prompt; a missing file is simply absent.
pub fn read_prompt_file(workspace: &Path, name: &str) -> Option<String> {
    let text = crate::fsutil::regular_file::read_to_string(&workspace.join(name)).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

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
