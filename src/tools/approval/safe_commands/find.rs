//! find's command line read as find reads it: options (`-H`, `-L`, `-P`),
//! starting points, then an expression whose every word is a known test,
//! operator or print action with its argument count. An argument is never
//! mistaken for a primary (`find . -name -exec` looks for files named
//! `-exec`). Actions that run (`-exec`, `-execdir`, `-ok`, `-okdir`),
//! delete (`-delete`) or write a file (`-fprint`, `-fprint0`, `-fprintf`,
//! `-fls`) are not in the lists, so a command with one is not safe.

/// Tests and options that take one argument.
const ONE_ARGUMENT: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-lname",
    "-ilname",
    "-regex",
    "-iregex",
    "-regextype",
    "-type",
    "-xtype",
    "-size",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-samefile",
    "-newer",
    "-anewer",
    "-cnewer",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-used",
    "-fstype",
    "-maxdepth",
    "-mindepth",
    "-printf",
];

/// Tests, options, operators and actions without an argument; the actions
/// print to stdout.
const NO_ARGUMENT: &[&str] = &[
    "(",
    ")",
    "!",
    ",",
    "-not",
    "-a",
    "-and",
    "-o",
    "-or",
    "-true",
    "-false",
    "-empty",
    "-executable",
    "-readable",
    "-writable",
    "-nouser",
    "-nogroup",
    "-depth",
    "-d",
    "-xdev",
    "-mount",
    "-noleaf",
    "-follow",
    "-daystart",
    "-ignore_readdir_race",
    "-noignore_readdir_race",
    "-print",
    "-print0",
    "-ls",
    "-prune",
    "-quit",
];

/// The primaries the fuzz test tries: each runs, deletes or writes.
#[cfg(test)]
pub const DANGEROUS: &[(&str, usize)] = &[
    ("-exec", 3),
    ("-execdir", 3),
    ("-ok", 3),
    ("-okdir", 3),
    ("-delete", 0),
    ("-fprint", 1),
    ("-fprint0", 1),
    ("-fprintf", 2),
    ("-fls", 1),
];

/// Whether every word after `find` is accounted for.
pub fn safe(args: &[String]) -> bool {
    let mut words = args.iter().map(String::as_str).peekable();
    // Options before the starting points (`-D` and `-O` are left out).
    while let Some(&word) = words.peek() {
        if matches!(word, "-H" | "-L" | "-P") {
            words.next();
        } else {
            break;
        }
    }
    // Starting points: up to the first word that begins an expression.
    while let Some(&word) = words.peek() {
        if word.starts_with('-') || matches!(word, "(" | ")" | "!" | ",") {
            break;
        }
        words.next();
    }
    while let Some(word) = words.next() {
        if ONE_ARGUMENT.contains(&word) {
            if words.next().is_none() {
                return false;
            }
        } else if !NO_ARGUMENT.contains(&word) {
            return false;
        }
    }
    true
}
