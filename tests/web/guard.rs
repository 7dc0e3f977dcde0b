//! The address guard through the real binary: this machine's own
//! interface addresses and the documentation ranges are refused before
//! any connection, like loopback.

use std::net::{IpAddr, SocketAddr};

use serde_json::json;

use super::{LOOPBACK_ALLOWED, call, site_at};

/// fetch = "allow": no question; only the address can refuse.
const NO_QUESTION: &str = "[tools.web]\nfetch = \"allow\"\ntimeout = \"3s\"\n";

/// An address of one of this machine's interfaces other than loopback, as
/// `hostname -I` lists them (IPv4 first; IPv6 link-local needs a scope and
/// is left out).
fn non_loopback_address() -> Option<IpAddr> {
    let out = std::process::Command::new("hostname")
        .arg("-I")
        .output()
        .ok()?;
    let own: Vec<IpAddr> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|a| a.parse().ok())
        .filter(|ip: &IpAddr| match ip {
            IpAddr::V4(v4) => !v4.is_loopback(),
            IpAddr::V6(v6) => !v6.is_loopback() && v6.segments()[0] & 0xffc0 != 0xfe80,
        })
        .collect();
    own.iter().find(|ip| ip.is_ipv4()).or(own.first()).copied()
}

#[tokio::test]
async fn a_service_on_every_interface_is_not_reached_by_this_machines_own_address() {
    let Some(own) = non_loopback_address() else {
        eprintln!("skipped: this machine has no interface address besides loopback");
        return;
    };
    let bind = if own.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
    let site = site_at(bind).await;
    let url = format!("http://{}/page", SocketAddr::new(own, site.addr.port()));

    let ((ok, out), _, _) = call("web_fetch", json!({ "url": url }), NO_QUESTION, &[], &[]).await;
    assert!(!ok, "{out}");
    assert!(
        out.starts_with(&format!("refused: {own} is an address of this machine (")),
        "{out}"
    );
    assert!(
        out.contains("allow_private = false") && !out.contains('\n'),
        "{out}"
    );
    assert!(site.seen.paths().is_empty(), "{:?}", site.seen.paths());

    // The same URL does reach the service when private addresses are allowed:
    // the refusal above is the guard's, not an unreachable address.
    let ((ok, out), _, _) = call(
        "web_fetch",
        json!({ "url": url }),
        LOOPBACK_ALLOWED,
        &[],
        &[],
    )
    .await;
    assert!(ok, "{out}");
    assert_eq!(site.seen.paths(), ["/page"]);
}

#[tokio::test]
async fn a_documentation_address_is_refused_without_connecting() {
    for url in [
        "http://192.0.2.1:9/",
        "http://198.51.100.7/",
        "http://203.0.113.9/",
        "http://[2001:db8::1]/",
    ] {
        let ((ok, out), _, _) =
            call("web_fetch", json!({ "url": url }), NO_QUESTION, &[], &[]).await;
        assert!(!ok, "{url}: {out}");
        // The literal's own check, before any connection: not a timeout or
        // a connection error.
        assert!(out.starts_with("refused: "), "{url}: {out}");
        assert!(out.contains("a documentation address ("), "{url}: {out}");
        assert!(!out.contains('\n'), "{out}");
    }
}
