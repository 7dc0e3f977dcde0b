//! The command line's help and docs/cli.md agree: every command and
//! subcommand clap knows (what `--help` lists) has a row in the page's
//! command table, every flag of each is written in its row, and every
//! command and flag the table writes exists. Read from clap's own model
//! of the command line, the one `--help` is printed from.

use std::collections::{BTreeMap, BTreeSet};

use clap::CommandFactory;

/// Each command path (`""` for plain `egirl`, `devices revoke`) with its
/// long flags (`-m` stands for `--message`), as clap has them.
fn clap_commands() -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    walk(&egirl::cli::Cli::command(), String::new(), &mut out);
    out
}

fn walk(cmd: &clap::Command, path: String, out: &mut BTreeMap<String, BTreeSet<String>>) {
    let flags: BTreeSet<String> = cmd
        .get_arguments()
        .filter(|a| !a.is_global_set())
        .filter_map(|a| {
            a.get_long()
                .map(|l| format!("--{l}"))
                .filter(|l| l != "--help" && l != "--version")
        })
        .collect();
    out.insert(path.clone(), flags);
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let sub_path = match path.is_empty() {
            true => sub.get_name().to_string(),
            false => format!("{path} {}", sub.get_name()),
        };
        walk(sub, sub_path, out);
    }
}

/// The global flags (`--config`, `--workspace`), for every command.
fn clap_globals() -> BTreeSet<String> {
    egirl::cli::Cli::command()
        .get_arguments()
        .filter(|a| a.is_global_set())
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect()
}

/// The commands docs/cli.md's table writes in its first column (each
/// backticked `egirl ...`), with the flags written there or in the row.
fn doc_commands(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, line) in super::prose_lines(text) {
        let Some(row) = line.strip_prefix("| `egirl") else {
            continue;
        };
        let row = format!("`egirl{row}");
        let mut cells = row.split(" | ");
        let first = cells.next().unwrap_or_default();
        let rest = cells.collect::<Vec<_>>().join(" | ");
        for written in first.split('`').skip(1).step_by(2) {
            let mut words = written.split_whitespace().skip(1).peekable();
            let mut path = Vec::new();
            while let Some(word) =
                words.next_if(|w| w.chars().all(|c| c.is_ascii_lowercase()) && !w.starts_with('-'))
            {
                path.push(word);
            }
            let flags = out.entry(path.join(" ")).or_default();
            for word in written
                .split_whitespace()
                .chain(flags_in(&rest).iter().map(String::as_str))
            {
                let word = word.trim_matches(|c| c == '[' || c == ']');
                if word.starts_with("--") || word == "-m" {
                    flags.insert(word.to_string());
                }
            }
        }
    }
    out
}

/// The `--flags` written in backticks in a row's description.
fn flags_in(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|code| code.split_whitespace().next())
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(str::to_string)
        .collect()
}

#[test]
fn every_command_and_flag_in_the_help_is_in_docs_cli_md_and_back() {
    let text = super::read("docs/cli.md");
    let doc = doc_commands(&text);
    let clap = clap_commands();
    let globals = clap_globals();
    let mut problems = Vec::new();
    for (path, flags) in &clap {
        // A command with subcommands is documented by them.
        let has_subcommands = clap.keys().any(|k| k.starts_with(&format!("{path} ")));
        let Some(documented) = doc.get(path) else {
            if !has_subcommands && !path.is_empty() {
                problems.push(format!("`egirl {path}` has no row"));
            }
            continue;
        };
        for flag in flags {
            let written =
                documented.contains(flag) || (flag == "--message" && documented.contains("-m"));
            if !written {
                problems.push(format!("`egirl {path}`: {flag} is not in its row"));
            }
        }
    }
    for (path, flags) in &doc {
        let Some(known) = clap.get(path) else {
            problems.push(format!("docs/cli.md: `egirl {path}` is not a command"));
            continue;
        };
        for flag in flags {
            let exists = known.contains(flag)
                || globals.contains(flag)
                || (flag == "-m" && known.contains("--message"))
                // Root flags combined with a command in one row
                // (`egirl --session ID --fork`) are the root's.
                || clap[""].contains(flag);
            if !exists {
                problems.push(format!("docs/cli.md: `egirl {path}` has no {flag}"));
            }
        }
    }
    let global_line = text
        .split("\n\n")
        .find(|p| p.starts_with("Global flags:"))
        .unwrap_or_default();
    for flag in &globals {
        if !global_line.contains(flag.as_str()) {
            problems.push(format!("global {flag} is not in \"Global flags\""));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
