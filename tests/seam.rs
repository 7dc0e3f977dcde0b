//! docs/design.md §1: the one seam between the core and its surfaces is
//! `src/protocol.rs`. A surface that imports the tools or the providers
//! grows a second one; this keeps the tree honest.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/channels") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn surfaces_reach_the_core_only_through_the_protocol() {
    let channels = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/channels");
    let mut files = Vec::new();
    rust_files(&channels, &mut files);
    assert!(files.len() > 10, "found only {files:?}");
    let mut offending = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read source");
        for (i, line) in text.lines().enumerate() {
            if line.contains("crate::tools") || line.contains("crate::providers") {
                offending.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(offending.is_empty(), "{}", offending.join("\n"));
}
