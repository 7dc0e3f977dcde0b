//! Each entry of the table against the escapes known for its program, and
//! the commands it is meant to cover.

use super::super::expansion;
use super::{TABLE, Verdict, judge};

fn verdict(command: &str) -> Verdict {
    judge(
        &shell_words::split(command).unwrap(),
        expansion::globs(command),
    )
}

fn assert_all(expected: Verdict, commands: &[&str]) {
    for command in commands {
        assert_eq!(verdict(command), expected, "{command}");
    }
}

#[test]
fn every_entry_says_why_it_is_safe() {
    for entry in TABLE {
        assert!(!entry.why.is_empty(), "{entry:?}");
    }
}

#[test]
fn sed_prints_only() {
    assert_all(
        Verdict::Safe,
        &[
            "sed -n 1,5p notes.md",
            "sed -n '1,5p;$p' notes.md",
            "sed -n -e 1p -e '$p' notes.md",
            "sed -ne 1p notes.md",
            "sed -n --expression=1p notes.md",
            "sed --quiet 1p notes.md",
            "sed --qu 1p notes.md",
            "sed -E 's/a+/b/g' notes.md",
            "sed -n 's|a|b|gp' notes.md",
            "sed -n '/start/,/end/{p;=}' notes.md",
            "sed '0~3d' notes.md",
            "sed -n '$!{h;d};x;G;p' notes.md",
            "sed '1a appended; e not a command' notes.md",
            "sed -n ':a;N;ba' notes.md",
            "sed -n 's/[0-9]\\+/N/p' notes.md",
            "sed -n 's/[[:space:]]*$//p' notes.md",
            "sed -n 's/[]x]/y/p' notes.md",
            "sed 5q notes.md",
            "sed -n -- 1p --expression=x",
        ],
    );
    assert_all(
        Verdict::Unsafe,
        &[
            "sed -n 1,5p --expr=1e'touch pwned' notes.md",
            "sed -n 1,5p --exp '1e touch pwned' notes.md",
            "sed -n 1,5p --expression='1e touch pwned' notes.md",
            "sed -n -e 1p -e '1e touch pwned' notes.md",
            "sed -n '1e touch pwned' notes.md",
            "sed -n 1,5p --in-pl notes.md",
            "sed -n 1,5p --in-place=.bak notes.md",
            "sed -ni 1p notes.md",
            "sed -i.bak 1p notes.md",
            "sed -n 1p -i notes.md",
            "sed -n -f script.sed notes.md",
            "sed -n --fi=script.sed notes.md",
            "sed -n '1w out' notes.md",
            "sed -n '1W out' notes.md",
            "sed -n 's/a/b/w out' notes.md",
            "sed -n 's/a/b/gw out' notes.md",
            "sed -n 's/a/touch pwned/e' notes.md",
            "sed -n 's|a|b|e' notes.md",
            "sed -n '1r /etc/passwd' notes.md",
            "sed -n '1R other' notes.md",
            "sed -n '1{e id\n}' notes.md",
            "sed -n 'pe' notes.md",
            // GNU sed 4.9 reads `[/]` as one bracket: the flag is `e`.
            "sed -n 's/[/]/;/e;/p/p' notes.md",
            "sed -n 's/[/]x//p' notes.md",
            "sed -n '/[/]/p' notes.md",
            "sed --s 1p notes.md",
            "sed -n",
            // bash globs the script: a file name may hold any text.
            "sed -n '1a x'* notes.md",
            "sed -n 1p *.md",
        ],
    );
}

#[test]
fn sort_and_uniq_write_nothing() {
    assert_all(
        Verdict::Safe,
        &[
            "sort notes.md",
            "sort -rn -k2,2 -t, notes.md",
            "sort -k 2 notes.md",
            "sort --rev --numeric notes.md",
            "sort --check=quiet notes.md",
            "uniq -c notes.md",
            "uniq --count notes.md",
        ],
    );
    assert_all(
        Verdict::Unsafe,
        &[
            "sort --compress=sh notes.md",
            "sort --compress-program=sh notes.md",
            "sort --outp=x notes.md",
            "sort --output x notes.md",
            "sort -o x notes.md",
            "sort -rno x notes.md",
            "sort -T /tmp notes.md",
            "sort --c=sh notes.md",
            "uniq notes.md out.md",
            "uniq -c notes.md out.md",
        ],
    );
}

#[test]
fn find_lists_only() {
    assert_all(
        Verdict::Safe,
        &[
            "find .",
            "find . -name '*.md' -type f",
            "find -L src -maxdepth 2 ( -name a -o -name b ) -print0",
            "find . -name -exec",
            "find . -printf '%p\\n'",
            "find . ! -path './target/*' -newer Cargo.toml",
        ],
    );
    assert_all(
        Verdict::Unsafe,
        &[
            "find . -exec touch X {} +",
            "find . -name x -execdir rm {} ;",
            "find . -ok rm {} ;",
            "find . -okdir rm {} ;",
            "find . -delete",
            "find . -fprint out",
            "find . -fprint0 out",
            "find . -fprintf out %p",
            "find . -fls out",
            "find . -name",
            "find -D exec .",
        ],
    );
}

#[test]
fn git_reads_only() {
    assert_all(
        Verdict::Safe,
        &[
            "git status",
            "git status -s",
            "git status -uno",
            "git --no-pager log --oneline -5",
            "git log --format=%h -n 3 -- src",
            "git log -p --stat main..HEAD",
            "git diff --cached --stat",
            "git diff HEAD~1 -- src/main.rs",
            "git show HEAD:README.md",
            "git grep -n foo -- src",
            "git grep -e foo --and -e bar",
            "git branch",
            "git branch -a -v",
            "git branch --list 'feature/*'",
        ],
    );
    assert_all(
        Verdict::Unsafe,
        &[
            "git grep -Ovim foo",
            "git grep -O vim foo",
            "git grep -nO vim foo",
            "git grep --open-files-in-pager=vim foo",
            "git grep --open-files-in foo",
            "git grep --textconv foo",
            "git log --output=x",
            "git log --out=x",
            "git log --ext-diff",
            "git log --textconv -p",
            "git log --show-signature",
            "git diff --output=x",
            "git diff --ext-diff",
            "git show --output x",
            "git -c core.pager=sh log",
            "git -C /elsewhere status",
            "git --git-dir=/x status",
            "git --exec-path=/tmp status",
            "git --config-env=core.pager=X log",
            "git branch new-branch",
            "git branch -d main",
            "git branch -D main",
            "git status --porcelain --no-such-option",
        ],
    );
    assert_all(
        Verdict::Unknown,
        &["git commit -m x", "git push", "git config core.pager sh"],
    );
}

#[test]
fn coreutils_and_search_tools_read_only() {
    assert_all(
        Verdict::Safe,
        &[
            "ls",
            "ls -la src",
            "ls --color=auto -1",
            "cat -n notes.md",
            "head -5 notes.md",
            "head -n 5 notes.md",
            "tail -n5 notes.md",
            "wc -l notes.md",
            "grep -rn --include=*.rs foo src",
            "grep -c x f",
            "grep -e -x -- f",
            "rg -n foo src",
            "rg --glob '*.rs' -e foo",
            "stat -c %s notes.md",
            "du -sh .",
            "pwd",
            "echo hello world",
        ],
    );
    assert_all(
        Verdict::Unsafe,
        &[
            "rg --pre sh foo",
            "rg --pre=sh foo",
            "rg --pr=sh foo",
            "rg -z foo",
            "rg --search-zip foo",
            "rg --hostname-bin=sh foo",
            "tail -f log",
            "tail --follow log",
            "tail --fo log",
            "pwd extra",
            "ls --no-such-option",
            "cat --h",
        ],
    );
    assert_all(
        Verdict::Unknown,
        &[
            "awk '{print}' f",
            "cargo check",
            "./ls",
            "/bin/ls",
            "FOO=1 ls",
            "sudo ls",
            "env ls",
            "python3 -c x",
        ],
    );
}

/// Words a value-taking option swallowed in the table's reading, where the
/// program reads them as what they are; and sed text the reader took for a
/// comment where GNU sed runs it.
#[test]
fn what_a_program_reads_as_a_command_is_never_a_value_or_a_comment() {
    assert_all(
        Verdict::Unsafe,
        &[
            // GNU sed ends a comment at the newline, backslash or not.
            "sed -n 1,5p -e '#x\\' -e 'e touch pwned' notes.md",
            "sed -n -e 'p #\\' -e '1e touch pwned' notes.md",
            "sed -n -e 's/a/b/#\\' -e 'w pwned' notes.md",
            // `--format` is only `--format=...` and `-U` takes its count
            // attached: git reads the next word as an option.
            "git log --format --output=notes.md",
            "git show --format --output=notes.md",
            "git log -U --output=notes.md",
            "git diff -U --output=notes.md",
            "git diff --unified --output=notes.md",
            // tail's obsolete `+N[bcl][f]`: `f` follows the file forever.
            "tail +1f notes.md",
            "tail +5cf notes.md",
            "tail -cf notes.md",
            // `%G?` verifies a signature with gpg, as --show-signature does.
            "git log --format=%G?",
            "git log '--pretty=format:%h %GS'",
            "git show --format=%GK HEAD",
            "git branch --format='%(signature)'",
        ],
    );
    assert_all(
        Verdict::Safe,
        &[
            "sed -n -e '#x\\' -e '1p' notes.md",
            "sed -n -e '1a text\\' -e 'e not run: appended text' notes.md",
            "git log --format=%h",
            "git diff -U5",
            "git diff --unified=5 -- src",
            "tail -n +2 notes.md",
        ],
    );
}
