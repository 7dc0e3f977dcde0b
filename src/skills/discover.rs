//! Where skills are found: `<dir>/<name>/SKILL.md` (or `skill.md`, as
//! ClawHub allows) and, as LocalBot allows, a single `<dir>/<name>.md`
//! with frontmatter. A folder or file that is a symlink leading out of its
//! skills directory is refused: dropping a link in a skills folder must not
//! make the rest of the disk readable.

use std::path::{Path, PathBuf};

use super::frontmatter;
use super::skill::{BrokenSkill, Candidate};

/// The skills directories in precedence order: `<workspace>/skills` first,
/// then `[skills] dirs` as written (`~` and `{workspace}` expand; a relative
/// path is relative to the workspace). The same folder twice counts once.
pub fn dirs(configured: &[String], workspace: &Path) -> Vec<PathBuf> {
    let mut out = vec![workspace.join("skills")];
    for entry in configured {
        let expanded = entry.replace("{workspace}", &workspace.display().to_string());
        let path = crate::config::expand_home(&expanded);
        let path = if path.is_absolute() {
            path
        } else {
            workspace.join(path)
        };
        let same = |p: &PathBuf| {
            p == &path
                || std::fs::canonicalize(p)
                    .ok()
                    .is_some_and(|c| std::fs::canonicalize(&path).ok() == Some(c))
        };
        if !out.iter().any(same) {
            out.push(path);
        }
    }
    out
}

/// What one skills directory holds, in name order. A missing directory
/// holds nothing.
pub fn scan(dir: &Path, show: &dyn Fn(&Path) -> String) -> Vec<Result<Candidate, BrokenSkill>> {
    let Ok(root) = std::fs::canonicalize(dir) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if file_name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            let Some(file) = ["SKILL.md", "skill.md"]
                .iter()
                .map(|n| path.join(n))
                .find(|f| f.is_file())
            else {
                continue;
            };
            out.push(confined(&root, &path, file, file_name, show));
        } else if let Some(stem) = markdown_stem(file_name)
            && path.is_file()
            && starts_with_frontmatter(&path)
        {
            out.push(confined(&root, &root, path.clone(), stem, show));
        }
    }
    out
}

/// The candidate, unless the folder or the file leads outside `root`.
fn confined(
    root: &Path,
    base_dir: &Path,
    file: PathBuf,
    name: &str,
    show: &dyn Fn(&Path) -> String,
) -> Result<Candidate, BrokenSkill> {
    let location = show(&file);
    let inside = |p: &Path| {
        std::fs::canonicalize(p)
            .ok()
            .filter(|c| c.starts_with(root))
    };
    let (Some(real_dir), Some(real_file)) = (inside(base_dir), inside(&file)) else {
        let real = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
        return Err(BrokenSkill {
            name: name.to_string(),
            path: file,
            location,
            line: 1,
            error: format!(
                "refused: a symlink leads outside {} (to {})",
                show(root),
                real.display()
            ),
        });
    };
    // Canonical, so `read_file` (which canonicalizes) finds the skill by path.
    Ok(Candidate {
        base_dir: real_dir,
        file: real_file,
        fallback_name: name.to_string(),
        location,
    })
}

fn markdown_stem(file_name: &str) -> Option<&str> {
    let (stem, ext) = file_name.rsplit_once('.')?;
    (ext.eq_ignore_ascii_case("md") && !stem.is_empty()).then_some(stem)
}

/// A loose `.md` (a README, notes) is a skill only when it has frontmatter
/// (after a byte-order mark and blank lines). A folder's SKILL.md needs none.
fn starts_with_frontmatter(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = crate::fsutil::regular_file::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    frontmatter::has_frontmatter(&String::from_utf8_lossy(&head[..n]))
}

/// A path as shown to the model and the user: relative inside the
/// workspace, `~/...` under the home directory, else absolute. `read_file`
/// takes all three.
pub fn display(path: &Path, workspace: &Path) -> String {
    if let Ok(rel) = path.strip_prefix(workspace) {
        return rel.display().to_string();
    }
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from)
        && !home.as_os_str().is_empty()
        && let Ok(rel) = path.strip_prefix(&home)
    {
        return format!("~/{}", rel.display());
    }
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_single_files_and_escapes() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("skills");
        std::fs::create_dir_all(root.join("alpha")).unwrap();
        std::fs::write(root.join("alpha/SKILL.md"), "---\n").unwrap();
        std::fs::create_dir_all(root.join("empty-folder")).unwrap();
        std::fs::write(root.join("beta.md"), "---\nname: beta\n").unwrap();
        std::fs::write(root.join("README.md"), "# not a skill\n").unwrap();
        std::fs::create_dir_all(root.join(".hidden")).unwrap();
        std::fs::write(root.join(".hidden/SKILL.md"), "---\n").unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("SKILL.md"), "---\n").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();

        let show = |p: &Path| p.display().to_string();
        let found = scan(&root, &show);
        let names: Vec<String> = found
            .iter()
            .map(|r| match r {
                Ok(c) => c.fallback_name.clone(),
                Err(b) => format!("refused {}", b.name),
            })
            .collect();
        assert_eq!(names, ["alpha", "beta", "refused linked"]);
        let Err(refused) = &found[2] else { panic!() };
        assert!(refused.error.contains("outside"), "{refused:?}");
        assert!(scan(&tmp.path().join("missing"), &show).is_empty());
    }

    #[test]
    fn dirs_put_the_workspace_first_and_expand() {
        let ws = Path::new("/w");
        let d = dirs(
            &["{workspace}/skills".into(), "extra".into(), "/abs".into()],
            ws,
        );
        assert_eq!(
            d,
            [
                PathBuf::from("/w/skills"),
                PathBuf::from("/w/extra"),
                PathBuf::from("/abs")
            ]
        );
    }

    #[test]
    fn display_is_short() {
        let ws = Path::new("/w");
        assert_eq!(
            display(Path::new("/w/skills/a/SKILL.md"), ws),
            "skills/a/SKILL.md"
        );
        assert_eq!(display(Path::new("/elsewhere/a.md"), ws), "/elsewhere/a.md");
    }
}
