//! `web_fetch {url, max_chars?}`: a page as markdown (HTML) or as it is
//! (other text). Hosts not in `[tools.web] allow_domains` are asked about
//! under `fetch = "ask"`; special-purpose addresses (private, loopback,
//! link-local, documentation...) and this machine's own are refused after
//! resolution and at every redirect (`tools::web::guard`).

use crate::chat::ToolSpec;
use crate::tools::web::{fetch, human_bytes, markdown};
use crate::tools::{ToolContext, ToolOutput, arg_str, arg_u64};

/// Characters returned when the model does not say.
const DEFAULT_CHARS: usize = 20_000;

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "web_fetch",
        description: "Fetch a web page as markdown.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {"url": {"type": "string"}, "max_chars": {"type": "integer"}},
            "required": ["url"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let url = match arg_str(args, "url") {
        Ok(u) => u,
        Err(e) => return e,
    };
    let max_chars = match arg_u64(args, "max_chars") {
        Ok(n) => n.map_or(DEFAULT_CHARS, |n| n.max(1) as usize),
        Err(e) => return e,
    };
    let page = match fetch::get(url, ctx).await {
        Ok(page) => page,
        Err(e) => return ToolOutput::fail(e),
    };
    let text = String::from_utf8_lossy(&page.body);
    let is_html = page.media_type == "text/html"
        || page.media_type == "application/xhtml+xml"
        || (page.media_type.is_empty() && looks_like_html(&text));
    let content = if is_html {
        markdown::to_markdown(&text, &page.url)
    } else {
        text.into_owned()
    };
    let mut head = format!("{} ({}", page.url, page.status);
    if !page.media_type.is_empty() {
        head.push_str(&format!(", {}", page.media_type));
    }
    head.push(')');
    if let Some(total) = page.cut {
        let of = total.map_or(String::new(), |t| format!(" of {}", human_bytes(t)));
        head.push_str(&format!(
            "\n[body cut at {}{of}: [tools.web] max_bytes]",
            human_bytes(page.body.len() as u64)
        ));
    }
    let (shown, rest) = cut_chars(&content, max_chars);
    let mut output = format!("{head}\n\n{shown}");
    if rest > 0 {
        output.push_str(&format!(
            "\n\n[{rest} more characters; call again with a larger max_chars to read them]"
        ));
    }
    // A 4xx/5xx page still says why; the call failed all the same.
    if page.status >= 400 {
        return ToolOutput::fail(output);
    }
    ToolOutput::ok(output)
}

fn looks_like_html(text: &str) -> bool {
    let start: String = text
        .trim_start()
        .chars()
        .take(64)
        .collect::<String>()
        .to_ascii_lowercase();
    start.starts_with("<!doctype html") || start.starts_with("<html")
}

/// The first `max` characters and how many were left out.
fn cut_chars(text: &str, max: usize) -> (&str, usize) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (&text[..at], text[at..].chars().count()),
        None => (text, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_counts_characters_not_bytes() {
        assert_eq!(cut_chars("héllo", 2), ("hé", 3));
        assert_eq!(cut_chars("abc", 5), ("abc", 0));
    }
}
