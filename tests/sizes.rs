//! Module and function sizes: a file in `src/` stays under 500 lines and a
//! function under 100, so each fits in a reader's head
//! (docs/architecture.md, "Conventions"). The few exceptions are named here
//! with their reason; a new one is a decision to write down, not a drift.

use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 500;
const MAX_FN_LINES: usize = 100;

/// Functions allowed over the limit: (file, function, why).
const LONG_FUNCTIONS: &[(&str, &str, &str)] = &[];

/// Files allowed over the limit: (file, why).
const LONG_FILES: &[(&str, &str)] = &[];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The line with strings, chars and a trailing comment blanked, so braces
/// inside them are not counted.
fn code_only(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '/' if chars.peek() == Some(&'/') => break,
            '\'' => {
                // A char literal ('{', '\n') or a lifetime ('a): skip the
                // literal, keep the lifetime's name out of the way either way.
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with('\\') {
                    let _ = chars.by_ref().take_while(|&c| c != '\'').count();
                } else if rest.chars().nth(1) == Some('\'') {
                    chars.next();
                    chars.next();
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The name of the function a line declares, if it does.
fn declared_fn(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace().peekable();
    while let Some(word) = words.next() {
        match word {
            "pub" | "async" | "const" | "unsafe" | "extern" => continue,
            w if w.starts_with("pub(") => continue,
            "fn" => {
                let name = words.next()?;
                let end = name.find(['(', '<']).unwrap_or(name.len());
                return Some(&name[..end]);
            }
            _ => return None,
        }
    }
    None
}

/// (function, first line, length in lines) for every function in `text`
/// longer than `limit`; raw strings are rare enough in `src/` to ignore.
fn long_functions(text: &str, limit: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some(name) = declared_fn(line) else {
            continue;
        };
        let mut depth = 0i64;
        let mut opened = false;
        for (offset, body) in lines[start..].iter().enumerate() {
            let code = code_only(body);
            for c in code.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if !opened && code.trim_end().ends_with(';') {
                break; // a declaration without a body
            }
            if opened && depth <= 0 {
                if offset + 1 > limit {
                    found.push((name.to_string(), start + 1, offset + 1));
                }
                break;
            }
        }
    }
    found
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

#[test]
fn files_and_functions_stay_small() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    assert!(files.len() > 100, "found only {} files", files.len());
    let mut over = Vec::new();
    for file in &files {
        let name = relative(root, file);
        let text = std::fs::read_to_string(file).expect("read a source file");
        let count = text.lines().count();
        if count > MAX_FILE_LINES && !LONG_FILES.iter().any(|(f, _)| *f == name) {
            over.push(format!("{name}: {count} lines (limit {MAX_FILE_LINES})"));
        }
        for (function, line, length) in long_functions(&text, MAX_FN_LINES) {
            let named = LONG_FUNCTIONS
                .iter()
                .any(|(f, n, _)| *f == name && *n == function);
            if !named {
                over.push(format!(
                    "{name}:{line}: fn {function} is {length} lines (limit {MAX_FN_LINES})"
                ));
            }
        }
    }
    assert!(
        over.is_empty(),
        "split these, or name them with their reason in tests/sizes.rs:\n{}",
        over.join("\n")
    );
}

#[test]
fn the_size_checker_finds_a_long_function_and_ignores_braces_in_strings() {
    let mut text = String::from("pub(crate) async fn long<T>(x: T) {\n    let s = \"}}}\";\n");
    for _ in 0..100 {
        text.push_str("    let c = '}';\n");
    }
    text.push_str("}\nfn short() {}\nfn decl();\n");
    let found = long_functions(&text, MAX_FN_LINES);
    assert_eq!(found, vec![("long".to_string(), 1, 103)]);
}
