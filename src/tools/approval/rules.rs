//! Exec rules as argv prefixes: which commands a rule may cover at all,
//! whether a rule covers one, and the rule an approval remembers.
//!
//! A remembered rule (approved with `a` or `p`, or written to the approvals
//! file) widens only within the table of read-only commands
//! ([`safe_commands`]): approving `sed -n 1,5p notes.md` remembers `sed -n
//! 1,5p`, which covers `sed -n 1,5p other.md` but never `sed -n 1,5p
//! --expression=1e...`; approving anything the table does not hold
//! remembers its exact argv. A `[tools.exec] allow` prefix in the config
//! is the user's own: it covers longer commands the table does not know
//! (`allow = ["cargo test"]` covers `cargo test --lib`), and for a program
//! or subcommand the table knows, only what the table accepts.

use super::expansion;
use super::safe_commands::{self, Verdict};

/// Characters that let a command do more than run its argv: chaining (`;`,
/// `&&`, `||`), pipes, redirects, backgrounding, subshells and grouping,
/// command and parameter substitution, and newlines. Checked anywhere in the
/// text, even inside quotes, because being wrong about quoting is worse than
/// an extra question.
const SHELL_SYNTAX: &[&str] = &[
    ";", "&", "|", ">", "<", "(", ")", "`", "$(", "${", "\n", "\r",
];

/// Where a rule was written, which decides how far it widens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleOrigin {
    /// `[tools.exec] allow` in the config, written by the user.
    Config,
    /// Remembered from an approval (the approvals file or the session).
    Saved,
}

/// The argv of a command a rule may cover, or None when the command must be
/// asked about (shell syntax, unbalanced quotes, empty).
pub fn auto_approvable(command: &str) -> Option<Vec<String>> {
    if SHELL_SYNTAX.iter().any(|s| command.contains(s)) || expansion::expands(command) {
        return None;
    }
    let argv = shell_words::split(command).ok()?;
    (!argv.is_empty()).then_some(argv)
}

/// The table's verdict on `command` (already split into `argv`).
fn verdict(command: &str, argv: &[String]) -> Verdict {
    safe_commands::judge(argv, expansion::globs(command))
}

/// Whether `rule` (shell words) covers `command`: the command may be
/// covered at all ([`auto_approvable`]), and the rule is exactly its argv,
/// or a prefix of it that may widen that far (see the module comment).
pub fn rule_covers(rule: &str, command: &str, origin: RuleOrigin) -> bool {
    let (Some(argv), Ok(words)) = (auto_approvable(command), shell_words::split(rule)) else {
        return false;
    };
    if words.is_empty() || !argv.starts_with(&words) {
        return false;
    }
    words.len() == argv.len()
        || match verdict(command, &argv) {
            Verdict::Safe => true,
            Verdict::Unknown => origin == RuleOrigin::Config,
            Verdict::Unsafe => false,
        }
}

/// The rule recorded when the user approves a command for the session or
/// always. For a command the table accepts: the program, any options right
/// after it, and the first plain word (`git status -s` → `git status`,
/// `sed -n 1,5p notes.md` → `sed -n 1,5p`, `ls -la` → `ls -la`); stopping
/// at the first plain word keeps subcommands together. Anything else is
/// remembered as its exact argv (`cargo test --lib`, `rm -rf build`). None
/// when the command cannot be covered by a rule at all.
pub fn approval_prefix(command: &str) -> Option<String> {
    let argv = auto_approvable(command)?;
    if verdict(command, &argv) != Verdict::Safe {
        return Some(shell_words::join(&argv));
    }
    let end = argv
        .iter()
        .skip(1)
        .position(|word| !word.starts_with('-'))
        .map_or(argv.len(), |i| i + 2);
    Some(shell_words::join(&argv[..end]))
}

/// What `a`/`p` would remember for `command`, in words for the approval
/// modal: a prefix and what it covers, or the exact command. None when
/// nothing can be remembered (shell syntax).
pub fn rule_preview(command: &str) -> Option<String> {
    let argv = auto_approvable(command)?;
    let rule = approval_prefix(command)?;
    Some(if verdict(command, &argv) == Verdict::Safe {
        let why = safe_commands::why(&argv).unwrap_or("reads only");
        format!("`{rule}` and longer commands the read-only table accepts ({why})")
    } else {
        format!("exactly `{rule}`")
    })
}
