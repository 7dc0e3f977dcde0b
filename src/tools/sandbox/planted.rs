//! Start-up files a sandboxed command created.
//!
//! egirl looks for `./egirl.toml`, `~/.egirl/egirl.toml` and a few `.env`
//! files when it starts; one the model planted would choose the next run's
//! approvals and sandbox. The file tools refuse to write them, and the
//! mount namespace binds the existing ones read-only, but nothing can bind
//! a file that does not exist yet, and Landlock cannot deny a name inside a
//! writable root. So exec notes which are missing before a command and,
//! after it, renames any the command created to `<name>.refused` (kept, not
//! deleted: nothing the agent wrote is lost, it is only no longer read).
//!
//! Not covered: a process the command left running in the background
//! (`setsid`, `nohup ... &`) that creates one after exec has looked.

use std::path::PathBuf;

/// The start-up files that did not exist before a command.
pub struct Absent(Vec<PathBuf>);

impl Absent {
    pub fn before(start_up: &[PathBuf]) -> Self {
        Self(
            start_up
                .iter()
                .filter(|p| std::fs::symlink_metadata(p).is_err())
                .cloned()
                .collect(),
        )
    }

    /// Renames each that exists now; one line saying what was set aside.
    pub fn set_aside(&self) -> Option<String> {
        let mut lines = Vec::new();
        for path in self
            .0
            .iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
        {
            let mut aside = path.clone().into_os_string();
            aside.push(".refused");
            let aside = PathBuf::from(aside);
            lines.push(match std::fs::rename(path, &aside) {
                Ok(()) => format!(
                    "{} is a file egirl reads at start-up (protected); the command created it, so it was renamed to {}",
                    path.display(),
                    aside.display()
                ),
                Err(e) => format!(
                    "{} is a file egirl reads at start-up (protected); the command created it and it could not be set aside ({e}): remove it before egirl starts again",
                    path.display()
                ),
            });
        }
        (!lines.is_empty()).then(|| lines.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_created_after_the_look_are_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let existing = dir.path().join(".env");
        let planted = dir.path().join("egirl.toml");
        std::fs::write(&existing, "A=1\n").unwrap();
        let absent = Absent::before(&[existing.clone(), planted.clone()]);
        assert_eq!(absent.set_aside(), None);
        std::fs::write(&planted, "[tools.exec]\napproval = \"full\"\n").unwrap();
        let line = absent.set_aside().unwrap();
        assert!(line.contains("egirl.toml.refused"), "{line}");
        assert!(!planted.exists());
        assert!(existing.exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("egirl.toml.refused")).unwrap(),
            "[tools.exec]\napproval = \"full\"\n"
        );
    }
}
