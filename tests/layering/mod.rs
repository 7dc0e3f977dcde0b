//! The layers `src/lib.rs` describes, held as a fact. Every `crate::` and
//! `super::` path under `src/` is read (`scan`) and three rules apply:
//! - an import points down the rank table in lib.rs's doc comment, never
//!   to a module of the same rank or above;
//! - the direct children of one top-level module form no cycle
//!   (`agent::turn -> agent::steps -> agent::turn`);
//! - the surfaces (`surfaces`) never import `tools` or `providers`: the
//!   protocol is their one seam with the core.
//!
//! An allowed exception is listed below by name, with its reason; an
//! exception that no longer matches anything fails too, so the lists only
//! shrink.

mod scan;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Upward imports allowed anyway: (from, to, reason). Empty is the goal.
const ALLOWED_UPWARD: &[(&str, &str, &str)] = &[];

/// Cycles among one module's children allowed for now: (module, its
/// children in the cycle, reason). Empty is the goal.
const ALLOWED_CYCLES: &[(&str, &[&str], &str)] = &[];

/// The surfaces and what they must never import.
const SURFACES: &str = "surfaces";
const BEHIND_THE_SEAM: &[&str] = &["tools", "providers"];

/// One source file: its module path and its text.
struct Source {
    file: String,
    module: Vec<String>,
    text: String,
}

/// The rank of each top-level module, from lib.rs's rows
/// ``//! | 3 | `config` | what it is |``.
fn rank_table(lib_rs: &str) -> BTreeMap<String, u32> {
    let mut ranks = BTreeMap::new();
    for line in lib_rs.lines() {
        let cells: Vec<&str> = line
            .trim_start_matches("//!")
            .split('|')
            .map(str::trim)
            .collect();
        if let [_, rank, module, ..] = cells.as_slice()
            && let Ok(rank) = rank.parse::<u32>()
        {
            ranks.insert(module.trim_matches('`').to_string(), rank);
        }
    }
    ranks
}

/// Every violation of the three rules, one line each.
fn violations(sources: &[Source], ranks: &BTreeMap<String, u32>) -> Vec<String> {
    let mut out = Vec::new();
    let children = children(sources);
    // (module, from child, to child) -> where it is first seen.
    let mut child_edges: BTreeMap<(String, String, String), String> = BTreeMap::new();
    let mut used_upward = BTreeSet::new();
    for source in sources {
        let from = &source.module[0];
        let Some(&from_rank) = ranks.get(from) else {
            out.push(format!(
                "{}: `{from}` has no row in src/lib.rs's rank table",
                source.file
            ));
            continue;
        };
        for reference in scan::references(&source.module, &source.text) {
            let at = format!("{}:{}", source.file, reference.line);
            let to = &reference.path[0];
            if to == from {
                if let (Some(a), Some(b)) = (source.module.get(1), reference.path.get(1))
                    && a != b
                    && children[from].contains(b)
                {
                    let key = (from.clone(), a.clone(), b.clone());
                    child_edges.entry(key).or_insert(at);
                }
                continue;
            }
            if from == SURFACES && BEHIND_THE_SEAM.contains(&to.as_str()) {
                out.push(format!(
                    "{at}: {from} -> {to} (a surface reaches the core only through the protocol)"
                ));
            }
            let Some(&to_rank) = ranks.get(to) else {
                out.push(format!(
                    "{at}: {from} -> {to} (`{to}` has no row in src/lib.rs's rank table)"
                ));
                continue;
            };
            if to_rank >= from_rank {
                match ALLOWED_UPWARD.iter().find(|(f, t, _)| f == from && t == to) {
                    Some(allowed) => {
                        used_upward.insert(*allowed);
                    }
                    None => out.push(format!(
                        "{at}: {from} -> {to} (rank {from_rank} -> {to_rank})"
                    )),
                }
            }
        }
    }
    for (from, to, reason) in ALLOWED_UPWARD {
        if !used_upward.contains(&(*from, *to, *reason)) {
            out.push(format!(
                "allowed {from} -> {to} ({reason}) no longer happens: remove it"
            ));
        }
    }
    out.extend(cycle_violations(&child_edges));
    out
}

/// The direct children of each top-level module that have a file.
fn children(sources: &[Source]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for source in sources {
        let entry = out.entry(source.module[0].clone()).or_default();
        if let Some(child) = source.module.get(1) {
            entry.insert(child.clone());
        }
    }
    out
}

/// Each cycle among one module's children, unless allowed by name.
fn cycle_violations(edges: &BTreeMap<(String, String, String), String>) -> Vec<String> {
    let mut graphs: BTreeMap<&str, BTreeMap<&str, BTreeSet<&str>>> = BTreeMap::new();
    for (module, from, to) in edges.keys() {
        graphs
            .entry(module)
            .or_default()
            .entry(from)
            .or_default()
            .insert(to);
    }
    let mut out = Vec::new();
    let mut seen_allowed = BTreeSet::new();
    for (module, graph) in &graphs {
        for members in cycles(graph) {
            let allowed = ALLOWED_CYCLES.iter().position(|(m, children, _)| {
                m == module && children.iter().copied().collect::<BTreeSet<_>>() == members
            });
            if let Some(i) = allowed {
                seen_allowed.insert(i);
                continue;
            }
            let witness = witness(graph, &members);
            let steps: Vec<String> = witness
                .windows(2)
                .map(|pair| {
                    let key = (module.to_string(), pair[0].to_string(), pair[1].to_string());
                    format!(
                        "  {module}::{} -> {module}::{} at {}",
                        pair[0], pair[1], edges[&key]
                    )
                })
                .collect();
            out.push(format!(
                "cycle in {module}: {} (all of {members:?} reach each other)\n{}",
                witness.join(" -> "),
                steps.join("\n")
            ));
        }
    }
    for (i, (module, children, reason)) in ALLOWED_CYCLES.iter().enumerate() {
        if !seen_allowed.contains(&i) {
            out.push(format!(
                "allowed cycle in {module} among {children:?} ({reason}) no longer happens: remove it"
            ));
        }
    }
    out
}

/// The strongly connected sets of more than one child (Kosaraju's two
/// passes: the graphs are a few dozen nodes).
fn cycles<'a>(graph: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<BTreeSet<&'a str>> {
    let nodes: BTreeSet<&str> = graph
        .iter()
        .flat_map(|(from, tos)| std::iter::once(*from).chain(tos.iter().copied()))
        .collect();
    let reaches = |start: &'a str| -> BTreeSet<&'a str> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start];
        while let Some(node) = stack.pop() {
            for &next in graph.get(node).into_iter().flatten() {
                if seen.insert(next) {
                    stack.push(next);
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&str, BTreeSet<&str>> = nodes.iter().map(|&n| (n, reaches(n))).collect();
    let mut out: Vec<BTreeSet<&str>> = Vec::new();
    for &node in &nodes {
        if !reach[node].contains(node) || out.iter().any(|set| set.contains(node)) {
            continue;
        }
        let set: BTreeSet<&str> = nodes
            .iter()
            .copied()
            .filter(|&other| reach[node].contains(other) && reach[other].contains(node))
            .collect();
        out.push(set);
    }
    out
}

/// One closed path through a cycle's members, first member first.
fn witness<'a>(
    graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
    members: &BTreeSet<&'a str>,
) -> Vec<&'a str> {
    let Some(&start) = members.iter().next() else {
        return Vec::new();
    };
    // Breadth-first from `start` back to it, inside the set.
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &next in graph.get(node).into_iter().flatten() {
            if !members.contains(next) || came_from.contains_key(next) {
                continue;
            }
            came_from.insert(next, node);
            if next == start {
                let mut path = vec![start];
                let mut at = node;
                while at != start {
                    path.push(at);
                    at = came_from[at];
                }
                path.push(start);
                path.reverse();
                return path;
            }
            queue.push_back(next);
        }
    }
    vec![start]
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/agent/turn.rs` -> `agent::turn`; `src/agent/mod.rs` -> `agent`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts
}

fn crate_sources(src: &Path) -> Vec<Source> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    files
        .iter()
        .filter_map(|file| {
            let relative = file.strip_prefix(src).expect("under src/");
            // The crate root declares the modules; main.rs is its own crate.
            if relative == Path::new("lib.rs") || relative == Path::new("main.rs") {
                return None;
            }
            Some(Source {
                file: format!("src/{}", relative.display()),
                module: module_path(relative),
                text: std::fs::read_to_string(file).expect("read source"),
            })
        })
        .collect()
}

#[test]
fn imports_point_down_the_layers_of_lib_rs() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib_rs = std::fs::read_to_string(src.join("lib.rs")).expect("read src/lib.rs");
    let ranks = rank_table(&lib_rs);
    let declared: BTreeSet<String> = lib_rs
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .collect();
    let ranked: BTreeSet<String> = ranks.keys().cloned().collect();
    assert_eq!(
        declared, ranked,
        "src/lib.rs: the rank table and the `pub mod`s differ"
    );

    let sources = crate_sources(&src);
    assert!(sources.len() > 100, "found only {} files", sources.len());
    let found = violations(&sources, &ranks);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// docs/architecture.md shows the same table, so the page a newcomer reads
/// first cannot drift from the one the test holds.
#[test]
fn the_architecture_page_shows_the_rank_table_of_lib_rs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib_rs = std::fs::read_to_string(root.join("src/lib.rs")).expect("read src/lib.rs");
    let page = std::fs::read_to_string(root.join("docs/architecture.md"))
        .expect("read docs/architecture.md");
    assert_eq!(
        rank_table(&page),
        rank_table(&lib_rs),
        "docs/architecture.md's layer table differs from src/lib.rs's"
    );
}

mod checker {
    use super::*;

    fn ranks() -> BTreeMap<String, u32> {
        rank_table(
            "//! | rank | module | what |\n//! |--|--|--|\n\
             //! | 1 | `protocol` | seam |\n//! | 3 | `config` | toml |\n\
             //! | 15 | `agent` | core |\n//! | 16 | `surfaces` | surfaces |\n\
             //! | 8 | `providers` | models |\n",
        )
    }

    fn source(file: &str, module: &str, text: &str) -> Source {
        Source {
            file: file.into(),
            module: module.split("::").map(str::to_string).collect(),
            text: text.into(),
        }
    }

    /// The lists above hold exceptions for the real tree; a planted tree
    /// reports them as stale, which these tests leave aside.
    fn planted(sources: &[Source]) -> Vec<String> {
        violations(sources, &ranks())
            .into_iter()
            .filter(|v| !v.starts_with("allowed"))
            .collect()
    }

    #[test]
    fn reads_the_rank_table() {
        let ranks = ranks();
        assert_eq!(ranks["config"], 3);
        assert_eq!(ranks["surfaces"], 16);
        assert!(!ranks.contains_key("rank"));
    }

    #[test]
    fn a_planted_upward_import_is_reported_with_its_line() {
        let text = "//! Config.\n\nuse crate::protocol::Role;\nuse crate::agent::AgentHandle;\n";
        let found = planted(&[source("src/config/mod.rs", "config", text)]);
        assert_eq!(
            found,
            ["src/config/mod.rs:4: config -> agent (rank 3 -> 15)"]
        );
    }

    #[test]
    fn groups_inline_paths_and_super_are_read_but_comments_and_strings_are_not() {
        let text = "use crate::{protocol::Op, agent::{self, AgentHandle}};\n\
                    // crate::surfaces::tui in a comment\n\
                    fn f() { let _ = \"crate::surfaces\"; crate::surfaces::run(); }\n";
        let found = planted(&[source("src/config/load.rs", "config::load", text)]);
        assert_eq!(
            found,
            [
                "src/config/load.rs:1: config -> agent (rank 3 -> 15)",
                "src/config/load.rs:1: config -> agent (rank 3 -> 15)",
                "src/config/load.rs:3: config -> surfaces (rank 3 -> 16)",
            ]
        );
    }

    #[test]
    fn a_surface_importing_a_provider_is_reported() {
        let text = "use crate::providers::ChatRequest;\n";
        let found = planted(&[source("src/surfaces/tui.rs", "surfaces::tui", text)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].contains("surfaces -> providers (a surface"),
            "{found:?}"
        );
    }

    #[test]
    fn a_cycle_among_children_is_reported_and_tests_super_is_the_file_itself() {
        let a = "use super::b::X;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n";
        let b = "fn f() { super::a::g(); }\n";
        let found = planted(&[
            source("src/agent/mod.rs", "agent", "mod a;\nmod b;\n"),
            source("src/agent/a.rs", "agent::a", a),
            source("src/agent/b.rs", "agent::b", b),
        ]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("cycle in agent: a -> b -> a"),
            "{found:?}"
        );
        assert!(
            found[0].contains("agent::b -> agent::a at src/agent/b.rs:1"),
            "{found:?}"
        );
    }
}
