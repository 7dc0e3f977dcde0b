//! Chat services count message length in UTF-16 code units (Discord's
//! 2,000, Telegram's 4,096); both bridges cut long lines the same way.

/// Length as the chat services count it.
pub fn width(s: &str) -> usize {
    s.encode_utf16().count()
}

/// `line` cut into pieces of at most `room` units: at the last space that
/// fits, else at the last character that fits.
pub fn pieces(line: &str, room: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while width(rest) > room {
        let mut end = 0;
        let mut used = 0;
        for (i, c) in rest.char_indices() {
            used += c.len_utf16();
            if used > room {
                break;
            }
            end = i + c.len_utf8();
        }
        let cut = rest[..end]
            .rfind(' ')
            .filter(|&space| space > 0)
            .unwrap_or(end);
        out.push(&rest[..cut]);
        rest = rest[cut..].strip_prefix(' ').unwrap_or(&rest[cut..]);
    }
    out.push(rest);
    out
}
