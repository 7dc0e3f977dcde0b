//! Options read the way GNU `getopt_long` (and git's parse-options, and
//! ripgrep) read them: options anywhere before `--` (GNU permutes), short
//! options clustered (`-ni`) with a value attached (`-k2`) or in the next
//! word (`-k 2`), long options as `--name`, `--name=value` or `--name
//! value`, and, where the program abbreviates, any unique prefix of a long
//! name (`--expr` is sed's `--expression`).

use super::{Longs, Opt, Value};

/// What an entry accepts.
pub struct Grammar {
    /// Groups of accepted options (git's log options and diff options).
    pub options: &'static [&'static [Opt]],
    pub longs: Longs,
    /// The program's long options the entry does not accept: a prefix of
    /// one of them could be what the program reads.
    pub other_longs: &'static [&'static str],
    pub digit_options: bool,
}

/// A command's words, sorted out.
#[derive(Debug, Default)]
pub struct Parsed<'a> {
    pub operands: Vec<&'a str>,
    /// Sed scripts from `-e`/`--expression`, in order.
    pub scripts: Vec<&'a str>,
    pub seen: Vec<&'static Opt>,
}

/// Sorts `args` into options and operands; None when a word is an option
/// the grammar does not accept (unknown, ambiguous, a missing or
/// unexpected value).
pub fn parse<'a>(grammar: &Grammar, args: &'a [String]) -> Option<Parsed<'a>> {
    let mut parsed = Parsed::default();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            parsed.operands.extend(words.map(String::as_str));
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let option = resolve_long(grammar, name)?;
            let value = match (option.value, attached) {
                (Value::None, Some(_)) => return None,
                (Value::None | Value::Optional, None) => None,
                (_, Some(value)) => Some(value),
                (Value::Required | Value::SedScript, None) => Some(words.next()?.as_str()),
            };
            record(&mut parsed, option, value);
        } else if word.len() > 1 && word.starts_with('-') {
            let cluster = &word[1..];
            if grammar.digit_options && cluster.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            for (at, letter) in cluster.char_indices() {
                let option = all(grammar).find(|o| o.short == Some(letter))?;
                if option.value == Value::None {
                    record(&mut parsed, option, None);
                    continue;
                }
                // The value: the rest of the cluster, or (when required)
                // the next word; an optional one is only ever attached
                // (git's `-uno`, `-M50%`).
                let rest = &cluster[at + letter.len_utf8()..];
                let value = match (rest.is_empty(), option.value) {
                    (false, _) => Some(rest),
                    (true, Value::Optional) => None,
                    (true, _) => Some(words.next()?.as_str()),
                };
                record(&mut parsed, option, value);
                break;
            }
        } else {
            parsed.operands.push(word);
        }
    }
    Some(parsed)
}

fn record<'a>(parsed: &mut Parsed<'a>, option: &'static Opt, value: Option<&'a str>) {
    if option.value == Value::SedScript
        && let Some(script) = value
    {
        parsed.scripts.push(script);
    }
    parsed.seen.push(option);
}

/// The accepted option `name` means, or None. An exact name wins (as in
/// getopt); otherwise, where the program abbreviates, `name` must be a
/// prefix of exactly one accepted option and of none the entry leaves out.
fn resolve_long(grammar: &Grammar, name: &str) -> Option<&'static Opt> {
    if name.is_empty() {
        return None;
    }
    let exact = all(grammar).find(|o| o.long == Some(name));
    if exact.is_some() || grammar.longs == Longs::Exact {
        return exact;
    }
    if grammar.other_longs.iter().any(|o| o.starts_with(name)) {
        return None;
    }
    let mut candidates = all(grammar).filter(|o| o.long.is_some_and(|l| l.starts_with(name)));
    let first = candidates.next()?;
    candidates.next().is_none().then_some(first)
}

fn all(grammar: &Grammar) -> impl Iterator<Item = &'static Opt> {
    grammar.options.iter().flat_map(|group| group.iter())
}
