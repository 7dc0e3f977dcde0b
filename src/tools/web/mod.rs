//! What the web tools share: the guarded HTTP GET (addresses checked after
//! resolution, redirects followed by hand so every hop is checked and its
//! host approved, size and time caps) and HTML to markdown.

pub mod fetch;
pub mod guard;
pub mod markdown;

/// `egirl/<version>`: sites see who is asking.
pub fn user_agent() -> String {
    format!("egirl/{}", env!("CARGO_PKG_VERSION"))
}

/// A byte count for people: `512 B`, `14.2 KB`, `20.0 MB`.
pub fn human_bytes(n: u64) -> String {
    match n {
        n if n < 1024 => format!("{n} B"),
        n if n < 1024 * 1024 => format!("{:.1} KB", n as f64 / 1024.0),
        n => format!("{:.1} MB", n as f64 / (1024.0 * 1024.0)),
    }
}
