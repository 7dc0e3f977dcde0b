//! `browser {action, url?, ref?, text?}`: a headless Chromium per
//! session, driven over DevTools. Actions: `open` a URL, `snapshot` (the
//! page as text with numbered elements), `click` and `type` by number
//! (`submit`: type, then Enter), `scroll` (`text: "up"` for up),
//! `screenshot` (an image part, with the snapshot), `back`, `tabs` (list,
//! or switch with `ref`), `close`. Most return the fresh snapshot. No
//! JavaScript of the model's runs: egirl's own fixed scripts build the
//! snapshot and find elements.
//!
//! Guards: every request any page makes is paused until `requests`
//! judges it (`[tools.web]`'s address guard and host approval), and its
//! connection goes through `proxy` (addresses checked again); only
//! http(s) is opened; WebSockets (which nothing could judge) and
//! downloads are refused. The process: `process`; its
//! life: `lifecycle`.

mod cdp;
mod lifecycle;
mod page;
mod process;
mod proxy;
mod requests;
mod session;

use std::time::Duration;

use serde_json::json;

use crate::chat::ToolSpec;
use crate::tools::{ToolContext, ToolOutput, arg_str, arg_u64};
pub use lifecycle::{close_all, running, running_in};
use session::{Browser, Tab};

/// What `egirl doctor` says of the browser: (ok, detail).
pub fn doctor_line(config: &crate::config::Config) -> (Option<bool>, String) {
    let browser = &config.tools.browser;
    if let Some(why) = switched_off(config) {
        return (None, format!("not offered ({why})"));
    }
    match browser.chromium() {
        Ok(path) => (
            Some(true),
            format!(
                "{} (requests under [tools.web]'s guards; idle after {}s)",
                path.display(),
                browser.idle_timeout.0.as_secs()
            ),
        ),
        Err(why) => (None, format!("not offered: {why}")),
    }
}

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "browser",
        // Short: the fixed prompt's budget is tight, and every answer
        // shows the numbered elements itself.
        description: "Web browser.",
        parameters: json!({
            "type": "object",
            "properties": {
                "action": {"enum": ["open", "snapshot", "click", "type", "submit", "scroll", "screenshot", "back", "tabs", "close"]},
                "url": {"type": "string"},
                "ref": {"type": "integer"},
                "text": {"type": "string"}
            },
            "required": ["action"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let action = match arg_str(args, "action") {
        Ok(a) => a.trim().to_ascii_lowercase(),
        Err(e) => return e,
    };
    if action == "close" {
        return ToolOutput::ok(if lifecycle::close(ctx) {
            "browser closed"
        } else {
            "no browser was open"
        });
    }
    if let Some(why) = switched_off(&ctx.config) {
        return ToolOutput::fail(format!("the browser is off ({why})"));
    }
    let Some(action) = Action::read(&action, args) else {
        return ToolOutput::fail(format!(
            "unknown action `{action}`; use open, snapshot, click, type, submit, scroll, screenshot, back, tabs or close"
        ));
    };
    let action = match action {
        Ok(action) => action,
        Err(why) => return ToolOutput::fail(why),
    };
    let browser = match lifecycle::browser_for(ctx).await {
        Ok(b) => b,
        Err(why) => return ToolOutput::fail(format!("the browser could not start: {why}")),
    };
    browser.touch();
    browser.guard.set_call(Some(ctx));
    let output = tokio::select! {
        out = act(&action, &browser, ctx) => out,
        _ = ctx.cancel.cancelled() => ToolOutput::fail("interrupted"),
    };
    browser.guard.set_call(None);
    browser.touch();
    output
}

/// Why the config turns the browser off, if it does: then the tool is not
/// offered, and a call that names it anyway (the model may name any
/// built-in) is refused before a browser starts.
fn switched_off(config: &crate::config::Config) -> Option<&'static str> {
    if !config.tools.browser.enabled {
        return Some("[tools.browser] enabled = false");
    }
    (config.tools.web.fetch == crate::config::WebFetchPolicy::Off)
        .then_some("[tools.web] fetch = \"off\"")
}

/// A call's arguments, checked before the browser starts.
enum Action {
    Open(String),
    Snapshot,
    Click(u64),
    Type {
        reference: u64,
        text: String,
        submit: bool,
    },
    Scroll {
        up: bool,
    },
    Screenshot,
    Back,
    Tabs(Option<u64>),
}

impl Action {
    /// None: not an action; Some(Err): its arguments are wrong.
    fn read(name: &str, args: &serde_json::Value) -> Option<Result<Action, String>> {
        let reference = || match arg_u64(args, "ref") {
            Ok(Some(n)) if n > 0 => Ok(n),
            Ok(_) => Err(format!(
                "`{name}` needs `ref`: an element's number from the snapshot"
            )),
            Err(e) => Err(e.output),
        };
        let flag = |key: &str| {
            args.get(key)
                .is_some_and(|v| v.as_bool() == Some(true) || v == "true")
        };
        Some(match name {
            "open" => match args.get("url").and_then(|u| u.as_str()) {
                Some(url) => target_url(url).map(Action::Open),
                None => Err("`open` needs `url`".into()),
            },
            "snapshot" => Ok(Action::Snapshot),
            "click" => reference().map(Action::Click),
            // `submit` is `type` then Enter (`submit: true` on `type` too).
            "type" | "submit" => {
                reference().and_then(
                    |reference| match args.get("text").and_then(|t| t.as_str()) {
                        Some(text) => Ok(Action::Type {
                            reference,
                            text: text.to_string(),
                            submit: name == "submit" || flag("submit"),
                        }),
                        None => Err(format!("`{name}` needs `text`")),
                    },
                )
            }
            "scroll" => Ok(Action::Scroll {
                up: flag("up") || args.get("text").is_some_and(|t| t == "up"),
            }),
            "screenshot" => Ok(Action::Screenshot),
            "back" => Ok(Action::Back),
            "tabs" => match arg_u64(args, "ref") {
                Ok(n) => Ok(Action::Tabs(n)),
                Err(e) => Err(e.output),
            },
            _ => return None,
        })
    }
}

/// The URL `open` may navigate to: http(s) only (a bare host gets
/// `https://`); `file:`, `chrome:`, `devtools:`, `view-source:`,
/// `data:`, `javascript:` and the rest are refused.
fn target_url(raw: &str) -> Result<String, String> {
    let raw = raw.trim();
    let has_scheme = raw.split_once(':').is_some_and(|(s, _)| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    }) && !raw
        .split_once(':')
        .is_some_and(|(_, rest)| rest.chars().next().is_some_and(|c| c.is_ascii_digit()));
    let text = if has_scheme {
        raw.to_string()
    } else {
        format!("https://{raw}")
    };
    let url = url::Url::parse(&text).map_err(|e| format!("invalid URL `{raw}`: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "refused: `{}:` URLs are not opened; the browser opens http and https only",
            url.scheme()
        ));
    }
    Ok(url.to_string())
}

/// Runs one action on the current tab and reports the page after it.
async fn act(action: &Action, browser: &Browser, ctx: &ToolContext) -> ToolOutput {
    let Some(tab) = browser.current() else {
        return ToolOutput::fail("the browser has no tab open; call close, then open again");
    };
    let wait = ctx.config.tools.web.timeout.0;
    let done = match action {
        Action::Open(url) => page::navigate(browser, &tab, url, wait)
            .await
            .map(|()| String::new()),
        Action::Snapshot => Ok(String::new()),
        Action::Click(n) => match page::click(browser, &tab, *n).await {
            Ok(()) => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let tab = browser.current().unwrap_or(tab.clone());
                page::wait_loaded(browser, &tab, wait).await;
                Ok(format!("clicked [{n}]"))
            }
            Err(e) => Err(e),
        },
        Action::Type {
            reference,
            text,
            submit,
        } => match page::type_into(browser, &tab, *reference, text, *submit).await {
            Ok(()) => {
                if *submit {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    page::wait_loaded(browser, &tab, wait).await;
                }
                Ok(format!(
                    "typed into [{reference}]{}",
                    if *submit { " and pressed Enter" } else { "" }
                ))
            }
            Err(e) => Err(e),
        },
        Action::Scroll { up } => {
            let by = if *up { "-0.8" } else { "0.8" };
            page::eval(
                browser,
                &tab,
                &format!("window.scrollBy(0, innerHeight * {by})"),
            )
            .await
            .map(|_| format!("scrolled {}", if *up { "up" } else { "down" }))
        }
        Action::Back => match page::eval(browser, &tab, "history.back()").await {
            Ok(_) => {
                tokio::time::sleep(Duration::from_millis(300)).await;
                page::wait_loaded(browser, &tab, wait).await;
                Ok("went back".to_string())
            }
            Err(e) => Err(e),
        },
        Action::Screenshot => return screenshot(browser, &tab, ctx).await,
        Action::Tabs(choice) => return tabs(browser, *choice).await,
    };
    let tab = browser.current().unwrap_or(tab);
    match done {
        Ok(head) => report(browser, &tab, ctx, head).await,
        Err(why) => {
            let refused = browser.guard.take_refusals();
            let mut text = why;
            for line in refused {
                text.push('\n');
                text.push_str(&line);
            }
            ToolOutput::fail(text)
        }
    }
}

/// `head`, what the guard refused meanwhile, and the page as text.
async fn report(browser: &Browser, tab: &Tab, ctx: &ToolContext, head: String) -> ToolOutput {
    let cap = ctx.config.tools.browser.snapshot_chars;
    let snap = match page::snapshot(browser, tab, cap).await {
        Ok(s) => s,
        Err(why) => return ToolOutput::fail(format!("cannot read the page: {why}")),
    };
    let mut out = String::new();
    if !head.is_empty() {
        out.push_str(&head);
        out.push('\n');
    }
    for refused in browser.guard.take_refusals() {
        out.push_str(&refused);
        out.push('\n');
    }
    out.push_str(&format!("Page: {}\nURL: {}", snap.title, snap.url));
    if let Some(percent) = snap.scroll {
        out.push_str(&format!(" (scrolled {percent}%)"));
    }
    out.push_str("\n\n");
    out.push_str(&snap.text);
    if snap.cut {
        out.push_str(&format!(
            "\n[snapshot cut at {cap} characters ([tools.browser] snapshot_chars); scroll down for the rest]"
        ));
    }
    ToolOutput::ok(out)
}

/// A PNG of the tab as an image part, with the snapshot.
async fn screenshot(browser: &Browser, tab: &Tab, ctx: &ToolContext) -> ToolOutput {
    let png = match page::screenshot(browser, tab).await {
        Ok(png) => png,
        Err(why) => return ToolOutput::fail(why),
    };
    let url = page::eval(browser, tab, "location.href").await.ok();
    let source = url
        .as_ref()
        .and_then(|u| u.as_str())
        .map(|u| format!("browser screenshot of {u}"));
    let part = match crate::images::store(&ctx.workspace, &png, source) {
        Ok(part) => part,
        Err(why) => return ToolOutput::fail(format!("cannot keep the screenshot: {why}")),
    };
    let head = format!("screenshot attached ({}x{} png)", part.width, part.height);
    let out = report(browser, tab, ctx, head).await;
    out.with_images(vec![part])
}

/// The open tabs, or switch to tab `choice` (1-based).
async fn tabs(browser: &Browser, choice: Option<u64>) -> ToolOutput {
    let open = browser.tabs();
    if let Some(n) = choice {
        let Some(tab) = open.get((n as usize).wrapping_sub(1)) else {
            return ToolOutput::fail(format!("there is no tab {n}; {} open", open.len()));
        };
        browser.switch_to(&tab.target);
        let _ = browser
            .cdp
            .call(
                "Target.activateTarget",
                json!({"targetId": tab.target}),
                None,
            )
            .await;
    }
    let infos = browser
        .cdp
        .call("Target.getTargets", json!({}), None)
        .await
        .unwrap_or_default();
    let current = browser.current().map(|t| t.target);
    let mut out = String::from("tabs:");
    for (i, tab) in open.iter().enumerate() {
        let info = infos["targetInfos"]
            .as_array()
            .and_then(|all| all.iter().find(|t| t["targetId"] == tab.target.as_str()));
        let title = info.and_then(|t| t["title"].as_str()).unwrap_or("");
        let url = info.and_then(|t| t["url"].as_str()).unwrap_or("");
        let mark = if current.as_deref() == Some(tab.target.as_str()) {
            " (current)"
        } else {
            ""
        };
        out.push_str(&format!("\n[{}] {title} - {url}{mark}", i + 1));
    }
    ToolOutput::ok(out)
}

#[cfg(test)]
mod tests {
    use super::target_url;

    #[tokio::test]
    async fn a_browser_the_config_turns_off_never_starts() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = crate::tools::approval::test_context(dir.path(), Default::default());
        let mut config = crate::config::Config::default();
        config.tools.browser.enabled = false;
        // Were it started, this is what it would fail on.
        config.tools.browser.executable = "/nonexistent/chromium".into();
        ctx.config = std::sync::Arc::new(config);
        let args = serde_json::json!({"action": "open", "url": "https://example.com/"});
        let out = super::run(&args, &ctx).await;
        assert!(!out.success);
        assert_eq!(
            out.output,
            "the browser is off ([tools.browser] enabled = false)"
        );
        let mut config = crate::config::Config::default();
        config.tools.web.fetch = crate::config::WebFetchPolicy::Off;
        config.tools.browser.executable = "/nonexistent/chromium".into();
        ctx.config = std::sync::Arc::new(config);
        let out = super::run(&args, &ctx).await;
        assert_eq!(
            out.output,
            "the browser is off ([tools.web] fetch = \"off\")"
        );
    }

    #[test]
    fn only_http_and_https_are_opened() {
        assert_eq!(
            target_url("example.com").as_deref(),
            Ok("https://example.com/")
        );
        assert_eq!(
            target_url("http://127.0.0.1:8080/x").as_deref(),
            Ok("http://127.0.0.1:8080/x")
        );
        assert_eq!(
            target_url("localhost:3000").as_deref(),
            Ok("https://localhost:3000/")
        );
        for refused in [
            "file:///etc/passwd",
            "chrome://settings",
            "devtools://devtools/x",
            "view-source:https://a.b",
            "data:text/html,hi",
            "javascript:alert(1)",
        ] {
            let why = target_url(refused).unwrap_err();
            assert!(why.starts_with("refused:"), "{refused}: {why}");
        }
    }
}
