//! The environment a command runs with: egirl's own minus its secrets.
//!
//! A command that inherits egirl's environment can print every key egirl
//! holds (`env`), so it loses: egirl's keys (`SECRET_VARS`), every
//! variable loaded from the `.env` files, and any variable named like a
//! secret (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`), except the
//! names `[tools.exec] env_passthrough` lists. Dropped whatever the
//! config says, because they make the shell run something before the
//! command itself: `BASH_ENV` and `ENV` (a file sourced by `bash -c` /
//! `sh`), exported functions (`BASH_FUNC_*`, which can redefine `ls`),
//! and `SHELLOPTS`/`BASHOPTS`/`PS4` (xtrace with a `$(...)` prompt).
//! The same environment for every command, however it was approved.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::PathBuf;

use crate::config::secrets::{dotenv_entries, is_secret_name};

/// Variables that make a shell run code before the command.
const SHELL_STARTUP: [&str; 5] = ["BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4"];

/// egirl's environment as a command gets it; `env_files` are the `.env`
/// files loaded at start-up (their names are read again here: the values
/// may have changed, the names egirl loaded have not).
pub fn command_env(passthrough: &[String], env_files: &[PathBuf]) -> Vec<(OsString, OsString)> {
    let from_dotenv: HashSet<String> = dotenv_entries(env_files)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    filtered(std::env::vars_os(), passthrough, &from_dotenv)
}

fn filtered(
    vars: impl Iterator<Item = (OsString, OsString)>,
    passthrough: &[String],
    from_dotenv: &HashSet<String>,
) -> Vec<(OsString, OsString)> {
    vars.filter(|(name, _)| {
        let name = name.to_string_lossy();
        if SHELL_STARTUP.contains(&name.as_ref()) || name.starts_with("BASH_FUNC_") {
            return false;
        }
        let secret = is_secret_name(&name) || from_dotenv.contains(name.as_ref());
        !secret || passthrough.iter().any(|p| p == name.as_ref())
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(vars: &[(&str, &str)], passthrough: &[&str], dotenv: &[&str]) -> Vec<String> {
        let vars = vars
            .iter()
            .map(|(n, v)| (OsString::from(n), OsString::from(v)));
        let passthrough: Vec<String> = passthrough.iter().map(|s| s.to_string()).collect();
        let dotenv: HashSet<String> = dotenv.iter().map(|s| s.to_string()).collect();
        filtered(vars, &passthrough, &dotenv)
            .into_iter()
            .map(|(n, _)| n.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn secrets_dotenv_names_and_shell_startup_are_dropped() {
        let kept = names(
            &[
                ("PATH", "/bin"),
                ("HOME", "/home/u"),
                ("ANTHROPIC_API_KEY", "k"),
                ("DISCORD_TOKEN", "t"),
                ("TELEGRAM_BOT_TOKEN", "123:tg"),
                ("FOO_TOKEN", "f"),
                ("db_password", "p"),
                ("MY_SERVICE_URL", "u"),
                ("BASH_ENV", "/tmp/x"),
                ("ENV", "/tmp/x"),
                ("BASH_FUNC_ls%%", "() { true; }"),
                ("PS4", "$(touch x)"),
            ],
            &[],
            &["MY_SERVICE_URL"],
        );
        assert_eq!(kept, ["PATH", "HOME"]);
    }

    #[test]
    fn passthrough_keeps_a_secret_but_never_shell_startup() {
        let kept = names(
            &[
                ("FOO_TOKEN", "f"),
                ("MY_SERVICE_URL", "u"),
                ("BAR_TOKEN", "b"),
                ("BASH_ENV", "/tmp/x"),
            ],
            &["FOO_TOKEN", "MY_SERVICE_URL", "BASH_ENV"],
            &["MY_SERVICE_URL"],
        );
        assert_eq!(kept, ["FOO_TOKEN", "MY_SERVICE_URL"]);
    }
}
