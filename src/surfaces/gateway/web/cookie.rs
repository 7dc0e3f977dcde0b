//! The browser's device token: the cookie `egirl_device`, set by a
//! pairing through `/api/pair`. HttpOnly (no script of the page reads
//! it, an injected one neither), SameSite=Strict (another site's page
//! never sends it), Secure when the page came over TLS; never in a URL.

use axum::http::{HeaderMap, HeaderValue, header};

/// The cookie's name.
pub const NAME: &str = "egirl_device";
/// A year: the device stays signed in until revoked or signed out.
const MAX_AGE_SECS: u64 = 365 * 24 * 60 * 60;

/// The most `egirl_device` cookies of one request that are tried.
const MAX_TRIED: usize = 4;

/// The tokens the request's `egirl_device` cookies hold (empty ones are
/// none), in the order sent, the first [`MAX_TRIED`]. More than one: a page
/// of the same site (another port of this host) may set its own
/// `egirl_device` for a longer path, which the browser sends first; it
/// cannot read or replace the real one (HttpOnly), so each is tried.
pub fn tokens(headers: &HeaderMap) -> impl Iterator<Item = &str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(name, _)| *name == NAME)
        .map(|(_, value)| value.trim())
        .filter(|value| !value.is_empty())
        .take(MAX_TRIED)
}

/// `Set-Cookie` holding `token`; `secure` when the page is served over
/// TLS (a proxy in front).
pub fn set(token: &str, secure: bool) -> Option<HeaderValue> {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{NAME}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={MAX_AGE_SECS}{secure}"
    ))
    .ok()
}

/// `Set-Cookie` that removes the cookie.
pub fn clear() -> HeaderValue {
    HeaderValue::from_static("egirl_device=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tokens_are_found_among_other_cookies() {
        fn found(headers: &HeaderMap) -> Vec<&str> {
            tokens(headers).collect()
        }
        let mut headers = HeaderMap::new();
        assert!(found(&headers).is_empty());
        headers.append(header::COOKIE, "a=1; egirl_device=egd_x ".parse().unwrap());
        assert_eq!(found(&headers), ["egd_x"]);
        let mut other = HeaderMap::new();
        other.append(header::COOKIE, "theme=dark".parse().unwrap());
        other.append(header::COOKIE, "egirl_device=egd_y".parse().unwrap());
        assert_eq!(found(&other), ["egd_y"]);
        let mut empty = HeaderMap::new();
        empty.append(header::COOKIE, "egirl_device=".parse().unwrap());
        assert!(found(&empty).is_empty());
        let mut tossed = HeaderMap::new();
        let many = "egirl_device=j1; egirl_device=egd_z; egirl_device=j2; egirl_device=j3; egirl_device=j4";
        tossed.append(header::COOKIE, many.parse().unwrap());
        assert_eq!(found(&tossed), ["j1", "egd_z", "j2", "j3"]);
    }

    #[test]
    fn the_cookie_is_http_only_strict_and_secure_over_tls() {
        let plain = set("egd_t", false).unwrap();
        let plain = plain.to_str().unwrap();
        assert!(plain.starts_with("egirl_device=egd_t; Path=/; HttpOnly; SameSite=Strict"));
        assert!(!plain.contains("Secure"));
        assert!(
            set("egd_t", true)
                .unwrap()
                .to_str()
                .unwrap()
                .ends_with("; Secure")
        );
        assert!(clear().to_str().unwrap().contains("Max-Age=0"));
        assert!(set("bad\ntoken", false).is_none());
    }
}
