//! web_fetch through the real binary against the local site.

use serde_json::json;

use super::{LOOPBACK_ALLOWED, call, site};

#[tokio::test]
async fn html_becomes_markdown_of_the_main_content_with_links_kept() {
    let site = site().await;
    let ((ok, out), _, _) = call(
        "web_fetch",
        json!({"url": site.url("/page")}),
        LOOPBACK_ALLOWED,
        &[],
        &[],
    )
    .await;
    assert!(ok, "{out}");
    assert!(
        out.starts_with(&format!("{} (200, text/html)", site.url("/page"))),
        "{out}"
    );
    assert!(out.contains("# Kettle manual"), "{out}");
    assert!(out.contains("**MAX**"), "{out}");
    // Relative links come back absolute, so they can be fetched as they are.
    assert!(
        out.contains(&format!("[descaling]({})", site.url("/care.html"))),
        "{out}"
    );
    assert!(out.contains("| Green tea | 80   |"), "{out}");
    for noise in ["Shop", "Copyright", "track()", "color: red", "<p>"] {
        assert!(!out.contains(noise), "{noise} in {out}");
    }
}

#[tokio::test]
async fn a_redirect_chain_is_followed_to_its_end() {
    let site = site().await;
    let ((ok, out), _, _) = call(
        "web_fetch",
        json!({"url": site.url("/r/4")}),
        LOOPBACK_ALLOWED,
        &[],
        &[],
    )
    .await;
    assert!(ok, "{out}");
    assert!(out.starts_with(&site.url("/page")), "{out}");
    assert_eq!(
        site.seen.paths(),
        ["/r/4", "/r/3", "/r/2", "/r/1", "/r/0", "/page"]
    );
}

#[tokio::test]
async fn redirects_are_bounded_and_every_hop_is_checked() {
    let site = site().await;
    let ((ok, out), _, _) = call(
        "web_fetch",
        json!({"url": site.url("/r/9")}),
        LOOPBACK_ALLOWED,
        &[],
        &[],
    )
    .await;
    assert!(!ok && out.contains("too many redirects"), "{out}");
    assert_eq!(site.seen.paths().len(), 6, "{:?}", site.seen.paths());

    // A hop to another scheme is refused like a first URL would be.
    let ((ok, out), _, _) = call(
        "web_fetch",
        json!({"url": site.url("/to-file")}),
        LOOPBACK_ALLOWED,
        &[],
        &[],
    )
    .await;
    assert!(!ok && out.contains("only http and https"), "{out}");
    assert!(!out.contains("root:"), "{out}");
}

#[tokio::test]
async fn a_20_mb_body_is_cut_at_the_cap() {
    let site = site().await;
    let config = format!("{LOOPBACK_ALLOWED}max_bytes = 1048576\n");
    let ((ok, out), _, _) = call(
        "web_fetch",
        json!({"url": site.url("/big"), "max_chars": 2000}),
        &config,
        &[],
        &[],
    )
    .await;
    assert!(ok, "{}", &out[..out.len().min(500)]);
    assert!(
        out.contains("[body cut at 1.0 MB of 20.0 MB"),
        "{}",
        &out[..300]
    );
    // The model gets what it asked for, and is told how much more was read.
    assert!(out.contains(&"a".repeat(2000)), "no body");
    assert!(!out.contains(&"a".repeat(2001)));
    assert!(
        out.contains(&format!("[{} more characters", 1024 * 1024 - 2000)),
        "{}",
        &out[out.len().saturating_sub(200)..]
    );
}

#[tokio::test]
async fn a_slow_server_times_out() {
    let site = site().await;
    let config = format!("{LOOPBACK_ALLOWED}timeout = \"1s\"\n");
    let ((ok, out), _, _) = call(
        "web_fetch",
        json!({"url": site.url("/slow")}),
        &config,
        &[],
        &[],
    )
    .await;
    assert!(!ok, "{out}");
    assert!(out.contains("timed out after 1s"), "{out}");
}

#[tokio::test]
async fn binary_is_refused_with_its_type_and_size() {
    let site = site().await;
    let ((ok, out), _, _) = call(
        "web_fetch",
        json!({"url": site.url("/bin")}),
        LOOPBACK_ALLOWED,
        &[],
        &[],
    )
    .await;
    assert!(!ok, "{out}");
    assert!(out.contains("image/png (5.0 KB)"), "{out}");
    assert!(out.contains("not text"), "{out}");
}

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let site = site().await;
    // fetch = "allow": no question; the address alone refuses.
    let config = "[tools.web]\nfetch = \"allow\"\n";
    // A literal address, and a name that resolves to one (the resolver's check).
    for url in [site.url("/page"), site.named("/page")] {
        let ((ok, out), _, _) = call("web_fetch", json!({ "url": url }), config, &[], &[]).await;
        assert!(!ok, "{out}");
        assert!(out.contains("loopback address"), "{out}");
        assert!(out.contains("allow_private = false"), "{out}");
    }
    // Nothing reached the server: refused before connecting.
    assert!(site.seen.paths().is_empty(), "{:?}", site.seen.paths());

    // allow_private = true lets the tests' own loopback server through, by name too.
    let ((ok, out), _, _) = call(
        "web_fetch",
        json!({"url": site.named("/page")}),
        LOOPBACK_ALLOWED,
        &[],
        &[],
    )
    .await;
    assert!(ok, "{out}");
    assert!(out.contains("# Kettle manual"), "{out}");
}

#[tokio::test]
async fn fetch_off_is_not_offered_and_listed_by_default() {
    let site = site().await;
    let (_, _, fake) = call("web_fetch", json!({"url": site.url("/page")}), "", &[], &[]).await;
    assert!(super::offered_tools(&fake).contains(&"web_fetch".to_string()));
    let ((ok, out), _, fake) = call(
        "web_fetch",
        json!({"url": site.url("/page")}),
        "[tools.web]\nfetch = \"off\"\nallow_private = true\n",
        &[],
        &[],
    )
    .await;
    assert!(!super::offered_tools(&fake).contains(&"web_fetch".to_string()));
    assert!(!ok && out.contains("fetch = \"off\""), "{out}");
    assert!(site.seen.paths().is_empty());
}
