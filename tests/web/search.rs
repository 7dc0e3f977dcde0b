//! web_search through the real binary against SearXNG- and Brave-shaped
//! answers from the local site.

use serde_json::json;

use super::{BRAVE_KEY, call, offered_tools, site};

#[tokio::test]
async fn searxng_results_as_title_url_and_snippet() {
    let site = site().await;
    let config = format!(
        "[tools.web.search]\nprovider = \"searxng\"\nendpoint = \"{}\"\n",
        site.url("/searxng")
    );
    let ((ok, out), _, fake) = call(
        "web_search",
        json!({"query": "descale kettle", "count": 2}),
        &config,
        &[],
        &[],
    )
    .await;
    assert!(ok, "{out}");
    assert_eq!(
        out,
        "1. Descaling a kettle\n   https://kettle.example/descale\n   Use citric acid, then rinse twice.\n\
         2. Kettle FAQ\n   https://kettle.example/faq\n   Why does it click?"
    );
    assert!(offered_tools(&fake).contains(&"web_search".to_string()));
    assert_eq!(
        site.seen.paths(),
        ["/searxng/search?q=descale+kettle&format=json"]
    );
}

#[tokio::test]
async fn brave_results_with_the_key_sent_and_never_shown() {
    let site = site().await;
    let config = format!(
        "[tools.web.search]\nprovider = \"brave\"\nendpoint = \"{}\"\n",
        site.url("/brave")
    );
    let ((ok, out), events, fake) = call(
        "web_search",
        json!({"query": "kettle"}),
        &config,
        &[],
        &[("BRAVE_API_KEY", BRAVE_KEY)],
    )
    .await;
    assert!(ok, "{out}");
    assert_eq!(
        out,
        "1. Kettle descaling\n   https://brave.example/k\n   Vinegar & water."
    );
    assert!(offered_tools(&fake).contains(&"web_search".to_string()));
    let all = serde_json::to_string(&events).unwrap();
    assert!(!all.contains(BRAVE_KEY));
    assert!(
        !serde_json::to_string(&fake.requests())
            .unwrap()
            .contains(BRAVE_KEY)
    );
}

#[tokio::test]
async fn search_not_configured_or_keyless_is_not_offered() {
    let site = site().await;
    let (_, _, fake) = call("web_search", json!({"query": "x"}), "", &[], &[]).await;
    assert!(!offered_tools(&fake).contains(&"web_search".to_string()));

    let config = format!(
        "[tools.web.search]\nprovider = \"brave\"\nendpoint = \"{}\"\n",
        site.url("/brave")
    );
    let ((ok, out), _, fake) = call(
        "web_search",
        json!({"query": "x"}),
        &config,
        &[],
        &[("BRAVE_API_KEY", "")],
    )
    .await;
    assert!(!offered_tools(&fake).contains(&"web_search".to_string()));
    assert!(!ok && out.contains("BRAVE_API_KEY is not set"), "{out}");
    assert!(site.seen.paths().is_empty());
}
