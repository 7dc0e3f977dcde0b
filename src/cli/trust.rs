//! `egirl trust`: review and trust start-up files the model could have
//! written, list and forget them; and the review the TUI shows before it
//! starts on an untrusted file. A config is shown whole the first time and
//! as a diff against the trusted text when it changed; a `.env` shows its
//! variable names only, never a value.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use super::startup::{StartUpFile, StartUpPlan};
use super::{Cli, EXIT_OK, Exit};
use crate::config::reach::{Untrusted, canonical_lossy};
use crate::config::trust::{StartUpKind, TrustEntry, TrustStore, env_names};

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Files to review and trust (default: every untrusted start-up file
    /// this start would read).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Trust the named files without asking (for scripts).
    #[arg(long, requires = "paths", conflicts_with_all = ["list", "forget"])]
    pub yes: bool,
    /// List the trusted files.
    #[arg(long, conflicts_with_all = ["paths", "forget"])]
    pub list: bool,
    /// Stop trusting the named files.
    #[arg(long, requires = "paths")]
    pub forget: bool,
}

/// Whether a question can be asked and answered on a terminal.
pub fn on_a_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

pub fn run(cli: &Cli, args: &TrustArgs) -> Result<u8, Exit> {
    let mut store = TrustStore::open().map_err(Exit::usage)?;
    if args.list {
        list(&store);
        return Ok(EXIT_OK);
    }
    let plan = StartUpPlan::read(cli)?;
    if let Some(reach) = plan.roots.holding(store.path()) {
        return Err(Exit::usage(format!(
            "the trust store {} is within the model's reach ({reach}): set XDG_CONFIG_HOME to a directory outside the workspace and [tools] allowed_paths",
            store.path().display()
        )));
    }
    if args.forget {
        for path in &args.paths {
            let forgotten = store.forget(&canonical_lossy(path));
            let said = if forgotten {
                "forgot"
            } else {
                "was not trusted:"
            };
            crate::print::err(format_args!("egirl: {said} {}", path.display()));
        }
        return save(&store).map(|()| EXIT_OK);
    }
    let files: Vec<StartUpFile> = match args.paths.is_empty() {
        true => pending(&plan, &store),
        false => args
            .paths
            .iter()
            .map(|p| read(p))
            .collect::<Result<_, _>>()?,
    };
    if files.is_empty() {
        crate::print::err(
            "egirl: nothing to trust: every start-up file this start reads is trusted or out of the model's reach",
        );
        return Ok(EXIT_OK);
    }
    if !args.yes && !on_a_terminal() {
        return Err(Exit::usage(
            "egirl trust asks on a terminal; to trust a file without review pass --yes and its path",
        ));
    }
    for file in &files {
        let why = crate::config::reach::check(
            &file.shown,
            file.searched,
            &file.content,
            &plan.roots,
            &store,
        )
        .err();
        if args.yes || review_file(file, why.as_deref(), &store).map_err(Exit::failure)? {
            record(&mut store, file)?;
        } else {
            crate::print::err(format_args!(
                "egirl: left {} untrusted",
                file.shown.display()
            ));
        }
    }
    Ok(EXIT_OK)
}

/// The untrusted start-up files of this start, as read.
fn pending(plan: &StartUpPlan, store: &TrustStore) -> Vec<StartUpFile> {
    plan.untrusted(store)
        .into_iter()
        .map(|(file, _)| StartUpFile {
            shown: file.shown.clone(),
            searched: file.searched,
            content: file.content.clone(),
        })
        .collect()
}

fn read(path: &Path) -> Result<StartUpFile, Exit> {
    let content = std::fs::read(path)
        .map_err(|e| Exit::usage(format!("cannot read {}: {e}", path.display())))?;
    Ok(StartUpFile {
        shown: path.to_path_buf(),
        searched: false,
        content,
    })
}

fn list(store: &TrustStore) {
    if store.entries().is_empty() {
        crate::print::err(format_args!(
            "egirl: no trusted files ({})",
            store.path().display()
        ));
        return;
    }
    let lines: String = store
        .entries()
        .iter()
        .map(|e| {
            let kind = match e.kind {
                StartUpKind::Config => "config",
                StartUpKind::Env => "env",
            };
            let hash = e.sha256.get(..12).unwrap_or(&e.sha256);
            format!("{}\t{kind}\tsha256:{hash}\n", e.path.display())
        })
        .collect();
    let _ = crate::print::out(&lines);
}

/// Adds `file` as it was read to the store and saves it.
pub fn record(store: &mut TrustStore, file: &StartUpFile) -> Result<(), Exit> {
    store.trust(&canonical_lossy(&file.shown), &file.content);
    save(store)?;
    crate::print::err(format_args!("egirl: trusted {}", file.shown.display()));
    Ok(())
}

fn save(store: &TrustStore) -> Result<(), Exit> {
    store
        .save()
        .map_err(|e| Exit::failure(format!("cannot write {}: {e}", store.path().display())))
}

/// The TUI's question before it starts on an untrusted file (see
/// `StartUpPlan::enforce`): shows it, and trusts it when `yes` is typed.
pub fn ask_and_record(
    file: &StartUpFile,
    why: &Untrusted,
    store: &mut TrustStore,
) -> Result<bool, Exit> {
    if !review_file(file, Some(why), store).map_err(Exit::failure)? {
        return Ok(false);
    }
    record(store, file)?;
    Ok(true)
}

/// Shows `file` (a diff when it changed since it was trusted; names only
/// for a `.env`) and asks for a typed `yes`.
fn review_file(
    file: &StartUpFile,
    why: Option<&Untrusted>,
    store: &TrustStore,
) -> Result<bool, String> {
    let before = store
        .entries()
        .iter()
        .find(|e| e.path == canonical_lossy(&file.shown));
    let mut text = match why {
        Some(why) => format!("egirl: {why}\n\n"),
        None => format!("egirl: {}\n\n", file.shown.display()),
    };
    text.push_str(&shown_content(file, before));
    text.push_str("\nTrust this file? type yes: ");
    let mut out = std::io::stdout();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| e.to_string())?;
    Ok(answer.trim().eq_ignore_ascii_case("yes"))
}

/// What the review shows of `file`.
fn shown_content(file: &StartUpFile, before: Option<&TrustEntry>) -> String {
    match StartUpKind::of(&file.shown) {
        StartUpKind::Env => env_summary(&env_names(&file.content), before),
        StartUpKind::Config => {
            let now = String::from_utf8_lossy(&file.content);
            match before.and_then(|b| b.text.as_deref()) {
                Some(trusted) => similar::TextDiff::from_lines(trusted, now.as_ref())
                    .unified_diff()
                    .header("trusted", "now")
                    .to_string(),
                None => format!("{now}\n"),
            }
        }
    }
}

/// A `.env` by its names (values are secrets): what it sets, and what
/// changed among the names since it was trusted.
fn env_summary(names: &[String], before: Option<&TrustEntry>) -> String {
    let mut out = format!(
        "sets {} (values not shown)\n",
        if names.is_empty() {
            "no variables".to_string()
        } else {
            names.join(", ")
        }
    );
    if let Some(before) = before {
        let added: Vec<&str> = names
            .iter()
            .filter(|n| !before.names.contains(n))
            .map(String::as_str)
            .collect();
        let removed: Vec<&str> = before
            .names
            .iter()
            .filter(|n| !names.contains(n))
            .map(String::as_str)
            .collect();
        out.push_str(&format!(
            "since trusted: added [{}], removed [{}], other values may have changed\n",
            added.join(", "),
            removed.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_env_file_is_shown_by_its_names() {
        let file = StartUpFile {
            shown: PathBuf::from(".env"),
            searched: false,
            content: b"API_KEY=hunter2-secret\nPORT=1\n".to_vec(),
        };
        let shown = shown_content(&file, None);
        assert!(shown.contains("API_KEY, PORT"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
    }

    #[test]
    fn a_changed_config_is_shown_as_a_diff() {
        let file = StartUpFile {
            shown: PathBuf::from("egirl.toml"),
            searched: true,
            content: b"[tools.exec]\napproval = \"full\"\n".to_vec(),
        };
        let before = TrustEntry {
            path: PathBuf::from("/x/egirl.toml"),
            kind: StartUpKind::Config,
            sha256: String::new(),
            text: Some("[tools.exec]\napproval = \"ask\"\n".into()),
            names: Vec::new(),
        };
        let shown = shown_content(&file, Some(&before));
        assert!(shown.contains("-approval = \"ask\""), "{shown}");
        assert!(shown.contains("+approval = \"full\""), "{shown}");
    }
}
