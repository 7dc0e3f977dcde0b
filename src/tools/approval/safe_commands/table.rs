//! The table: programs whose prefix rules may widen, each with the options
//! it accepts and why a command it accepts only reads. git's subcommands
//! are in [`super::git`].
//!
//! Reading an entry: `options` are the options a safe command may use
//! (short letter, long name, and whether a value follows); `other_longs`
//! and `other_shorts` are the program's real options the entry leaves out,
//! the ones that run or write something first. An abbreviation that could
//! name a left-out option is refused, and the fuzz test tries them all.
//!
//! Left out on purpose, so remembered as exact argv only: `awk` (its
//! program runs `system()` and pipes), `cargo`/`make`/`npm` and any build
//! tool (a build script or a test is code the model can write), `tree`
//! (`-o` writes a file), `date` (`-s` sets the clock), `file` (`-C`
//! compiles a magic file), `xargs`, `env`, `sudo` and every other wrapper,
//! shells and interpreters, `tar`, `curl`, `fd`.

use super::Longs::{Abbreviated, Exact};
use super::Operands::{Any, AtMost, FindExpression, SedScript, TailFiles};
use super::options::{DU, GREP, HEAD, LS, RG, SORT};
use super::{Entry, Value, arg, flag, opt, opt_arg};

pub const TABLE: &[Entry] = &[
    // Prints the working directory; reads nothing but it.
    Entry {
        program: "pwd",
        subcommand: None,
        why: "prints the working directory",
        longs: Abbreviated,
        options: &[&[flag('L', "logical"), flag('P', "physical")]],
        digit_options: false,
        operands: AtMost(0),
        other_longs: &["help", "version"],
        other_shorts: &[],
    },
    // bash's builtin echo prints its words; its only options pick escapes.
    Entry {
        program: "echo",
        subcommand: None,
        why: "prints its words",
        longs: Exact,
        options: &[&[flag('n', ""), flag('e', ""), flag('E', "")]],
        digit_options: false,
        operands: Any,
        other_longs: &[],
        other_shorts: &[],
    },
    // Lists directories; no option of ls writes or runs anything.
    Entry {
        program: "ls",
        subcommand: None,
        why: "lists directories",
        longs: Abbreviated,
        options: &[LS],
        digit_options: false,
        operands: Any,
        other_longs: &["help", "version"],
        other_shorts: &[],
    },
    // Prints files; every option changes only how they are printed.
    Entry {
        program: "cat",
        subcommand: None,
        why: "prints files",
        longs: Abbreviated,
        options: &[&[
            flag('A', "show-all"),
            flag('b', "number-nonblank"),
            flag('e', ""),
            flag('E', "show-ends"),
            flag('n', "number"),
            flag('s', "squeeze-blank"),
            flag('t', ""),
            flag('T', "show-tabs"),
            flag('u', ""),
            flag('v', "show-nonprinting"),
        ]],
        digit_options: false,
        operands: Any,
        other_longs: &["help", "version"],
        other_shorts: &[],
    },
    // Prints the start of files.
    Entry {
        program: "head",
        subcommand: None,
        why: "prints the start of files",
        longs: Abbreviated,
        options: &[HEAD],
        digit_options: true,
        operands: Any,
        other_longs: &["help", "version"],
        other_shorts: &[],
    },
    // Prints the end of files; following a file (which never ends) is
    // left out.
    Entry {
        program: "tail",
        subcommand: None,
        why: "prints the end of files",
        longs: Abbreviated,
        options: &[HEAD],
        digit_options: true,
        operands: TailFiles,
        other_longs: &[
            "follow",
            "pid",
            "retry",
            "sleep-interval",
            "max-unchanged-stats",
            "help",
            "version",
        ],
        other_shorts: &['f', 'F', 's'],
    },
    // Counts lines, words and bytes of files it reads.
    Entry {
        program: "wc",
        subcommand: None,
        why: "counts what it reads",
        longs: Abbreviated,
        options: &[&[
            flag('c', "bytes"),
            flag('m', "chars"),
            flag('l', "lines"),
            flag('w', "words"),
            flag('L', "max-line-length"),
            opt('\0', "files0-from", Value::Required),
        ]],
        digit_options: false,
        operands: Any,
        other_longs: &["total", "help", "version"],
        other_shorts: &[],
    },
    // Searches files; every option of GNU grep only reads or prints.
    Entry {
        program: "grep",
        subcommand: None,
        why: "searches what it reads",
        longs: Abbreviated,
        options: &[GREP],
        digit_options: true,
        operands: Any,
        other_longs: &["help", "version"],
        other_shorts: &['V'],
    },
    // Searches files; `--pre` and `--hostname-bin` run programs and
    // `--search-zip` runs decompressors, so they are left out. ripgrep
    // does not abbreviate long options.
    Entry {
        program: "rg",
        subcommand: None,
        why: "searches what it reads",
        longs: Exact,
        options: &[RG],
        digit_options: false,
        operands: Any,
        other_longs: &[
            "pre",
            "pre-glob",
            "hostname-bin",
            "search-zip",
            "ignore-file",
            "generate",
            "help",
            "version",
        ],
        other_shorts: &['z'],
    },
    // Prints file metadata.
    Entry {
        program: "stat",
        subcommand: None,
        why: "prints file metadata",
        longs: Abbreviated,
        options: &[&[
            flag('L', "dereference"),
            flag('f', "file-system"),
            arg('c', "format"),
            arg('\0', "printf"),
            flag('t', "terse"),
            arg('\0', "cached"),
        ]],
        digit_options: false,
        operands: Any,
        other_longs: &["help", "version"],
        other_shorts: &[],
    },
    // Sums disk usage of what it reads.
    Entry {
        program: "du",
        subcommand: None,
        why: "sums disk usage",
        longs: Abbreviated,
        options: &[DU],
        digit_options: false,
        operands: Any,
        other_longs: &["help", "version"],
        other_shorts: &[],
    },
    // Sorts what it reads to stdout; `-o`/`--output` writes a file,
    // `--compress-program` runs one, `-T` writes temporary files where it
    // is told: left out.
    Entry {
        program: "sort",
        subcommand: None,
        why: "sorts what it reads to stdout",
        longs: Abbreviated,
        options: &[SORT],
        digit_options: false,
        operands: Any,
        other_longs: &[
            "output",
            "compress-program",
            "temporary-directory",
            "random-source",
            "help",
            "version",
        ],
        other_shorts: &['o', 'T'],
    },
    // Filters repeated lines to stdout; a second operand is an output file.
    Entry {
        program: "uniq",
        subcommand: None,
        why: "filters repeated lines to stdout, with one input operand",
        longs: Abbreviated,
        options: &[&[
            flag('c', "count"),
            flag('d', "repeated"),
            flag('D', ""),
            opt_arg("all-repeated"),
            flag('u', "unique"),
            flag('i', "ignore-case"),
            arg('f', "skip-fields"),
            arg('s', "skip-chars"),
            arg('w', "check-chars"),
            flag('z', "zero-terminated"),
            opt_arg("group"),
        ]],
        digit_options: false,
        operands: AtMost(1),
        other_longs: &["help", "version"],
        other_shorts: &[],
    },
    // Prints edited lines to stdout with a script read as program text
    // (only print, edit and branch commands); `-i` edits files in place
    // and `-f` reads a script this check never sees: left out.
    Entry {
        program: "sed",
        subcommand: None,
        why: "prints edited lines with a script that only prints",
        longs: Abbreviated,
        options: &[&[
            flag('n', "quiet"),
            flag('\0', "silent"),
            flag('E', "regexp-extended"),
            flag('r', ""),
            flag('s', "separate"),
            flag('u', "unbuffered"),
            flag('z', "null-data"),
            flag('\0', "posix"),
            flag('\0', "debug"),
            flag('\0', "sandbox"),
            arg('l', "line-length"),
            opt('e', "expression", Value::SedScript),
        ]],
        digit_options: false,
        operands: SedScript,
        other_longs: &[
            "in-place",
            "file",
            "follow-symlinks",
            "binary",
            "zero-terminated",
            "help",
            "version",
        ],
        other_shorts: &['i', 'f', 'b'],
    },
    // Lists files matching tests; its actions only print (see `find.rs`).
    Entry {
        program: "find",
        subcommand: None,
        why: "lists files; only tests and print actions",
        longs: Exact,
        options: &[],
        digit_options: false,
        operands: FindExpression,
        other_longs: &[],
        other_shorts: &[],
    },
    super::git::STATUS,
    super::git::DIFF,
    super::git::LOG,
    super::git::SHOW,
    super::git::GREP,
    super::git::BRANCH,
];
