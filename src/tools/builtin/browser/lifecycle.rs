//! The sessions' browsers: started on first use, closed by the `close`
//! action, after `[tools.browser] idle_timeout` unused, and when egirl
//! exits (`close_all`, from `main`); a killed egirl takes them with it
//! (`process`).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use super::session::Browser;
use crate::tools::ToolContext;

/// The browsers by (agent, session): two agents answering in one channel
/// share its session id (`discord-<channel>`), never a browser (its
/// cookies, logins and open pages are the agent's that opened them).
static BROWSERS: LazyLock<Mutex<HashMap<Key, Arc<Browser>>>> = LazyLock::new(Mutex::default);

/// A browser's owner: the agent (None without `[agents]`) and the session.
type Key = (Option<String>, String);

/// The key of `ctx`'s browser: its agent's and its session's.
fn key_of(ctx: &ToolContext) -> Key {
    (ctx.bus.agent().map(str::to_string), ctx.session.to_string())
}

/// One start at a time: two calls of a session never start two browsers.
static STARTING: LazyLock<tokio::sync::Mutex<()>> = LazyLock::new(tokio::sync::Mutex::default);

/// The session's browser, started (or restarted, if it died) when needed.
pub async fn browser_for(ctx: &ToolContext) -> Result<Arc<Browser>, String> {
    let key = key_of(ctx);
    if let Some(browser) = alive(&key) {
        return Ok(browser);
    }
    let _one = STARTING.lock().await;
    if let Some(browser) = alive(&key) {
        return Ok(browser);
    }
    ctx.progress("starting the browser");
    let browser = Arc::new(Browser::start(ctx).await?);
    if let Ok(mut map) = BROWSERS.lock()
        && let Some(old) = map.insert(key.clone(), browser.clone())
    {
        old.kill();
    }
    reap_when_idle(key, ctx.config.tools.browser.idle_timeout.0);
    Ok(browser)
}

/// The session's browser if it is running and alive (a config without
/// `[agents]`; see [`running_in`]).
pub fn running(session: &str) -> Option<Arc<Browser>> {
    running_in(None, session)
}

/// The browser of `agent`'s session if it is running and alive.
pub fn running_in(agent: Option<&str>, session: &str) -> Option<Arc<Browser>> {
    alive(&(agent.map(str::to_string), session.to_string()))
}

fn alive(key: &Key) -> Option<Arc<Browser>> {
    let map = BROWSERS.lock().ok()?;
    map.get(key).filter(|b| !b.is_dead()).cloned()
}

/// Closes the browser of `ctx`'s agent and session; whether there was one.
pub fn close(ctx: &ToolContext) -> bool {
    close_key(&key_of(ctx))
}

fn close_key(key: &Key) -> bool {
    let browser = BROWSERS.lock().ok().and_then(|mut m| m.remove(key));
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
fn reap_when_idle(key: Key, idle: Duration) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let started = alive(&key);
    runtime.spawn(async move {
        let check = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
        loop {
            tokio::time::sleep(check).await;
            let Some(browser) = alive(&key) else {
                return;
            };
            // Replaced by a later start: that one has its own reaper.
            if started.as_ref().is_none_or(|s| !Arc::ptr_eq(s, &browser)) {
                return;
            }
            if browser.idle_for() >= idle {
                tracing::info!("browser: closing session {}'s browser (idle)", key.1);
                close_key(&key);
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn two_agents_in_one_session_have_a_browser_each() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = |agent: &str| {
            let mut ctx = crate::tools::approval::test_context(dir.path(), Default::default());
            ctx.session = "discord-42".into();
            ctx.bus = crate::bus::EventBus::new().for_agent(Some(agent));
            ctx
        };
        let (work, home) = (ctx("work"), ctx("home"));
        assert_ne!(key_of(&work), key_of(&home));
        assert_eq!(key_of(&work), (Some("work".into()), "discord-42".into()));
        // Closing home's closes nothing of work's (there is none here either).
        assert!(!close(&home));
        let profile = |agent| super::super::process::profile_dir(agent, "discord-42");
        assert_ne!(profile(Some("work")), profile(Some("home")));
        assert_ne!(profile(Some("work")), profile(None));
    }
}
