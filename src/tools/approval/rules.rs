//! Exec rules as argv prefixes: which commands a rule may cover at all,
//! whether a rule covers one, and the rule an approval remembers.

use super::{expansion, narrow};

/// Characters that let a command do more than run its argv: chaining (`;`,
/// `&&`, `||`), pipes, redirects, backgrounding, subshells and grouping,
/// command and parameter substitution, and newlines. Checked anywhere in the
/// text, even inside quotes, because being wrong about quoting is worse than
/// an extra question.
const SHELL_SYNTAX: &[&str] = &[
    ";", "&", "|", ">", "<", "(", ")", "`", "$(", "${", "\n", "\r",
];

/// The argv of a command a rule may cover, or None when the command must be
/// asked about (shell syntax, unbalanced quotes, empty).
pub fn auto_approvable(command: &str) -> Option<Vec<String>> {
    if SHELL_SYNTAX.iter().any(|s| command.contains(s)) || expansion::expands(command) {
        return None;
    }
    let argv = shell_words::split(command).ok()?;
    (!argv.is_empty()).then_some(argv)
}

/// Whether `rule` (shell words) covers `argv`: it is exactly `argv`, or an
/// argv prefix of a command with no option that runs or writes something
/// else ([`narrow::widens`]).
pub fn rule_matches(rule: &str, argv: &[String]) -> bool {
    match shell_words::split(rule) {
        Ok(words) => {
            !words.is_empty()
                && argv.starts_with(&words)
                && (words.len() == argv.len() || !narrow::widens(argv))
        }
        Err(_) => false,
    }
}

/// The rule recorded when the user approves a command for the session or
/// always: the program, any options right after it, and the first plain
/// word (`git status -s` → `git status`, `cargo test --lib` → `cargo test`,
/// `ls` → `ls`, `rm -rf build` → `rm -rf build`). Stopping at the first
/// plain word keeps subcommands together without widening `rm -rf build`
/// into `rm`. A command that runs or writes something else
/// ([`narrow::widens`]: `find . -exec ...`, `sudo ...`) is remembered as
/// its exact argv. None when the command cannot be covered by a rule at all.
pub fn approval_prefix(command: &str) -> Option<String> {
    let argv = auto_approvable(command)?;
    if narrow::widens(&argv) {
        return Some(shell_words::join(&argv));
    }
    let end = argv
        .iter()
        .skip(1)
        .position(|word| !word.starts_with('-'))
        .map_or(argv.len(), |i| i + 2);
    Some(shell_words::join(&argv[..end]))
}
