//! Every relative link in README.md and docs/*.md points at a file in the
//! repo, and every `#anchor` at a heading of the page it names, so moving
//! or renaming a page or a heading cannot leave a dead link behind.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// The markdown pages checked: README.md and every page under docs/.
fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_string()];
    let dir = super::repo().join("docs");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    pages.sort();
    pages
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped,
/// spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings (a repeated heading gets `-1`, `-2`...).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in super::prose_lines(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if hashes == 0 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let count = seen.entry(base.clone()).or_insert(0);
        out.insert(if *count == 0 {
            base.clone()
        } else {
            format!("{base}-{count}")
        });
        *count += 1;
    }
    out
}

/// The targets of inline links `[text](target)` on a line.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else {
            break;
        };
        out.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    out
}

/// `base/relative` with `.` and `..` folded, as a path inside the repo.
fn join(page: &str, relative: &str) -> PathBuf {
    let mut out = PathBuf::new();
    let dir = Path::new(page).parent().unwrap_or(Path::new(""));
    for part in dir.join(relative).components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn every_relative_link_resolves() {
    let mut dead = Vec::new();
    for page in pages() {
        let text = super::read(&page);
        for (number, line) in super::prose_lines(&text) {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (file, anchor) = match target.split_once('#') {
                    Some((file, anchor)) => (file, Some(anchor)),
                    None => (target.as_str(), None),
                };
                let linked = if file.is_empty() {
                    PathBuf::from(&page)
                } else {
                    join(&page, file)
                };
                let path = super::repo().join(&linked);
                if !path.exists() {
                    dead.push(format!("{page}:{number}: {target}: no such file"));
                    continue;
                }
                let Some(anchor) = anchor else {
                    continue;
                };
                let linked_text = super::read(&linked.to_string_lossy());
                if !anchors(&linked_text).contains(anchor) {
                    dead.push(format!("{page}:{number}: {target}: no such heading"));
                }
            }
        }
    }
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}

#[test]
fn the_readme_links_every_docs_page() {
    let readme = super::read("README.md");
    for page in pages().iter().filter(|p| p.starts_with("docs/")) {
        assert!(
            readme.contains(&format!("]({page})")),
            "README.md does not link {page}"
        );
    }
}

#[test]
fn anchors_follow_github() {
    assert_eq!(slug("Events (`--json`)"), "events---json");
    assert_eq!(
        slug("7. Prompt order (for llama.cpp's prefix cache)"),
        "7-prompt-order-for-llamacpps-prefix-cache"
    );
}
