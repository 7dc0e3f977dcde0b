//! What the actions do to the current tab, over DevTools: navigate and
//! wait for the load, run egirl's own fixed scripts (the snapshot, finding
//! a numbered element), trusted mouse and keyboard input, screenshots.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::session::{Browser, Tab};

/// The page's scripts get this long to settle after a load or a click.
const SETTLE: Duration = Duration::from_millis(250);

/// The snapshot script (`snapshot.js`).
const SNAPSHOT_JS: &str = include_str!("snapshot.js");

/// A numbered element from the last snapshot, scrolled into view: its
/// centre, or why it cannot be used.
const LOCATE_JS: &str = "(n) => { const el = (window.__egirlRefs || [])[n - 1]; \
     if (!el || !el.isConnected) return {error: 'gone'}; \
     el.scrollIntoView({block: 'center', inline: 'center'}); \
     const r = el.getBoundingClientRect(); \
     return {x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, h: r.height}; }";

/// Focuses a numbered element and selects its content (typing replaces
/// it); a `<select>` takes the option whose text or value is `text`.
const FOCUS_JS: &str = "(n, text) => { const el = (window.__egirlRefs || [])[n - 1]; \
     if (!el || !el.isConnected) return 'gone'; \
     el.scrollIntoView({block: 'center'}); \
     if (el.tagName === 'SELECT') { \
       const o = [...el.options].find(o => o.text.trim() === text.trim() || o.value === text); \
       if (!o) return 'no option'; el.value = o.value; \
       el.dispatchEvent(new Event('input', {bubbles: true})); \
       el.dispatchEvent(new Event('change', {bubbles: true})); return 'selected'; } \
     el.focus(); \
     if (typeof el.select === 'function') el.select(); \
     else if (el.isContentEditable) document.getSelection().selectAllChildren(el); \
     return document.activeElement === el ? 'focused' : 'not focusable'; }";

/// A snapshot's parts.
pub struct Snapshot {
    pub title: String,
    pub url: String,
    pub text: String,
    pub cut: bool,
    /// Percent scrolled; None when the page does not scroll.
    pub scroll: Option<u64>,
}

/// Runs an expression in the tab's page; its value.
pub async fn eval(browser: &Browser, tab: &Tab, expression: &str) -> Result<Value, String> {
    let answer = browser
        .cdp
        .call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            Some(&tab.session),
        )
        .await?;
    if let Some(exception) = answer.get("exceptionDetails") {
        let why = exception["exception"]["description"]
            .as_str()
            .or(exception["text"].as_str())
            .unwrap_or("failed");
        return Err(format!(
            "the page's script failed: {}",
            why.lines().next().unwrap_or(why)
        ));
    }
    Ok(answer["result"]["value"].clone())
}

/// Navigates the tab; Err is Chromium's reason (a refused request reads
/// `net::ERR_BLOCKED_BY_CLIENT`).
pub async fn navigate(
    browser: &Browser,
    tab: &Tab,
    url: &str,
    wait: Duration,
) -> Result<(), String> {
    let answer = browser
        .cdp
        .call("Page.navigate", json!({"url": url}), Some(&tab.session))
        .await?;
    if let Some(error) = answer["errorText"].as_str().filter(|e| !e.is_empty()) {
        return Err(format!("could not open {url}: {error}"));
    }
    wait_loaded(browser, tab, wait).await;
    Ok(())
}

/// Waits until the document has loaded (or `wait` passes: a page that
/// never finishes is still shown), then lets its scripts settle.
pub async fn wait_loaded(browser: &Browser, tab: &Tab, wait: Duration) {
    let deadline = Instant::now() + wait;
    while Instant::now() < deadline {
        let state = eval(browser, tab, "document.readyState").await;
        if state.as_ref().is_ok_and(|s| s == "complete") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(SETTLE).await;
}

/// The tab as text, at most `cap` characters.
pub async fn snapshot(browser: &Browser, tab: &Tab, cap: usize) -> Result<Snapshot, String> {
    let script = SNAPSHOT_JS.replace("__CAP__", &cap.to_string());
    let value = eval(browser, tab, &script).await?;
    Ok(Snapshot {
        title: value["title"].as_str().unwrap_or_default().to_string(),
        url: value["url"].as_str().unwrap_or_default().to_string(),
        text: value["text"].as_str().unwrap_or_default().to_string(),
        cut: value["cut"].as_bool().unwrap_or(false),
        scroll: value["scroll"].as_u64(),
    })
}

/// Clicks the numbered element as a user would (a trusted mouse click at
/// its centre).
pub async fn click(browser: &Browser, tab: &Tab, reference: u64) -> Result<(), String> {
    let at = eval(browser, tab, &format!("({LOCATE_JS})({reference})")).await?;
    if at.get("error").is_some() {
        return Err(stale(reference));
    }
    let (x, y) = (
        at["x"].as_f64().unwrap_or(0.0),
        at["y"].as_f64().unwrap_or(0.0),
    );
    if at["w"].as_f64().unwrap_or(0.0) == 0.0 {
        return Err(format!(
            "[{reference}] has no size on the page; it cannot be clicked"
        ));
    }
    for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
        browser
            .cdp
            .call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
                Some(&tab.session),
            )
            .await?;
    }
    Ok(())
}

/// Types `text` into the numbered element (replacing what it held), then
/// Enter when `submit`.
pub async fn type_into(
    browser: &Browser,
    tab: &Tab,
    reference: u64,
    text: &str,
    submit: bool,
) -> Result<(), String> {
    let quoted = serde_json::to_string(text).map_err(|e| e.to_string())?;
    let focus = eval(
        browser,
        tab,
        &format!("({FOCUS_JS})({reference}, {quoted})"),
    )
    .await?;
    match focus.as_str().unwrap_or_default() {
        "focused" => {
            browser
                .cdp
                .call(
                    "Input.insertText",
                    json!({"text": text}),
                    Some(&tab.session),
                )
                .await?;
        }
        "selected" => {}
        "gone" => return Err(stale(reference)),
        "no option" => return Err(format!("[{reference}] has no option `{text}`")),
        _ => return Err(format!("[{reference}] cannot be typed into")),
    }
    if submit {
        for kind in ["keyDown", "keyUp"] {
            browser
                .cdp
                .call(
                    "Input.dispatchKeyEvent",
                    json!({"type": kind, "key": "Enter", "code": "Enter",
                           "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13, "text": "\r"}),
                    Some(&tab.session),
                )
                .await?;
        }
    }
    Ok(())
}

fn stale(reference: u64) -> String {
    format!("[{reference}] is not on the page any more; take a new snapshot")
}

/// A PNG of what the tab shows.
pub async fn screenshot(browser: &Browser, tab: &Tab) -> Result<Vec<u8>, String> {
    let answer = browser
        .cdp
        .call(
            "Page.captureScreenshot",
            json!({"format": "png"}),
            Some(&tab.session),
        )
        .await?;
    let data = answer["data"].as_str().unwrap_or_default();
    crate::images::decode_base64(data)
        .ok_or_else(|| "the browser sent an unreadable screenshot".to_string())
}

#[cfg(test)]
mod tests {}
