//! The layouts in a real browser: on a desktop the sessions, the
//! conversation and the side panes side by side; at a phone's width
//! (390x844) one column whose `nav#tabs` reaches every pane.

use super::rig::Rig;
use crate::support::cdp::{Page, js_str};

/// Each tab of `nav#tabs` and the pane it shows.
const PANES: [(&str, &str); 10] = [
    ("sessions", "#sessions"),
    ("conversation", "#conversation"),
    ("approvals", "#approvals"),
    ("routing", "#pane-routing"),
    ("tools", "#pane-tools"),
    ("memory", "#pane-memory"),
    ("stats", "#pane-stats"),
    ("cron", "#pane-cron"),
    ("mcp", "#pane-mcp"),
    ("health", "#pane-health"),
];

/// JS: the element at `selector` is shown and inside the viewport.
fn visible(selector: &str) -> String {
    format!(
        "(() => {{ const e = document.querySelector({}); if (!e) return false; \
           const r = e.getBoundingClientRect(), s = getComputedStyle(e); \
           return s.display !== 'none' && s.visibility !== 'hidden' && r.width > 0 && r.height > 0 \
             && r.left < innerWidth && r.right > 0 && r.top < innerHeight && r.bottom > 0; }})()",
        js_str(selector)
    )
}

/// The horizontal extent of the element at `selector`: [left, right].
async fn extent(page: &Page<'_>, selector: &str) -> (f64, f64) {
    let r = page
        .eval(&format!(
            "(() => {{ const r = document.querySelector({}).getBoundingClientRect(); return [r.left, r.right]; }})()",
            js_str(selector)
        ))
        .await;
    (r[0].as_f64().expect("left"), r[1].as_f64().expect("right"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_desktop_shows_panes_side_by_side_and_a_phone_reaches_every_pane_by_its_tab() {
    let rig = Rig::start().await;
    let browser = crate::support::cdp::Browser::shared().await;
    let page = browser.page().await;

    page.viewport(1280, 800, 1.0, false).await;
    rig.sign_in(&page, "desktop").await;
    for selector in ["#sessions", "#conversation", "#pane-routing"] {
        page.wait_for(
            &visible(selector),
            &format!("{selector} shown on a desktop"),
        )
        .await;
    }
    let (sessions, conversation) = (
        extent(&page, "#sessions").await,
        extent(&page, "#conversation").await,
    );
    assert!(
        sessions.1 <= conversation.0 + 1.0,
        "side by side: {sessions:?} {conversation:?}"
    );
    assert_eq!(
        page.eval(&visible("nav#tabs")).await,
        false,
        "no tabs on a desktop"
    );

    page.viewport(390, 844, 2.0, true).await;
    page.goto(&rig.base).await;
    super::rig::wait_ready(&page).await;
    assert_eq!(
        page.eval("innerWidth").await,
        390,
        "the page sets its viewport"
    );
    page.wait_for(&visible("nav#tabs"), "nav#tabs shown on a phone")
        .await;
    for (tab, pane) in PANES {
        page.click(&format!("nav#tabs button[data-pane=\"{tab}\"]"))
            .await;
        page.wait_for(&visible(pane), &format!("{pane} shown by the `{tab}` tab"))
            .await;
        let (left, right) = extent(&page, pane).await;
        assert!(
            left >= -1.0 && right <= 391.0,
            "{pane} fits the width: {left}..{right}"
        );
    }
    // One column: no sideways scrolling.
    assert_eq!(
        page.eval("document.documentElement.scrollWidth <= innerWidth")
            .await,
        true
    );
    page.assert_no_script_errors();
    rig.stop().await;
}
