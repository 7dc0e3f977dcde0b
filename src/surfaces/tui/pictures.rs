//! Pictures in the TUI's input: a path to an image file, pasted (a dragged
//! file pastes as its path) or typed alone on a line, is stored and
//! attached to the message as a chip (`[image 1280x720 png 84 KB]`)
//! instead of being sent as text. Backspace in an empty input takes the
//! last one off again.

use std::path::{Path, PathBuf};

use super::app::App;
use super::conversation::Level;

/// The image file `line` names, when it names one that exists: quoted
/// ('…' or "…"), with `\ ` escapes, `file://`, or `~/` as terminals and
/// shells write a dragged or typed path; relative to `cwd`.
pub fn image_path(line: &str, cwd: &Path) -> Option<PathBuf> {
    let mut s = line.trim();
    for quote in ['\'', '"'] {
        if s.len() >= 2 && s.starts_with(quote) && s.ends_with(quote) {
            s = &s[1..s.len() - 1];
        }
    }
    let s = s.strip_prefix("file://").unwrap_or(s);
    if s.is_empty() || s.contains('\n') {
        return None;
    }
    let unescaped = s.replace("\\ ", " ").replace("%20", " ");
    let path = match unescaped.strip_prefix("~/") {
        Some(rest) => PathBuf::from(std::env::var_os("HOME")?).join(rest),
        None => PathBuf::from(&unescaped),
    };
    let path = if path.is_absolute() {
        path
    } else {
        cwd.join(path)
    };
    (crate::images::has_image_extension(&path) && path.is_file()).then_some(path)
}

impl App {
    /// A paste that is the path of a picture attaches it; false: the
    /// paste is text.
    pub(super) fn paste_picture(&mut self, text: &str) -> bool {
        let cwd = std::env::current_dir().unwrap_or_default();
        match image_path(text, &cwd) {
            Some(path) => self.attach_picture(&path),
            None => false,
        }
    }

    /// The lines of `text` that are alone the path of a picture are
    /// attached and taken out; the rest is the message.
    pub(super) fn attach_typed_pictures(&mut self, text: &str) -> String {
        let cwd = std::env::current_dir().unwrap_or_default();
        let mut kept = Vec::new();
        for line in text.split('\n') {
            let attached = match image_path(line, &cwd) {
                Some(path) => self.attach_picture(&path),
                None => false,
            };
            if !attached {
                kept.push(line);
            }
        }
        kept.join("\n").trim().to_string()
    }

    /// Stores the picture at `path` and puts its chip in the input; a
    /// picture that cannot be stored is a notice (false).
    fn attach_picture(&mut self, path: &Path) -> bool {
        let Some(store) = &self.image_store else {
            return false;
        };
        let shown = path.display().to_string();
        match store.put_file(path, &shown) {
            Ok(part) => {
                self.input.images.push(part);
                true
            }
            Err(e) => {
                self.notice(Level::Warning, e);
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_as_terminals_paste_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("my shot.png");
        std::fs::write(&file, b"x").expect("write");
        let at = |line: &str| image_path(line, dir.path());
        assert_eq!(at("my shot.png"), Some(file.clone()));
        assert_eq!(at("my\\ shot.png"), Some(file.clone()));
        let quoted = format!("'{}'", file.display());
        assert_eq!(at(&quoted), Some(file.clone()));
        let url = format!("file://{}", file.display()).replace(' ', "%20");
        assert_eq!(at(&url), Some(file.clone()));
        assert_eq!(at("  my shot.png \n"), Some(file));
        assert_eq!(at("missing.png"), None);
        std::fs::write(dir.path().join("notes.txt"), b"x").expect("write");
        assert_eq!(at("notes.txt"), None);
        assert_eq!(at("look at my shot.png"), None);
    }
}
