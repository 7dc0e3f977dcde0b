//! The review's regressions: hostile text from the model, a Discord or a
//! Telegram user renders inert and in time linear in its length (the page
//! renders a streaming answer again on every paint, so a quadratic input
//! freezes the tab).

use serde_json::Value;

use super::rig::Rig;
use crate::support::cdp::Browser;

/// Renders each case of `cases` (a JS object of name → text) with the
/// page's own markdown module; each case's milliseconds.
async fn render_times(page: &crate::support::cdp::Page<'_>, cases: &str) -> Value {
    page.eval(&format!(
        "import('/assets/markdown.js').then(m => {{ const cases = {cases}; const out = {{}}; \
         for (const [k, v] of Object.entries(cases)) {{ const t = performance.now(); \
         document.body.append(m.render(v)); out[k] = performance.now() - t; }} return out; }})"
    ))
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_markdown_renders_in_linear_time() {
    let rig = Rig::start().await;
    let browser = Browser::shared().await;
    let page = rig.signed_in(browser).await;
    // 200 KB each (a streamed answer has no cap): linear rendering takes
    // milliseconds, the quadratic paths took minutes.
    let times = render_times(
        &page,
        "{ parens: 'see http://a' + ')'.repeat(200000), \
           urls: '(http://['.repeat(25000), \
           table_sep: 'a|b\\n' + ' '.repeat(200000) + 'x', \
           table_sep_dash: 'a|b\\n-' + ' '.repeat(200000) + 'x' }",
    )
    .await;
    for (case, ms) in times.as_object().expect("times") {
        let ms = ms.as_f64().unwrap_or(f64::MAX);
        // Generous: a thousand times what a linear pass needs.
        assert!(ms < 5000.0, "{case}: {ms} ms to render 200 KB");
    }
    // What the fix must keep: a URL's own balanced parentheses, not the
    // sentence's closing one; a table still renders.
    let kept = page
        .eval(
            "import('/assets/markdown.js').then(m => { const d = document.createElement('div'); \
             d.append(m.render('(see https://en.wikipedia.org/wiki/Rust_(language)).\\n\\n| a | b |\\n|:-|--:|\\n| 1 | 2 |')); \
             return [...d.querySelectorAll('a')].map(a => a.href).join(' ') + ' ' + d.querySelectorAll('td').length; })",
        )
        .await;
    assert_eq!(kept, "https://en.wikipedia.org/wiki/Rust_(language) 2");
    page.assert_no_script_errors();
    rig.stop().await;
}
