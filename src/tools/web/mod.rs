//! What the web tools share: the guarded HTTP GET (addresses checked after
//! resolution, redirects followed by hand so every hop is checked and its
//! host approved, size and time caps) and HTML to markdown.

pub mod fetch;
pub mod guard;
pub mod interfaces;
pub mod markdown;
pub mod ranges;

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

/// What `egirl doctor` says of the web tools: (ok, what, detail).
pub fn doctor_lines(web: &crate::config::WebConfig) -> Vec<(Option<bool>, &'static str, String)> {
    use crate::config::WebFetchPolicy;
    let fetch = match web.fetch {
        WebFetchPolicy::Off => "off ([tools.web] fetch = \"off\"): not offered".to_string(),
        policy => format!(
            "{} ({} allowed domains){}",
            if policy == WebFetchPolicy::Ask {
                "asks for new hosts"
            } else {
                "any public host"
            },
            web.allow_domains.len(),
            if web.allow_private {
                "; private addresses allowed"
            } else {
                ""
            }
        ),
    };
    let search = match &web.search {
        None => (None, "not offered: no [tools.web.search]".to_string()),
        Some(s) => match s.endpoint() {
            Ok(url) => (
                Some(true),
                format!("{:?} at {url}", s.provider).to_lowercase(),
            ),
            Err(why) => (Some(false), format!("not offered: {why}")),
        },
    };
    vec![
        (Some(true), "web_fetch", fetch),
        (search.0, "web_search", search.1),
    ]
}
