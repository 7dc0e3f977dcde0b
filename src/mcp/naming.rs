//! `mcp__<server>__<tool>`: the name the model calls an MCP tool by.
//! Providers take `[A-Za-z0-9_-]{1,64}`; other characters become `_`, and
//! a name past 64 characters is cut and ends in a hash of the full one, so
//! two long names never collide.

use sha2::{Digest, Sha256};

pub const PREFIX: &str = "mcp__";
const MAX_LEN: usize = 64;

/// The full name of `tool` on `server`.
pub fn full_name(server: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("{PREFIX}{server}__{clean}");
    if name.len() <= MAX_LEN {
        return name;
    }
    let hash = Sha256::digest(format!("{server}/{tool}").as_bytes());
    let suffix: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{}_{suffix}", &name[..MAX_LEN - suffix.len() - 1])
}

/// Whether the model meant an MCP tool.
pub fn is_mcp(name: &str) -> bool {
    name.starts_with(PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_cleaned_and_bounded() {
        assert_eq!(full_name("fs", "read_file"), "mcp__fs__read_file");
        assert_eq!(full_name("fs", "get.sum v2"), "mcp__fs__get_sum_v2");
        let long = full_name("server", &"x".repeat(100));
        assert_eq!(long.len(), 64);
        assert_ne!(long, full_name("server", &"x".repeat(101)));
        assert!(is_mcp(&long));
    }
}
