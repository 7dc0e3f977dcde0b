//! Sign-in and auth in a real browser: no cookie shows the sign-in page and
//! the socket refuses it; a wrong code is refused with the server's line;
//! the right one signs in (an HttpOnly cookie, nothing in the URL); too
//! many tries are refused whatever the code; a revoked device is signed
//! out on its next request; the Content Security Policy blocks an injected
//! inline script.

use super::rig::{Rig, wait_ready};
use crate::support::cdp::Browser;

/// A socket opened from the page: "open" or "error".
const OPEN_SOCKET: &str = "new Promise(r => { const w = new WebSocket(`ws://${location.host}/ws`); \
     w.onopen = () => { w.close(); r('open'); }; w.onerror = () => r('error'); })";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairing_signs_in_a_wrong_code_is_refused_and_a_revoked_device_is_signed_out() {
    let rig = Rig::start().await;
    let browser = Browser::shared().await;
    let page = browser.page().await;

    // No cookie: the sign-in page, and the socket is refused.
    page.goto(&rig.base).await;
    page.wait_for_selector("form#signin").await;
    assert!(page.text("body[data-ready]").await.is_none());
    assert_eq!(page.eval(OPEN_SOCKET).await, "error");

    // A wrong code: refused, the server's line shown, still signed out.
    let code = rig.pairing_code("phone").await;
    let wrong = if code == "0000-0000" {
        "0000-0001"
    } else {
        "0000-0000"
    };
    page.type_into("input#code", wrong).await;
    page.type_into("input#device", "Pixel").await;
    page.click("button#signin-submit").await;
    page.wait_for(
        "document.querySelector('#signin-error').textContent.includes('wrong pairing code')",
        "the server's refusal shown",
    )
    .await;
    assert!(page.text("form#signin").await.is_some());

    // The right code: the app, connected; the token in no URL and out of
    // the page's reach (HttpOnly).
    page.eval("document.querySelector('input#code').value = ''")
        .await;
    page.type_into("input#code", &code).await;
    page.click("button#signin-submit").await;
    wait_ready(&page).await;
    page.wait_for(
        "document.querySelector('#connection').textContent.trim() === 'connected'",
        "#connection says connected",
    )
    .await;
    assert_eq!(page.eval("location.href").await, format!("{}/", rig.base));
    assert_eq!(page.eval("document.cookie").await, "");
    assert_eq!(page.eval(OPEN_SOCKET).await, "open");
    let devices = rig.devices().await;
    let device = devices
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("one paired device: {devices}"))
        .to_string();

    // Revoked: the open page is signed out and goes to the sign-in form,
    // and a load of its own is the sign-in page again.
    rig.run(&["devices", "revoke", &device]).await;
    page.wait_for(
        "document.querySelector('form#signin')",
        "the page back at the sign-in form by itself",
    )
    .await;
    page.goto(&rig.base).await;
    page.wait_for_selector("form#signin").await;
    assert_eq!(page.eval(OPEN_SOCKET).await, "error");
    let stderr = rig.stop().await;
    assert!(!stderr.contains(&code), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_content_security_policy_blocks_an_injected_inline_script() {
    let rig = Rig::start().await;
    let browser = Browser::shared().await;
    let page = rig.signed_in(browser).await;
    let injected = page
        .eval(
            "new Promise(r => { \
               const seen = []; \
               document.addEventListener('securitypolicyviolation', e => seen.push(e.violatedDirective)); \
               const s = document.createElement('script'); \
               s.textContent = 'window.__inline = 1'; \
               document.head.append(s); \
               setTimeout(() => r({ ran: window.__inline === 1, seen }), 300); })",
        )
        .await;
    assert_eq!(injected["ran"], false, "{injected}");
    let seen = injected["seen"].as_array().expect("a list");
    assert!(
        seen.iter()
            .any(|d| d.as_str().is_some_and(|d| d.starts_with("script-src"))),
        "{injected}"
    );
    // An inline style attribute's rule is blocked too (style-src 'self').
    let styled = page
        .eval(
            "(() => { const d = document.createElement('div'); d.setAttribute('style', 'width: 123px'); \
               document.body.append(d); const w = d.getBoundingClientRect().width; d.remove(); return w; })()",
        )
        .await;
    assert_ne!(styled, 123, "an inline style applied");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_codes_from_the_page_are_rate_limited() {
    let rig = Rig::start().await;
    let browser = Browser::shared().await;
    let page = browser.page().await;
    let code = rig.pairing_code("phone").await;
    let wrong = if code == "0000-0000" {
        "0000-0001"
    } else {
        "0000-0000"
    };
    page.goto(&rig.base).await;
    page.wait_for_selector("form#signin").await;
    page.type_into("input#device", "Pixel").await;
    // Five tries a minute, right or wrong: the sixth is refused even with
    // the right code, and the page says so.
    for (n, code) in [wrong, wrong, wrong, wrong, wrong, code.as_str()]
        .into_iter()
        .enumerate()
    {
        page.eval(
            "(() => { document.querySelector('#signin-error').textContent = ''; \
               document.querySelector('input#code').value = ''; })()",
        )
        .await;
        page.type_into("input#code", code).await;
        page.click("button#signin-submit").await;
        page.wait_for(
            "document.querySelector('#signin-error').textContent.trim() !== ''",
            &format!("an answer to try {}", n + 1),
        )
        .await;
    }
    let said = page.text("#signin-error").await.unwrap_or_default();
    assert!(said.contains("too many"), "{said}");
    assert!(page.text("body[data-ready]").await.is_none());
    rig.stop().await;
}
