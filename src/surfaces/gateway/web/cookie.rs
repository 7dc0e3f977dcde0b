//! The browser's device token: the cookie `egirl_device`, set by a
//! pairing through `/api/pair`. HttpOnly (no script of the page reads
//! it, an injected one neither), SameSite=Strict (another site's page
//! never sends it), Secure when the page came over TLS; never in a URL.

use axum::http::{HeaderMap, HeaderValue, header};

/// The cookie's name.
pub const NAME: &str = "egirl_device";
/// A year: the device stays signed in until revoked or signed out.
const MAX_AGE_SECS: u64 = 365 * 24 * 60 * 60;

/// The token the request's cookie holds, when it has one (empty is none).
pub fn token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == NAME)
        .map(|(_, value)| value.trim())
        .filter(|value| !value.is_empty())
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
    fn the_token_is_found_among_other_cookies() {
        let mut headers = HeaderMap::new();
        assert_eq!(token(&headers), None);
        headers.append(header::COOKIE, "a=1; egirl_device=egd_x ".parse().unwrap());
        assert_eq!(token(&headers), Some("egd_x"));
        let mut other = HeaderMap::new();
        other.append(header::COOKIE, "theme=dark".parse().unwrap());
        other.append(header::COOKIE, "egirl_device=egd_y".parse().unwrap());
        assert_eq!(token(&other), Some("egd_y"));
        let mut empty = HeaderMap::new();
        empty.append(header::COOKIE, "egirl_device=".parse().unwrap());
        assert_eq!(token(&empty), None);
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
