//! Options that make an allowed program run or write something other than
//! what its rule names, so that a remembered rule never widens past them.
//!
//! An allow rule is an argv prefix: `find .` covers `find . -name '*.md'`.
//! It must not cover `find . -exec touch X {} +`: the rule was about listing
//! files, and `-exec` turns `find` into a launcher for any program. The
//! table below names, per program, the words that do that (run another
//! program, load code, or write a file the command does not otherwise
//! name). Wrappers (`sudo`, `env`, `xargs`, `timeout`, ...) run whatever
//! follows them, so every word after them counts.
//!
//! Two consequences, both in [`super::rules`]:
//! - approving such a command for the session or always remembers its
//!   exact argv, never a prefix;
//! - a prefix rule (config, approvals file or session) covers a longer
//!   command only when the command has none of these words; a command that
//!   has one is covered only by a rule that is exactly its argv.
//!
//! The list errs towards asking: a false match costs a question, a miss
//! costs an unapproved program.

/// How a word of a command is recognised as widening it.
#[derive(Clone, Copy)]
enum Word {
    /// The word itself, or `word=value` for a long option (`--rsh=ssh`).
    Exact(&'static str),
    /// A short option letter, alone (`-c`) or in a cluster (`-xc`, `-ni`,
    /// `-avze`); never matches `--long` words.
    Short(char),
}

use Word::{Exact, Short};

/// What widens a program's command.
enum Widening {
    /// Everything after the program is another command (or sets up one).
    Wrapper,
    /// These words.
    Words(&'static [Word]),
}

use Widening::{Words, Wrapper};

/// Interpreter flags that take program text from the command line.
const EVAL_C: &[Word] = &[Short('c')];
const EVAL_E: &[Word] = &[Short('e'), Short('E')];

/// Program names (or a name with `*` at its end, a prefix) and what widens
/// them. Kept in one place: this is the whole list.
const TABLE: &[(&str, Widening)] = &[
    // Run another command with changed privileges, environment or limits.
    ("sudo", Wrapper),
    ("doas", Wrapper),
    ("su", Wrapper),
    ("runuser", Wrapper),
    ("pkexec", Wrapper),
    ("env", Wrapper),
    ("xargs", Wrapper),
    ("parallel", Wrapper),
    ("nice", Wrapper),
    ("ionice", Wrapper),
    ("chrt", Wrapper),
    ("taskset", Wrapper),
    ("timeout", Wrapper),
    ("nohup", Wrapper),
    ("setsid", Wrapper),
    ("stdbuf", Wrapper),
    ("unbuffer", Wrapper),
    ("time", Wrapper),
    ("watch", Wrapper),
    ("flock", Wrapper),
    ("chroot", Wrapper),
    ("unshare", Wrapper),
    ("nsenter", Wrapper),
    ("strace", Wrapper),
    ("ltrace", Wrapper),
    ("busybox", Wrapper),
    ("script", Wrapper),
    // Shell builtins that run their arguments as a command.
    ("exec", Wrapper),
    ("command", Wrapper),
    ("builtin", Wrapper),
    ("eval", Wrapper),
    ("source", Wrapper),
    (".", Wrapper),
    // A remote shell runs whatever follows the host.
    ("ssh", Wrapper),
    // Shells and interpreters with program text on the command line.
    ("sh", Words(EVAL_C)),
    ("bash", Words(EVAL_C)),
    ("zsh", Words(EVAL_C)),
    ("dash", Words(EVAL_C)),
    ("ksh", Words(EVAL_C)),
    ("fish", Words(EVAL_C)),
    ("csh", Words(EVAL_C)),
    ("tcsh", Words(EVAL_C)),
    ("python*", Words(EVAL_C)),
    ("pypy*", Words(EVAL_C)),
    ("perl*", Words(EVAL_E)),
    ("ruby*", Words(EVAL_E)),
    ("lua*", Words(EVAL_E)),
    ("Rscript", Words(EVAL_E)),
    ("osascript", Words(EVAL_E)),
    ("php*", Words(&[Short('r')])),
    (
        "node*",
        Words(&[
            Short('e'),
            Short('p'),
            Short('r'),
            Exact("--eval"),
            Exact("--print"),
            Exact("--require"),
            Exact("--import"),
        ]),
    ),
    ("deno", Words(&[Exact("eval")])),
    ("bun", Words(&[Short('e'), Exact("--eval")])),
    // awk runs `system()` and pipes from its program. One on the command
    // line is part of the rule, and `system(...)` or `|` in it is shell
    // syntax, never covered; a program from a file or extension is not.
    ("*awk", Words(AWK)),
    // find runs, deletes or writes to files named in its expression.
    (
        "find",
        Words(&[
            Exact("-exec"),
            Exact("-execdir"),
            Exact("-ok"),
            Exact("-okdir"),
            Exact("-delete"),
            Exact("-fprint"),
            Exact("-fprint0"),
            Exact("-fprintf"),
            Exact("-fls"),
        ]),
    ),
    (
        "fd*",
        Words(&[
            Short('x'),
            Short('X'),
            Exact("--exec"),
            Exact("--exec-batch"),
        ]),
    ),
    ("rg", Words(&[Exact("--pre")])),
    // git options that run a program or read another repository's config;
    // `git config` writes config (`core.fsmonitor`, `core.pager` run).
    (
        "git",
        Words(&[
            Short('c'),
            Short('C'),
            Exact("--config-env"),
            Exact("--exec-path"),
            Exact("--upload-pack"),
            Exact("--receive-pack"),
            Exact("--git-dir"),
            Exact("--work-tree"),
            Exact("config"),
        ]),
    ),
    // sed edits files in place, runs `e` commands or reads a script file.
    (
        "sed",
        Words(&[
            Short('i'),
            Short('e'),
            Short('f'),
            Exact("--in-place"),
            Exact("--expression"),
            Exact("--file"),
        ]),
    ),
    (
        "tar",
        Words(&[
            Short('I'),
            Short('F'),
            Exact("--to-command"),
            Exact("--checkpoint-action"),
            Exact("--use-compress-program"),
            Exact("--rsh-command"),
            Exact("--info-script"),
            Exact("--new-volume-script"),
        ]),
    ),
    (
        "rsync",
        Words(&[Short('e'), Exact("--rsh"), Exact("--rsync-path")]),
    ),
    ("scp", Words(&[Short('S'), Short('o'), Short('F')])),
    (
        "sort",
        Words(&[Short('o'), Exact("--output"), Exact("--compress-program")]),
    ),
    ("zip", Words(&[Exact("-TT"), Exact("--unzip-command")])),
    ("man", Words(&[Short('P'), Exact("--pager")])),
    (
        "curl",
        Words(&[
            Short('o'),
            Short('O'),
            Short('K'),
            Exact("--output"),
            Exact("--remote-name"),
            Exact("--config"),
        ]),
    ),
    (
        "wget",
        Words(&[
            Short('O'),
            Short('o'),
            Short('e'),
            Exact("--output-document"),
            Exact("--output-file"),
            Exact("--execute"),
        ]),
    ),
];

const AWK: &[Word] = &[
    Short('f'),
    Short('e'),
    Short('E'),
    Short('i'),
    Short('l'),
    Exact("--file"),
    Exact("--source"),
    Exact("--include"),
    Exact("--load"),
    Exact("--exec"),
];

/// Whether `argv` runs or writes something besides what its words say
/// plainly: a word of [`TABLE`] for its program, any argument of a wrapper,
/// or a leading `NAME=value` assignment (which the shell applies to the
/// program, `BASH_ENV` included).
pub fn widens(argv: &[String]) -> bool {
    let Some(first) = argv.first() else {
        return false;
    };
    if first.contains('=') {
        return true;
    }
    let program = first.rsplit('/').next().unwrap_or(first);
    let Some((_, widening)) = TABLE.iter().find(|(name, _)| names(name, program)) else {
        return false;
    };
    match widening {
        Wrapper => argv.len() > 1,
        Words(words) => argv[1..]
            .iter()
            .any(|arg| words.iter().any(|w| word_matches(*w, arg))),
    }
}

fn names(pattern: &str, program: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('*') {
        program.starts_with(prefix)
    } else if let Some(suffix) = pattern.strip_prefix('*') {
        program.ends_with(suffix)
    } else {
        program == pattern
    }
}

fn word_matches(word: Word, arg: &str) -> bool {
    match word {
        Exact(option) => {
            arg == option
                || (option.starts_with("--")
                    && arg
                        .strip_prefix(option)
                        .is_some_and(|rest| rest.starts_with('=')))
        }
        Short(letter) => arg
            .strip_prefix('-')
            .filter(|cluster| !cluster.starts_with('-'))
            .is_some_and(|cluster| cluster.contains(letter)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widens_cmd(command: &str) -> bool {
        widens(&shell_words::split(command).unwrap())
    }

    #[test]
    fn commands_that_run_or_write_something_else_are_recognised() {
        for command in [
            "find . -exec touch X {} +",
            "find . -name x -execdir rm {} +",
            "find . -ok rm {} +",
            "find . -delete",
            "find . -fprint out.txt",
            "find . -fprintf out.txt %p",
            "find . -fls out",
            "/usr/bin/find . -exec rm {} +",
            "git -c core.pager=sh log",
            "git --exec-path=/tmp/x status",
            "git fetch --upload-pack=/tmp/x origin",
            "git -C /elsewhere status",
            "git config core.fsmonitor x",
            "sed -i s/a/b/ f",
            "sed -ni p f",
            "sed --in-place=.bak s/a/b/ f",
            "xargs rm",
            "env FOO=1 ls",
            "sudo ls",
            "doas ls",
            "timeout 5 ls",
            "nice ls",
            "nohup ls",
            "sh -c ls",
            "bash -xc ls",
            "zsh -c ls",
            "python3 -c print(1)",
            "python3.12 -c x",
            "perl -e x",
            "perl -pie x",
            "ruby -e x",
            "node -e x",
            "node --eval=x",
            "awk -f prog.awk f",
            "gawk --source x",
            "tar -xf a.tar --to-command=sh",
            "tar --checkpoint=1 --checkpoint-action=exec=sh",
            "rsync -avze ssh a b:c",
            "rsync --rsh=ssh a b:c",
            "ssh host ls",
            "BASH_ENV=x ls",
            "curl -o out https://x",
            "sort -o out in",
        ] {
            assert!(widens_cmd(command), "{command}");
        }
    }

    #[test]
    fn plain_commands_do_not_widen() {
        for command in [
            "find . -name *.md",
            "find . -type f -print",
            "git status -s",
            "git log --oneline",
            "git commit -m msg",
            "sed -n 1,5p f",
            "ls -la",
            "env",
            "sudo",
            "python3 script.py -v",
            "bash script.sh",
            "awk -F, {print} f",
            "tar -xf a.tar",
            "rsync -av a b",
            "cargo test --lib",
            "sorted -o x",
            "grep -c x f",
        ] {
            assert!(!widens_cmd(command), "{command}");
        }
    }
}
