//! The conversation in a real browser: a message sent from the page gets
//! its answer streamed (and the page says it reconnects once the daemon is
//! gone); a Discord session's turn shows up live in the
//! sessions list and in its conversation; hostile model output renders as
//! inert text.

use std::time::Duration;

use super::rig::{DM, Rig, open_session, say, wait_answer};
use crate::support::cdp::{Browser, js_str};
use crate::support::fake_llama::Reply;

/// The assistant message that is streaming holds `text` (a delta shown
/// before the turn ended).
fn streaming_with(text: &str) -> String {
    format!(
        "[...document.querySelectorAll('#conversation .msg[data-role=\"assistant\"].streaming')]\
         .some(m => m.textContent.includes({}))",
        js_str(text)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_from_the_page_gets_its_answer_streamed() {
    let rig = Rig::start().await;
    let browser = Browser::shared().await;
    let page = rig.signed_in(browser).await;
    // Slow enough that the page shows the answer while it streams.
    rig.llama.push_reply(
        Reply::chunks(&[
            "Streaming ",
            "from ",
            "**the fake** ",
            "model, ",
            "word ",
            "by ",
            "word.\n\n```rust\nfn main() {}\n```\n",
        ])
        .frame_delay(Duration::from_millis(300)),
    );
    say(&page, "hello from the browser").await;
    page.wait_for(
        "[...document.querySelectorAll('#conversation .msg[data-role=\"user\"]')]\
         .some(m => m.textContent.includes('hello from the browser'))",
        "the user's message shown",
    )
    .await;
    page.wait_for(&streaming_with("Streaming"), "a streamed delta")
        .await;
    wait_answer(&page, "Streaming from the fake model, word by word.").await;
    // The turn's routing decision, one line.
    assert!(
        page.text("#conversation .routing")
            .await
            .is_some_and(|r| r.contains("local")),
        "no routing line"
    );
    // Markdown rendered as elements: bold and a code block.
    let last =
        "[...document.querySelectorAll('#conversation .msg[data-role=\"assistant\"]')].pop()";
    assert_eq!(
        page.eval(&format!("{last}.querySelector('strong, b').textContent"))
            .await,
        "the fake"
    );
    assert!(
        page.eval(&format!("{last}.querySelector('pre code').textContent"))
            .await
            .as_str()
            .is_some_and(|t| t.contains("fn main() {}"))
    );
    let session = open_session(&page).await;
    let transcript = rig.transcript(&session);
    assert!(
        transcript
            .iter()
            .any(|r| r["typed"] == "hello from the browser"),
        "{transcript:?}"
    );
    page.assert_no_script_errors();
    // The daemon gone: the page says it is reconnecting.
    rig.stop().await;
    page.wait_for(
        "document.querySelector('#connection').textContent.trim() === 'reconnecting…'",
        "#connection says reconnecting…",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discord_turn_shows_live_in_the_sessions_and_its_conversation() {
    let rig = Rig::with_discord().await;
    let browser = Browser::shared().await;
    let page = rig.signed_in(browser).await;
    let session = format!("discord-{DM}");
    let item = format!("#sessions li[data-session=\"{session}\"]");

    rig.llama.push_reply(Reply::text("hello owner"));
    rig.dm("hello from discord");
    page.wait_for_selector(&item).await;
    assert_eq!(
        page.text(&format!("{item} .badge"))
            .await
            .map(|b| b.trim().to_string()),
        Some("discord".into())
    );
    page.wait_for(
        &format!("Number(document.querySelector('{item} .unread').textContent) > 0"),
        "the Discord session's unread count",
    )
    .await;

    page.click(&item).await;
    page.wait_for(
        &format!("document.querySelector('{item}').classList.contains('open')"),
        "the session open",
    )
    .await;
    wait_answer(&page, "hello owner").await;
    // Read: its unread count hidden.
    page.wait_for(
        &format!(
            "(() => {{ const u = document.querySelector('{item} .unread'); \
               return !u || u.hidden || getComputedStyle(u).display === 'none'; }})()"
        ),
        "the open session's unread count hidden",
    )
    .await;
    assert!(
        page.text("#conversation")
            .await
            .is_some_and(|t| t.contains("hello from discord"))
    );

    // The next turn streams into the open conversation as it happens.
    rig.llama.push_reply(
        Reply::chunks(&["live ", "from ", "the ", "bot"]).frame_delay(Duration::from_millis(300)),
    );
    rig.dm("and now?");
    page.wait_for(
        "[...document.querySelectorAll('#conversation .msg[data-role=\"user\"]')]\
         .some(m => m.textContent.includes('and now?'))",
        "the DM shown live",
    )
    .await;
    page.wait_for(&streaming_with("live"), "a streamed delta")
        .await;
    wait_answer(&page, "live from the bot").await;
    page.assert_no_script_errors();
    rig.stop().await;
}

/// Model output that would run script if it were markup.
const HOSTILE: &str = "Here: <script>window.__pwned=1</script> and \
<img src=x onerror=\"window.__pwned=1\"> and [click](javascript:window.__pwned=1) \
and \u{1b}[31mred\u{1b}[0m. End of hostile.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_model_output_renders_as_inert_text() {
    let rig = Rig::start().await;
    let browser = Browser::shared().await;
    let page = rig.signed_in(browser).await;
    rig.llama.push_reply(Reply::text(HOSTILE));
    say(&page, "say something nasty").await;
    wait_answer(&page, "End of hostile.").await;
    // Give an image's error handler time to fire if an image was made.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let checks = page
        .eval(
            "(() => { const c = document.querySelector('#conversation'); return { \
               pwned: typeof window.__pwned, \
               scripts: c.querySelectorAll('script').length, \
               imgs: c.querySelectorAll('img').length, \
               js_links: document.querySelectorAll('a[href^=\"javascript:\" i]').length, \
               handlers: [...c.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length, \
               esc: document.body.textContent.includes('\\u001b'), \
               text: c.textContent }; })()",
        )
        .await;
    assert_eq!(checks["pwned"], "undefined", "{checks}");
    assert_eq!(checks["scripts"], 0, "{checks}");
    assert_eq!(checks["imgs"], 0, "{checks}");
    assert_eq!(checks["js_links"], 0, "{checks}");
    assert_eq!(checks["handlers"], 0, "{checks}");
    assert_eq!(checks["esc"], false, "{checks}");
    // Shown as the text it is (the tags verbatim).
    let text = checks["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("<script>window.__pwned=1</script>") && text.contains("onerror"),
        "{checks}"
    );
    assert!(text.contains("red"), "{checks}");
    page.assert_no_script_errors();
    rig.stop().await;
}

/// A secret the daemon knows (its environment's `DISCORD_TOKEN`, the
/// rig's) in what the model writes reaches the page as its redaction
/// marker only: not in the streamed message, not anywhere in the DOM.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_in_the_models_answer_never_reaches_the_page() {
    const SECRET: &str = "web-ui-test-token";
    let rig = Rig::start().await;
    let browser = Browser::shared().await;
    let page = rig.signed_in(browser).await;
    rig.llama.push_reply(Reply::chunks(&[
        "the bot's token is ",
        "web-ui-test-token",
        ", keep it safe",
    ]));
    say(&page, "what is the bot's token?").await;
    wait_answer(&page, "keep it safe").await;
    let html = page.eval("document.documentElement.outerHTML").await;
    let html = html.as_str().unwrap_or_default();
    assert!(!html.contains(SECRET), "the page holds the secret");
    assert!(
        html.contains("[redacted:DISCORD_TOKEN]"),
        "no redaction marker"
    );
    page.assert_no_script_errors();
    rig.stop().await;
}
