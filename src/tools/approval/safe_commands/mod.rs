//! The commands a remembered prefix rule may widen to: a table of
//! read-only programs and subcommands, each with its option grammar parsed
//! the way the program parses it ([`getopt`]), and the program text some of
//! them take (sed scripts, [`sed`]; find expressions, [`find`]).
//!
//! This is the opposite of a list of dangerous options: a command is safe
//! only when every word of it is accounted for by its entry. An option the
//! entry does not name, an abbreviation that could mean another option, a
//! sed command that is not known to only print, a find action that runs or
//! writes: anything unknown is not safe. The table is in [`table`].
//!
//! [`judge`] answers [`Verdict::Safe`] (the table accounts for every
//! word), [`Verdict::Unsafe`] (the table knows the program or subcommand
//! and something in the command is not in its grammar), or
//! [`Verdict::Unknown`] (the table has no entry: the command's meaning is
//! anybody's guess).

mod find;
mod getopt;
mod git;
mod options;
mod sed;
mod table;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;

pub use table::TABLE;

/// What a command is, as the table sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Its program (and subcommand) is in the table and every word parses
    /// under the entry's grammar.
    Safe,
    /// The table knows the program or subcommand, and the command has a
    /// word its grammar does not accept.
    Unsafe,
    /// The table has no entry for the program or subcommand.
    Unknown,
}

/// How a program reads long options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Longs {
    /// GNU `getopt_long`: any unique prefix of a long option names it
    /// (`--expr` is `--expression`), an exact name wins over prefixes.
    Abbreviated,
    /// Only the full name is accepted here. The program may accept
    /// abbreviations (git's parse-options does); refusing them only costs
    /// a question.
    Exact,
}

/// What follows an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// Nothing: a flag.
    None,
    /// A required value: `--opt=v`, `--opt v`, `-ov`, `-o v`.
    Required,
    /// An optional value, only attached: `--opt=v` (GNU
    /// `optional_argument`), `-ov` (git's `-uno`).
    Optional,
    /// A sed script (`-e`/`--expression`), checked as program text.
    SedScript,
}

/// One option an entry accepts: its short letter, its long name, or both.
#[derive(Clone, Copy, Debug)]
pub struct Opt {
    pub short: Option<char>,
    pub long: Option<&'static str>,
    pub value: Value,
}

/// A flag with a short and a long spelling (`""`/`'\0'` for none).
pub const fn flag(short: char, long: &'static str) -> Opt {
    opt(short, long, Value::None)
}

/// An option with a required value.
pub const fn arg(short: char, long: &'static str) -> Opt {
    opt(short, long, Value::Required)
}

/// A long option with an optional `=value`.
pub const fn opt_arg(long: &'static str) -> Opt {
    opt('\0', long, Value::Optional)
}

pub const fn opt(short: char, long: &'static str, value: Value) -> Opt {
    Opt {
        short: if short == '\0' { None } else { Some(short) },
        long: if long.is_empty() { None } else { Some(long) },
        value,
    }
}

/// What the words that are not options may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operands {
    /// Anything (files read, patterns, revisions).
    Any,
    /// At most this many (`uniq IN OUT` writes OUT).
    AtMost(usize),
    /// tail's files: tail reads `tail +1f FILE` and `tail -cf FILE` as
    /// its obsolete `[+-][N][bcl][f]` option, and `f` follows the file
    /// forever; so no operand starting with `+`, and no `-cf` (the one
    /// spelling getopt also reads, as `-c f`).
    TailFiles,
    /// None unless the command lists (`git branch NAME` creates a branch,
    /// `git branch --list PATTERN` does not).
    OnlyWithList,
    /// sed: the first is the script unless `-e` gave one; checked.
    SedScript,
    /// find: starting points, then an expression of known tests only.
    FindExpression,
}

/// One program or `program subcommand` whose prefix rules are safe.
#[derive(Debug)]
pub struct Entry {
    pub program: &'static str,
    /// A git subcommand; `None` for a program without one.
    pub subcommand: Option<&'static str>,
    /// Why a command this entry accepts cannot run or write anything.
    pub why: &'static str,
    pub longs: Longs,
    /// Groups of accepted options (git's log options and diff options).
    pub options: &'static [&'static [Opt]],
    /// `-5` means a count (`head -5`, `git log -3`).
    pub digit_options: bool,
    pub operands: Operands,
    /// The program's real long options this entry leaves out, the
    /// dangerous ones first: an abbreviation that could name one of them
    /// is refused, and the fuzz test tries every spelling of them.
    pub other_longs: &'static [&'static str],
    /// The program's real short options this entry leaves out (the fuzz
    /// test tries them; the parser refuses any letter not in `options`).
    #[cfg_attr(not(test), allow(dead_code))]
    pub other_shorts: &'static [char],
}

/// git's own options before the subcommand that egirl accepts: none of
/// them reads config or a repository from elsewhere, or runs anything.
pub const GIT_GLOBAL: &[Opt] = &[
    flag('P', "no-pager"),
    flag('\0', "no-optional-locks"),
    flag('\0', "literal-pathspecs"),
    flag('\0', "no-replace-objects"),
];

/// git's global options this table refuses: `-c`/`--config-env` set any
/// config (`core.pager`, `core.fsmonitor` run programs), `-C`/`--git-dir`/
/// `--work-tree` use another repository's config, `--exec-path` picks the
/// programs git runs.
pub const GIT_GLOBAL_OTHER_LONGS: &[&str] = &[
    "config-env",
    "exec-path",
    "git-dir",
    "work-tree",
    "namespace",
    "super-prefix",
    "bare",
    "paginate",
    "attr-source",
];

/// The table's verdict on `argv`. `unquoted_glob`: bash will glob a word
/// of the command, so a word of program text may become a file name the
/// model chose (`sed -n '1a x'*` matching a file named `1a x<newline>e
/// sh`): never safe for an entry that reads program text.
pub fn judge(argv: &[String], unquoted_glob: bool) -> Verdict {
    let Some((program, rest)) = argv.split_first() else {
        return Verdict::Unknown;
    };
    // Only a bare name found on PATH is the program the table describes:
    // `./ls` or `/tmp/x/ls` may be anything.
    if program.contains('/') || program.contains('=') {
        return Verdict::Unknown;
    }
    if program == "git" {
        return judge_git(rest);
    }
    match TABLE
        .iter()
        .find(|e| e.program == program && e.subcommand.is_none())
    {
        Some(entry) => verdict(check(entry, rest, unquoted_glob)),
        None => Verdict::Unknown,
    }
}

/// Why the table holds `argv`'s program or subcommand, if it does.
pub fn why(argv: &[String]) -> Option<&'static str> {
    let program = argv.first()?;
    let subcommand = match program.as_str() {
        "git" => Some(argv[1..].iter().find(|a| !a.starts_with('-'))?.as_str()),
        _ => None,
    };
    TABLE
        .iter()
        .find(|e| e.program == program && e.subcommand == subcommand)
        .map(|e| e.why)
}

fn judge_git(args: &[String]) -> Verdict {
    let global = getopt::Grammar {
        options: &[GIT_GLOBAL],
        longs: Longs::Exact,
        other_longs: GIT_GLOBAL_OTHER_LONGS,
        digit_options: false,
    };
    // git's global options come before the subcommand, never after it.
    let Some(at) = args.iter().position(|a| !a.starts_with('-')) else {
        return Verdict::Unsafe;
    };
    if getopt::parse(&global, &args[..at]).is_none_or(|p| !p.operands.is_empty()) {
        return Verdict::Unsafe;
    }
    // A format's `%G...` placeholders (and ref-filter's `%(signature)`)
    // verify signatures by running gpg, as `--show-signature` does. Refused
    // in any word: a pattern or path holding `%G` costs a question.
    if args
        .iter()
        .any(|a| a.contains("%G") || a.contains("%(signature"))
    {
        return Verdict::Unsafe;
    }
    let subcommand = args[at].as_str();
    match TABLE
        .iter()
        .find(|e| e.program == "git" && e.subcommand == Some(subcommand))
    {
        Some(entry) => verdict(check(entry, &args[at + 1..], false)),
        None => Verdict::Unknown,
    }
}

fn verdict(safe: bool) -> Verdict {
    if safe { Verdict::Safe } else { Verdict::Unsafe }
}

/// Whether every word of `args` (the words after the program and
/// subcommand) is accounted for by `entry`.
fn check(entry: &Entry, args: &[String], unquoted_glob: bool) -> bool {
    if entry.operands == Operands::FindExpression {
        return find::safe(args);
    }
    let grammar = getopt::Grammar {
        options: entry.options,
        longs: entry.longs,
        other_longs: entry.other_longs,
        digit_options: entry.digit_options,
    };
    let Some(parsed) = getopt::parse(&grammar, args) else {
        return false;
    };
    match entry.operands {
        Operands::Any => true,
        Operands::AtMost(n) => parsed.operands.len() <= n,
        Operands::TailFiles => {
            !parsed.operands.iter().any(|o| o.starts_with('+')) && !args.iter().any(|a| a == "-cf")
        }
        Operands::OnlyWithList => {
            parsed.operands.is_empty()
                || parsed
                    .seen
                    .iter()
                    .any(|o| o.long == Some("list") || o.short == Some('l'))
        }
        Operands::SedScript if unquoted_glob => false,
        Operands::SedScript => {
            let script = if parsed.scripts.is_empty() {
                match parsed.operands.first() {
                    Some(script) => script.to_string(),
                    None => return false,
                }
            } else {
                // GNU sed joins the pieces of `-e` with newlines.
                parsed.scripts.join("\n")
            };
            sed::print_only(&script)
        }
        Operands::FindExpression => false,
    }
}
