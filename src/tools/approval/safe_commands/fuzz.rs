//! Generated spellings for every entry of the table: every abbreviation
//! of every long option, `=value` and separate values, clustered short
//! options, in random order among safe operands. A spelling of an option
//! the entry leaves out (the program's dangerous ones included) is never
//! safe; a spelling of the entry's own options always is. Deterministic:
//! a small xorshift generator with a fixed seed.

use super::{Entry, GIT_GLOBAL_OTHER_LONGS, Longs, Operands, Opt, TABLE, Value, Verdict, judge};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn options(entry: &Entry) -> Vec<&'static Opt> {
    entry.options.iter().flat_map(|g| g.iter()).collect()
}

fn longs(entry: &Entry) -> Vec<&'static str> {
    options(entry).iter().filter_map(|o| o.long).collect()
}

/// The spellings of the accepted long option `name` the program reads as
/// it: the full name, and (where it abbreviates) each prefix no other
/// option of the program shares.
fn spellings(entry: &Entry, name: &'static str) -> Vec<String> {
    if entry.longs == Longs::Exact {
        return vec![name.to_string()];
    }
    let all: Vec<&str> = longs(entry)
        .into_iter()
        .chain(entry.other_longs.iter().copied())
        .collect();
    (1..=name.len())
        .map(|n| &name[..n])
        .filter(|p| *p == name || all.iter().filter(|l| l.starts_with(p)).count() == 1)
        .map(str::to_string)
        .collect()
}

/// A value the option accepts in a safe command.
fn value_for(option: &Opt) -> &'static str {
    if option.value == Value::SedScript {
        "1p"
    } else {
        "1"
    }
}

/// One accepted option, spelled at random: a unit of one or two words.
fn spell(rng: &mut Rng, entry: &Entry, option: &'static Opt) -> Vec<String> {
    let value = value_for(option);
    let use_long = option.long.is_some() && (option.short.is_none() || rng.below(2) == 0);
    if use_long {
        let names = spellings(entry, option.long.unwrap_or_default());
        let name = &names[rng.below(names.len())];
        return match (option.value, rng.below(2)) {
            (Value::None, _) => vec![format!("--{name}")],
            (Value::Optional, 0) => vec![format!("--{name}")],
            (Value::Optional, _) | (_, 0) => vec![format!("--{name}={value}")],
            _ => vec![format!("--{name}"), value.to_string()],
        };
    }
    let short = option.short.unwrap_or('?');
    // A cluster of flags first, then this option.
    let flags: Vec<char> = options(entry)
        .iter()
        .filter(|o| o.value == Value::None)
        .filter_map(|o| o.short)
        .collect();
    let mut cluster: String = (0..rng.below(3))
        .filter_map(|_| flags.get(rng.below(flags.len())))
        .collect();
    cluster.push(short);
    match (option.value, rng.below(2)) {
        (Value::None, _) | (Value::Optional, 0) => vec![format!("-{cluster}")],
        (_, 0) => vec![format!("-{cluster}{value}")],
        (Value::Optional, _) => vec![format!("-{cluster}{value}")],
        _ => vec![format!("-{cluster}"), value.to_string()],
    }
}

/// A command of `entry` with random accepted options and safe operands,
/// with `extra` (one unit) placed at a random spot among the options.
fn command(rng: &mut Rng, entry: &Entry, extra: Option<Vec<String>>) -> Vec<String> {
    let all = options(entry);
    let mut units: Vec<Vec<String>> = (0..rng.below(4))
        .map(|_| {
            let option = all[rng.below(all.len())];
            spell(rng, entry, option)
        })
        .collect();
    // A sed script given with `-e` (its value is `1p`) needs no operand.
    let has_script = units.iter().flatten().any(|w| w.ends_with("1p"));
    if let Some(extra) = extra {
        let at = rng.below(units.len() + 1);
        units.insert(at, extra);
    }
    let mut argv: Vec<String> = vec![entry.program.to_string()];
    argv.extend(entry.subcommand.map(str::to_string));
    argv.extend(units.into_iter().flatten());
    if entry.operands == Operands::SedScript && !has_script {
        argv.push("1p".into());
    }
    if !matches!(entry.operands, Operands::AtMost(0) | Operands::OnlyWithList) {
        argv.push("notes.md".into());
    }
    argv
}

fn verdict(argv: &[String]) -> Verdict {
    judge(argv, false)
}

#[test]
fn generated_spellings_of_accepted_options_are_safe() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for entry in TABLE
        .iter()
        .filter(|e| e.operands != Operands::FindExpression)
    {
        for _ in 0..300 {
            let argv = command(&mut rng, entry, None);
            assert_eq!(verdict(&argv), Verdict::Safe, "{argv:?}");
        }
    }
}

#[test]
fn generated_spellings_of_left_out_options_are_never_safe() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for entry in TABLE
        .iter()
        .filter(|e| e.operands != Operands::FindExpression)
    {
        let accepted = longs(entry);
        for other in entry.other_longs {
            for n in 1..=other.len() {
                let prefix = &other[..n];
                // An exact accepted name wins over abbreviations.
                if accepted.contains(&prefix) {
                    continue;
                }
                for spelled in [
                    vec![format!("--{prefix}")],
                    vec![format!("--{prefix}=sh")],
                    vec![format!("--{prefix}"), "sh".to_string()],
                ] {
                    let argv = command(&mut rng, entry, Some(spelled));
                    assert_ne!(verdict(&argv), Verdict::Safe, "{argv:?}");
                }
            }
        }
        let flags: Vec<char> = options(entry)
            .iter()
            .filter(|o| o.value == Value::None)
            .filter_map(|o| o.short)
            .collect();
        for short in entry.other_shorts {
            for _ in 0..10 {
                let mut cluster: String = (0..rng.below(3))
                    .filter_map(|_| flags.get(rng.below(flags.len())))
                    .collect();
                cluster.insert(rng.below(cluster.len() + 1), *short);
                let argv = command(&mut rng, entry, Some(vec![format!("-{cluster}x")]));
                assert_ne!(verdict(&argv), Verdict::Safe, "{argv:?}");
            }
        }
    }
}

#[test]
fn git_global_options_that_read_other_config_are_never_safe() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let git: Vec<&Entry> = TABLE.iter().filter(|e| e.program == "git").collect();
    for other in GIT_GLOBAL_OTHER_LONGS {
        for n in 1..=other.len() {
            let entry = git[rng.below(git.len())];
            let mut argv = command(&mut rng, entry, None);
            argv.insert(1, format!("--{}=x", &other[..n]));
            assert_ne!(verdict(&argv), Verdict::Safe, "{argv:?}");
        }
    }
    for global in ["-c", "-C", "-cx=y", "-Pc"] {
        let argv: Vec<String> = ["git", global, "x", "log"].map(String::from).to_vec();
        assert_ne!(verdict(&argv), Verdict::Safe, "{argv:?}");
    }
}

/// sed scripts: print-only commands in any order are safe; one command or
/// flag that runs, writes or reads a file anywhere among them is not,
/// whichever way the script is given.
#[test]
fn generated_sed_scripts() {
    const SAFE: &[&str] = &[
        "p", "1p", "$p", "1,5p", "/x/p", "/x/,/y/d", "s/a/b/", "s/a/b/gp", "s|a|b|2", "n", "N",
        "h", "G", "x", "=", "l", "q", "y/ab/cd/", "2~3p", "0,/x/p", "$!d",
    ];
    const DANGEROUS: &[&str] = &[
        "e touch pwned",
        "1e touch pwned",
        "w out",
        "1W out",
        "r /etc/passwd",
        "R x",
        "s/a/b/e",
        "s/a/b/w out",
        "s/a/b/gew out",
        "$ e id",
        "/x/!e id",
    ];
    let expressions = spellings(sed(), "expression");
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    for _ in 0..500 {
        let mut parts: Vec<&str> = (0..rng.below(4))
            .map(|_| SAFE[rng.below(SAFE.len())])
            .collect();
        let dangerous = rng.below(2) == 0;
        if dangerous {
            let at = rng.below(parts.len() + 1);
            parts.insert(at, DANGEROUS[rng.below(DANGEROUS.len())]);
        } else if parts.is_empty() {
            parts.push("p");
        }
        let script = parts.join(if rng.below(2) == 0 { ";" } else { "\n" });
        let mut argv: Vec<String> = vec!["sed".into(), "-n".into()];
        match rng.below(3) {
            0 => argv.push(script),
            1 => argv.extend(["-e".to_string(), script]),
            _ => {
                let name = &expressions[rng.below(expressions.len())];
                argv.push(format!("--{name}={script}"));
            }
        }
        argv.push("notes.md".into());
        let expected = if dangerous {
            Verdict::Unsafe
        } else {
            Verdict::Safe
        };
        assert_eq!(verdict(&argv), expected, "{argv:?}");
    }
}

fn sed() -> &'static Entry {
    TABLE.iter().find(|e| e.program == "sed").unwrap()
}

/// find: tests in any order are safe; an action that runs, deletes or
/// writes anywhere in the expression is not.
#[test]
fn generated_find_expressions() {
    const TESTS: &[&[&str]] = &[
        &["-name", "*.md"],
        &["-type", "f"],
        &["-maxdepth", "2"],
        &["-newer", "x"],
        &["!"],
        &["-o"],
        &["-print"],
        &["-print0"],
        &["-name", "-exec"],
    ];
    let mut rng = Rng(0x0bad_cafe_1234_5678);
    for _ in 0..500 {
        let mut units: Vec<Vec<String>> = (0..rng.below(5))
            .map(|_| {
                TESTS[rng.below(TESTS.len())]
                    .iter()
                    .map(|w| w.to_string())
                    .collect()
            })
            .collect();
        let dangerous = rng.below(2) == 0;
        if dangerous {
            let (primary, arity) = super::find::DANGEROUS[rng.below(super::find::DANGEROUS.len())];
            let mut unit = vec![primary.to_string()];
            unit.extend((0..arity).map(|i| format!("arg{i}")));
            let at = rng.below(units.len() + 1);
            units.insert(at, unit);
        }
        let mut argv = vec!["find".to_string(), ".".to_string()];
        argv.extend(units.into_iter().flatten());
        let expected = if dangerous {
            Verdict::Unsafe
        } else {
            Verdict::Safe
        };
        assert_eq!(verdict(&argv), expected, "{argv:?}");
    }
}
