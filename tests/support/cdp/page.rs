//! A page of the browser: navigate, evaluate, wait, type, click, set the
//! viewport, screenshot; what the page logged.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Browser, WAIT, lock};

/// One tab in a browser context of its own; disposed of on drop. A test
/// that panics while it is open prints the page's log (so the panics
/// below leave it out).
pub struct Page<'b> {
    pub(super) browser: &'b Browser,
    pub(super) session: String,
    pub(super) context: String,
}

impl Drop for Page<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("the page's log:\n{}", self.log().join("\n"));
        }
        lock(&self.browser.logs).remove(&self.session);
        self.browser.send(
            "Target.disposeBrowserContext",
            json!({"browserContextId": self.context}),
        );
    }
}

impl Page<'_> {
    /// A CDP command in this page's session; panics when it fails.
    pub async fn call(&self, method: &str, params: Value) -> Value {
        self.browser
            .call(Some(&self.session), method, params)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// What the page logged so far: console messages, uncaught exceptions,
    /// the browser's log (CSP violations, failed loads).
    pub fn log(&self) -> Vec<String> {
        lock(&self.browser.logs)
            .get(&self.session)
            .cloned()
            .unwrap_or_default()
    }

    /// Panics when the page threw an uncaught exception or logged an
    /// error to its console (a failed request's own log line is no error
    /// of the page's script).
    pub fn assert_no_script_errors(&self) {
        let errors: Vec<String> = self
            .log()
            .into_iter()
            .filter(|l| l.starts_with("uncaught:") || l.starts_with("console.error:"))
            .collect();
        assert!(
            errors.is_empty(),
            "the page's script failed:\n{}",
            errors.join("\n")
        );
    }

    /// Navigates and waits until the new document has loaded.
    pub async fn goto(&self, url: &str) {
        // A mark on the old document: gone once the new one is there.
        self.eval("window.__cdpOld = true").await;
        let nav = self.call("Page.navigate", json!({"url": url})).await;
        if let Some(error) = nav["errorText"].as_str() {
            panic!("navigating to {url}: {error}");
        }
        self.wait_for(
            "window.__cdpOld === undefined && document.readyState === 'complete'",
            &format!("{url} loaded"),
        )
        .await;
    }

    /// Evaluates `js` (awaiting a promise); its value as JSON (Null for
    /// undefined), or the exception's text.
    pub async fn try_eval(&self, js: &str) -> Result<Value, String> {
        let answer = self
            .browser
            .call(
                Some(&self.session),
                "Runtime.evaluate",
                json!({"expression": js, "awaitPromise": true, "returnByValue": true}),
            )
            .await?;
        if let Some(details) = answer.get("exceptionDetails") {
            let what = details["exception"]["description"]
                .as_str()
                .or(details["text"].as_str())
                .unwrap_or("?");
            return Err(format!("`{js}` threw: {what}"));
        }
        Ok(answer["result"]["value"].clone())
    }

    /// [`Page::try_eval`], panicking on an exception.
    pub async fn eval(&self, js: &str) -> Value {
        self.try_eval(js).await.unwrap_or_else(|e| panic!("{e}"))
    }

    /// Waits until `condition` (JS) is truthy; panics after [`WAIT`] with
    /// `what`, the page's text and its log.
    pub async fn wait_for(&self, condition: &str, what: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        let js = format!(
            "(() => {{ try {{ return !!({condition}); }} catch (e) {{ return false; }} }})()"
        );
        loop {
            if self.try_eval(&js).await == Ok(Value::Bool(true)) {
                return;
            }
            if tokio::time::Instant::now() > deadline {
                let text = self
                    .try_eval("document.body ? document.body.innerText : '(no body)'")
                    .await;
                panic!(
                    "never happened within {WAIT:?}: {what} (`{condition}`)\nthe page's text: {}",
                    text.unwrap_or_else(Value::String),
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until an element matches `selector`.
    pub async fn wait_for_selector(&self, selector: &str) {
        self.wait_for(
            &format!("document.querySelector({})", js_str(selector)),
            &format!("an element `{selector}`"),
        )
        .await;
    }

    /// The text of the first element matching `selector` (textContent);
    /// None when there is none.
    pub async fn text(&self, selector: &str) -> Option<String> {
        let js = format!(
            "(() => {{ const e = document.querySelector({}); return e ? e.textContent : null; }})()",
            js_str(selector)
        );
        self.eval(&js).await.as_str().map(str::to_string)
    }

    /// Clicks the first element matching `selector` (`element.click()`).
    pub async fn click(&self, selector: &str) {
        let js = format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return false; e.click(); return true; }})()",
            js_str(selector)
        );
        if self.eval(&js).await != Value::Bool(true) {
            panic!("nothing to click at `{selector}`");
        }
    }

    /// Focuses the element at `selector` and types `text` into it, as an
    /// input method would.
    pub async fn type_into(&self, selector: &str, text: &str) {
        let js = format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return false; e.focus(); return true; }})()",
            js_str(selector)
        );
        if self.eval(&js).await != Value::Bool(true) {
            panic!("nothing to type into at `{selector}`");
        }
        self.call("Input.insertText", json!({"text": text})).await;
    }

    /// Presses Enter (down and up) on the focused element.
    pub async fn press_enter(&self) {
        let key = json!({"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13});
        let mut down = key.clone();
        down["type"] = json!("keyDown");
        down["text"] = json!("\r");
        let mut up = key;
        up["type"] = json!("keyUp");
        self.call("Input.dispatchKeyEvent", down).await;
        self.call("Input.dispatchKeyEvent", up).await;
    }

    /// The viewport: `width` x `height` CSS pixels at `scale` device
    /// pixels each, as a phone (touch, mobile layout) when `mobile`.
    pub async fn viewport(&self, width: u32, height: u32, scale: f64, mobile: bool) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": scale, "mobile": mobile}),
        )
        .await;
        self.call(
            "Emulation.setTouchEmulationEnabled",
            json!({"enabled": mobile}),
        )
        .await;
    }

    /// A PNG of the viewport, written to `path`.
    pub async fn screenshot(&self, path: &Path) {
        let shot = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .await;
        let data = shot["data"].as_str().expect("screenshot data");
        let png = base64_decode(data).expect("base64 screenshot");
        std::fs::write(path, png).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// `s` as a JavaScript string literal.
pub fn js_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// Standard base64 (with padding) as Chromium sends it.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let bytes: Vec<u8> = text.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let take = chunk.len().checked_sub(1)?;
        out.extend_from_slice(&n.to_be_bytes()[1..1 + take]);
    }
    Some(out)
}
