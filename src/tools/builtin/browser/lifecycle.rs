//! The sessions' browsers: started on first use, closed by the `close`
//! action, after `[tools.browser] idle_timeout` unused, and when egirl
//! exits (`close_all`, from `main`); a killed egirl takes them with it
//! (`process`).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use super::session::Browser;
use crate::tools::ToolContext;

static BROWSERS: LazyLock<Mutex<HashMap<String, Arc<Browser>>>> = LazyLock::new(Mutex::default);

/// One start at a time: two calls of a session never start two browsers.
static STARTING: LazyLock<tokio::sync::Mutex<()>> = LazyLock::new(tokio::sync::Mutex::default);

/// The session's browser, started (or restarted, if it died) when needed.
pub async fn browser_for(ctx: &ToolContext) -> Result<Arc<Browser>, String> {
    if let Some(browser) = running(&ctx.session) {
        return Ok(browser);
    }
    let _one = STARTING.lock().await;
    if let Some(browser) = running(&ctx.session) {
        return Ok(browser);
    }
    ctx.progress("starting the browser");
    let browser = Arc::new(Browser::start(ctx).await?);
    if let Ok(mut map) = BROWSERS.lock()
        && let Some(old) = map.insert(ctx.session.to_string(), browser.clone())
    {
        old.kill();
    }
    reap_when_idle(
        ctx.session.to_string(),
        ctx.config.tools.browser.idle_timeout.0,
    );
    Ok(browser)
}

/// The session's browser if it is running and alive.
pub fn running(session: &str) -> Option<Arc<Browser>> {
    let map = BROWSERS.lock().ok()?;
    map.get(session).filter(|b| !b.is_dead()).cloned()
}

/// Closes the session's browser; whether there was one.
pub fn close(session: &str) -> bool {
    let browser = BROWSERS.lock().ok().and_then(|mut m| m.remove(session));
    match browser {
        Some(browser) => {
            browser.kill();
            true
        }
        None => false,
    }
}

/// Closes every browser (egirl is exiting).
pub fn close_all() {
    let all: Vec<Arc<Browser>> = match BROWSERS.lock() {
        Ok(mut map) => map.drain().map(|(_, b)| b).collect(),
        Err(_) => return,
    };
    for browser in all {
        browser.kill();
    }
}

/// Closes the session's browser once it has been idle for `idle`.
fn reap_when_idle(session: String, idle: Duration) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let started = running(&session);
    runtime.spawn(async move {
        let check = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
        loop {
            tokio::time::sleep(check).await;
            let Some(browser) = running(&session) else {
                return;
            };
            // Replaced by a later start: that one has its own reaper.
            if started.as_ref().is_none_or(|s| !Arc::ptr_eq(s, &browser)) {
                return;
            }
            if browser.idle_for() >= idle {
                tracing::info!("browser: closing session {session}'s browser (idle)");
                close(&session);
                return;
            }
        }
    });
}
