//! The page's files, embedded in the binary (the machines are offline:
//! nothing is fetched at run time). One row per file: its name under
//! `/assets/`, its content type, its bytes.

pub struct Asset {
    pub name: &'static str,
    pub content_type: &'static str,
    pub bytes: &'static [u8],
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

macro_rules! asset {
    ($name:literal, $type:expr) => {
        Asset {
            name: $name,
            content_type: $type,
            bytes: include_bytes!(concat!("assets/", $name)),
        }
    };
}

/// Every file of the page.
pub const ASSETS: &[Asset] = &[
    asset!("index.html", HTML),
    asset!("signin.html", HTML),
    asset!("app.css", CSS),
    asset!("app.js", JS),
    asset!("signin.js", JS),
    asset!("markdown.js", JS),
    asset!("highlight.js", JS),
    asset!("dom.js", JS),
    asset!("socket.js", JS),
    asset!("sessions.js", JS),
    asset!("conversation.js", JS),
    asset!("approvals.js", JS),
    asset!("notify.js", JS),
    asset!("panes.js", JS),
    asset!("input.js", JS),
];

/// The file named `name`, when there is one.
pub fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

/// The app page (`GET /` signed in).
pub fn index() -> &'static Asset {
    find("index.html").unwrap_or(&ASSETS[0])
}

/// The sign-in page (`GET /` otherwise).
pub fn signin() -> &'static Asset {
    find("signin.html").unwrap_or(&ASSETS[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_is_there_once_and_typed() {
        for asset in ASSETS {
            assert!(!asset.bytes.is_empty(), "{}", asset.name);
            assert_eq!(ASSETS.iter().filter(|a| a.name == asset.name).count(), 1);
            assert!(!asset.name.contains('/'), "{}", asset.name);
        }
        assert_eq!(index().name, "index.html");
        assert_eq!(signin().name, "signin.html");
    }
}
