//! The browser tool against the real Chromium and a local test site.
//! Skipped, with the reason printed, where no Chromium is installed.
//! (Through the real binary: browser_process.rs.)

use egirl::protocol::Origin;
use serde_json::json;

use super::browser_site::{Site, browse, chromium_or_skip, context, reference};

/// 127.0.0.1 is the test site: private addresses allowed, every host too.
const OPEN_CONFIG: &str = "[tools.web]\nallow_private = true\nfetch = \"allow\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_snapshot_click_type_submit_and_screenshot() {
    if !chromium_or_skip() {
        return;
    }
    let site = Site::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let ctx = context(dir.path(), "browse-flow", Origin::Cli, OPEN_CONFIG);

    let out = browse(
        &ctx,
        json!({"action": "open", "url": format!("{}/", site.base)}),
    )
    .await;
    assert!(out.success, "{}", out.output);
    assert!(out.output.contains("Page: Test site"), "{}", out.output);
    assert!(out.output.contains("# Welcome"), "{}", out.output);
    assert!(out.output.contains("not pressed"), "{}", out.output);
    assert!(
        out.output.contains("link \"Other page\" -> /other"),
        "{}",
        out.output
    );

    // The button's script changes the page; the fresh snapshot shows it.
    let button = reference(&out.output, "button \"Press me\"");
    let out = browse(&ctx, json!({"action": "click", "ref": button})).await;
    assert!(out.success, "{}", out.output);
    assert!(
        out.output.starts_with(&format!("clicked [{button}]")),
        "{}",
        out.output
    );
    assert!(out.output.contains("clicked by script"), "{}", out.output);

    // Typed into the form and submitted with Enter: the results page.
    let query = reference(&out.output, "input \"Query\"");
    let typed = json!({"action": "submit", "ref": query, "text": "kittens"});
    let out = browse(&ctx, typed).await;
    assert!(out.success, "{}", out.output);
    assert!(
        out.output.contains("# Results for kittens"),
        "{}",
        out.output
    );
    assert!(out.output.contains("/search?q=kittens"), "{}", out.output);
    assert!(site.hits().contains(&"/search?q=kittens".to_string()));

    // A screenshot: a PNG image part kept in the workspace, and the snapshot.
    let out = browse(&ctx, json!({"action": "screenshot"})).await;
    assert!(out.success, "{}", out.output);
    assert_eq!(out.images.len(), 1, "{}", out.output);
    let part = &out.images[0];
    assert_eq!(part.media_type, "image/png");
    assert!(part.width > 100 && part.height > 100, "{part:?}");
    let stored = egirl::images::load(&ctx.workspace, part).expect("the screenshot is stored");
    assert!(stored.starts_with(b"\x89PNG"));
    assert!(out.output.contains("Results for kittens"), "{}", out.output);

    let out = browse(&ctx, json!({"action": "back"})).await;
    assert!(
        out.success && out.output.contains("# Welcome"),
        "{}",
        out.output
    );
    // A link that opens a tab: followed there (its requests guarded too).
    let popup = reference(&out.output, "link \"In a new tab\"");
    let out = browse(&ctx, json!({"action": "click", "ref": popup})).await;
    assert!(out.output.contains("# Results for popup"), "{}", out.output);
    let out = browse(&ctx, json!({"action": "tabs", "ref": 1})).await;
    assert!(out.output.contains("[1] Test site"), "{}", out.output);
    assert!(out.output.contains("[2] Results"), "{}", out.output);
    assert!(
        out.output.contains("Test site - http://127.0.0.1"),
        "{}",
        out.output
    );
    let current = out.output.lines().find(|l| l.ends_with("(current)"));
    assert!(
        current.is_some_and(|l| l.starts_with("[1]")),
        "{}",
        out.output
    );

    let out = browse(&ctx, json!({"action": "close"})).await;
    assert_eq!(out.output, "browser closed");
    assert!(egirl::tools::builtin::browser::running("browse-flow").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_addresses_other_hosts_and_local_schemes_are_refused() {
    if !chromium_or_skip() {
        return;
    }
    let site = Site::start().await;
    let dir = tempfile::tempdir().expect("temp dir");

    // Private addresses not allowed: the page on 127.0.0.1 is never requested.
    let ctx = context(
        dir.path(),
        "browse-private",
        Origin::Cli,
        "[tools.web]\nfetch = \"allow\"\n[tools.browser]\nidle_timeout = \"1s\"\n",
    );
    let out = browse(
        &ctx,
        json!({"action": "open", "url": format!("{}/", site.base)}),
    )
    .await;
    assert!(!out.success, "{}", out.output);
    assert!(
        out.output.contains("ERR_BLOCKED_BY_CLIENT"),
        "{}",
        out.output
    );
    assert!(out.output.contains("a loopback address"), "{}", out.output);
    assert!(site.hits().is_empty(), "{:?}", site.hits());
    for refused in [
        "file:///etc/passwd",
        "chrome://settings",
        "view-source:http://127.0.0.1/",
        "data:text/html,hi",
    ] {
        let out = browse(&ctx, json!({"action": "open", "url": refused})).await;
        assert!(
            !out.success && out.output.starts_with("refused:"),
            "{refused}: {}",
            out.output
        );
    }
    // Unused for `idle_timeout`: closed without being asked.
    assert!(egirl::tools::builtin::browser::running("browse-private").is_some());
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert!(egirl::tools::builtin::browser::running("browse-private").is_none());

    // 127.0.0.1 allowed, `localhost` not approved, nobody to ask (a cron
    // turn): the page's image, fetch and WebSocket to it and a redirect to
    // it are refused; none reaches the server.
    let config = "[tools.web]\nallow_private = true\nallow_domains = [\"127.0.0.1\"]\n";
    let ctx = context(
        dir.path(),
        "browse-hosts",
        Origin::Cron("job".into()),
        config,
    );
    let out = browse(
        &ctx,
        json!({"action": "open", "url": format!("{}/leak", site.base)}),
    )
    .await;
    assert!(out.success, "{}", out.output);
    assert!(out.output.contains("# Leaky page"), "{}", out.output);
    assert!(
        out.output.contains("refused: http://localhost:"),
        "{}",
        out.output
    );
    assert!(
        out.output
            .contains("nobody can approve it in a cron:job turn"),
        "{}",
        out.output
    );
    let out = browse(
        &ctx,
        json!({"action": "open", "url": format!("{}/redirect", site.base)}),
    )
    .await;
    assert!(!out.success, "{}", out.output);
    assert!(out.output.contains("secret-redirect"), "{}", out.output);
    let secrets: Vec<String> = site
        .hits()
        .into_iter()
        .filter(|h| h.contains("secret"))
        .collect();
    assert!(secrets.is_empty(), "reached: {secrets:?}");
    assert!(site.hits().contains(&"/redirect".to_string()));
    browse(&ctx, json!({"action": "close"})).await;
}
