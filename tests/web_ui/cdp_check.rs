//! The browser tests' own tool first: the CDP client drives a plain page
//! (types, presses Enter, clicks, evaluates, sees the page's errors,
//! screenshots), so a failure there is told apart from the web UI's.

use crate::support::cdp::Browser;

const FORM: &str = "data:text/html,<form id=f><input id=i></form><button id=b onclick=\"document.title='clicked'\">b</button>\
<script>document.getElementById('f').onsubmit=e=>{e.preventDefault();document.body.dataset.sent=document.getElementById('i').value};\
setTimeout(()=>{throw new Error('boom from the page')},0)</script>";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cdp_client_drives_a_page() {
    let browser = Browser::shared().await;
    let page = browser.page().await;
    page.goto(FORM).await;
    page.type_into("#i", "héllo <b>").await;
    page.press_enter().await;
    page.wait_for(
        "document.body.dataset.sent === 'héllo <b>'",
        "the form sent",
    )
    .await;
    page.click("#b").await;
    assert_eq!(page.eval("document.title").await, "clicked");
    assert_eq!(
        page.eval("new Promise(r => setTimeout(() => r(6 * 7), 10))")
            .await,
        42
    );
    assert!(page.try_eval("nope.nope").await.is_err());
    page.wait_for("true", "nothing").await;
    let deadline = tokio::time::Instant::now() + crate::support::cdp::WAIT;
    while !page.log().iter().any(|l| l.contains("boom from the page")) {
        assert!(tokio::time::Instant::now() < deadline, "{:?}", page.log());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    page.viewport(390, 844, 2.0, true).await;
    // A mobile viewport: without a `<meta name=viewport>` the layout is
    // 980 px wide, as on a phone; the screen is the phone's.
    assert_eq!(page.eval("screen.width").await, 390);
    let dir = tempfile::tempdir().expect("temp dir");
    let png = dir.path().join("shot.png");
    page.screenshot(&png).await;
    let bytes = std::fs::read(&png).expect("the screenshot");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // 390 x 844 CSS pixels at 2x: the PNG's IHDR width and height.
    let width = u32::from_be_bytes(bytes[16..20].try_into().expect("4 bytes"));
    assert_eq!(width, 780);
}
