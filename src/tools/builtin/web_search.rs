//! `web_search {query, count?}`: results as title, URL and snippet from
//! the search service `[tools.web.search]` names: a SearXNG instance's JSON
//! API, or Brave Search with `BRAVE_API_KEY`. Not configured: not offered.
//! The endpoint is the owner's choice, not the model's: it is not held to
//! the public-address guard of `web_fetch` (a SearXNG on localhost works).

use serde_json::Value;

use crate::chat::ToolSpec;
use crate::config::{BRAVE_KEY_VAR, SearchProvider};
use crate::tools::{ToolContext, ToolOutput, arg_str, arg_u64};

const DEFAULT_COUNT: u64 = 5;
const MAX_COUNT: u64 = 20;
/// Bytes of a search answer read at most.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "web_search",
        description: "Search the web: title, URL, snippet per result.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {"query": {"type": "string"}, "count": {"type": "integer"}},
            "required": ["query"]
        }),
    }
}

/// One result as the model reads it.
#[derive(Debug, PartialEq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

pub async fn run(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let query = match arg_str(args, "query") {
        Ok(q) if !q.trim().is_empty() => q.trim(),
        Ok(_) => return ToolOutput::fail("`query` is empty"),
        Err(e) => return e,
    };
    let count = match arg_u64(args, "count") {
        Ok(n) => n.unwrap_or(DEFAULT_COUNT).clamp(1, MAX_COUNT),
        Err(e) => return e,
    };
    let Some(search) = &ctx.config.tools.web.search else {
        return ToolOutput::fail("web search is not configured ([tools.web.search])");
    };
    let endpoint = match search.endpoint() {
        Ok(e) => e,
        Err(why) => return ToolOutput::fail(format!("web search is unavailable: {why}")),
    };
    let client = match reqwest::Client::builder()
        .timeout(ctx.config.tools.web.timeout.0)
        .user_agent(crate::tools::web::user_agent())
        .build()
    {
        Ok(c) => c,
        Err(e) => return ToolOutput::fail(format!("cannot build the HTTP client: {e}")),
    };
    let request = match search.provider {
        SearchProvider::Searxng => client
            .get(format!("{endpoint}/search"))
            .query(&[("q", query), ("format", "json")]),
        SearchProvider::Brave => {
            let key = std::env::var(BRAVE_KEY_VAR).unwrap_or_default();
            client
                .get(format!("{endpoint}/res/v1/web/search"))
                .query(&[("q", query), ("count", &count.to_string())])
                .header("Accept", "application/json")
                .header("X-Subscription-Token", key.trim())
        }
    };
    let answer = tokio::select! {
        a = fetch_json(request) => a,
        _ = ctx.cancel.cancelled() => return ToolOutput::fail("interrupted"),
    };
    let answer = match answer {
        Ok(a) => a,
        Err(e) => return ToolOutput::fail(format!("web search failed: {e}")),
    };
    let mut hits = match search.provider {
        SearchProvider::Searxng => searxng_hits(&answer),
        SearchProvider::Brave => brave_hits(&answer),
    };
    hits.truncate(count as usize);
    if hits.is_empty() {
        return ToolOutput::ok(format!("no results for `{query}`"));
    }
    ToolOutput::ok(format_hits(&hits))
}

async fn fetch_json(request: reqwest::RequestBuilder) -> Result<Value, String> {
    use futures_util::StreamExt;
    let response = request.send().await.map_err(|e| e.to_string())?;
    let status = response.status();
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        body.extend_from_slice(&chunk.map_err(|e| e.to_string())?);
        if body.len() > MAX_ANSWER_BYTES {
            return Err(format!("the answer is over {MAX_ANSWER_BYTES} bytes"));
        }
    }
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let text: String = text.chars().take(200).collect();
        return Err(format!("HTTP {status}: {}", text.trim()));
    }
    serde_json::from_slice(&body).map_err(|e| format!("the answer is not JSON: {e}"))
}

/// SearXNG: `{"results": [{"title", "url", "content"}]}`.
pub fn searxng_hits(answer: &Value) -> Vec<Hit> {
    hits(&answer["results"], "content")
}

/// Brave: `{"web": {"results": [{"title", "url", "description"}]}}`.
pub fn brave_hits(answer: &Value) -> Vec<Hit> {
    hits(&answer["web"]["results"], "description")
}

fn hits(results: &Value, snippet_key: &str) -> Vec<Hit> {
    let text = |v: &Value, k: &str| strip_tags(v[k].as_str().unwrap_or("")).trim().to_string();
    results
        .as_array()
        .map(|list| {
            list.iter()
                .filter(|r| r["url"].is_string())
                .map(|r| Hit {
                    title: text(r, "title"),
                    url: r["url"].as_str().unwrap_or("").to_string(),
                    snippet: text(r, snippet_key),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Search snippets mark the matched words (`<strong>`); the model needs
/// the words only.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
}

fn format_hits(hits: &[Hit]) -> String {
    hits.iter()
        .enumerate()
        .map(|(i, h)| {
            let mut entry = format!("{}. {}\n   {}", i + 1, h.title, h.url);
            if !h.snippet.is_empty() {
                entry.push_str(&format!("\n   {}", h.snippet));
            }
            entry
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brave_snippets_lose_their_markup() {
        let answer = serde_json::json!({"web": {"results": [
            {"title": "Rust", "url": "https://rust-lang.org/", "description": "A <strong>language</strong> &amp; more"}
        ]}});
        assert_eq!(
            brave_hits(&answer),
            vec![Hit {
                title: "Rust".into(),
                url: "https://rust-lang.org/".into(),
                snippet: "A language & more".into()
            }]
        );
    }
}
