//! Markdown (what the model writes) to the Bot API's HTML subset
//! (`parse_mode = HTML`): `<b>`, `<i>`, `<s>`, `<code>`, `<pre>`, `<a>`,
//! `<blockquote>`. Everything else becomes text; every text is escaped
//! (`&`, `<`, `>`), so nothing the model writes can open a tag Telegram
//! would reject or act on.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// `&`, `<` and `>` as entities (`"` too, for attribute values).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The Telegram HTML for a markdown text.
pub fn render(markdown: &str) -> String {
    let mut renderer = Renderer::default();
    for event in Parser::new_ext(markdown, Options::ENABLE_STRIKETHROUGH) {
        renderer.event(event);
    }
    renderer.out.trim().to_string()
}

/// The HTML written so far and the open lists and links.
#[derive(Default)]
struct Renderer {
    out: String,
    /// Open lists: the next item number (None: bullets).
    lists: Vec<Option<u64>>,
    /// Links whose target is not one Telegram accepts are kept as text.
    links: Vec<bool>,
}

impl Renderer {
    fn event(&mut self, event: Event) {
        let out = &mut self.out;
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => out.push_str(&escape(&text)),
            Event::Code(code) => {
                out.push_str("<code>");
                out.push_str(&escape(&code));
                out.push_str("</code>");
            }
            // Raw HTML in the answer is shown, never interpreted.
            Event::Html(html) | Event::InlineHtml(html) => out.push_str(&escape(&html)),
            Event::SoftBreak | Event::HardBreak => out.push('\n'),
            Event::Rule => {
                block_gap(out);
                out.push_str("———");
            }
            Event::TaskListMarker(done) => out.push_str(if done { "☑ " } else { "☐ " }),
            Event::InlineMath(m) | Event::DisplayMath(m) => out.push_str(&escape(&m)),
            Event::FootnoteReference(r) => out.push_str(&escape(&format!("[{r}]"))),
        }
    }

    fn start(&mut self, tag: Tag) {
        let out = &mut self.out;
        match tag {
            Tag::Paragraph => block_gap(out),
            Tag::Heading { .. } => {
                block_gap(out);
                out.push_str("<b>");
            }
            Tag::BlockQuote(_) => {
                block_gap(out);
                out.push_str("<blockquote>");
            }
            Tag::CodeBlock(kind) => {
                block_gap(out);
                let lang = match &kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                if is_language(&lang) {
                    out.push_str(&format!("<pre><code class=\"language-{lang}\">"));
                } else {
                    out.push_str("<pre><code>");
                }
            }
            Tag::List(start) => {
                if self.lists.is_empty() {
                    block_gap(out);
                }
                self.lists.push(start);
            }
            Tag::Item => self.item(),
            Tag::Emphasis => out.push_str("<i>"),
            Tag::Strong => out.push_str("<b>"),
            Tag::Strikethrough => out.push_str("<s>"),
            Tag::Link { dest_url, .. } => {
                let ok = is_link(&dest_url);
                if ok {
                    out.push_str(&format!("<a href=\"{}\">", escape(&dest_url)));
                }
                self.links.push(ok);
            }
            Tag::Image { .. } => {
                // A chat message cannot show it: its alt text follows.
                self.links.push(false);
                out.push_str("🖼 ");
            }
            _ => {}
        }
    }

    /// A list item on its own line, indented by its depth, with its
    /// number or a bullet.
    fn item(&mut self) {
        let out = &mut self.out;
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        let depth = self.lists.len().saturating_sub(1);
        out.push_str(&"  ".repeat(depth));
        match self.lists.last_mut() {
            Some(Some(n)) => {
                out.push_str(&format!("{n}. "));
                *n += 1;
            }
            _ => out.push_str("• "),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        let out = &mut self.out;
        match tag {
            // Bold: Telegram has no headings.
            TagEnd::Heading(_) => out.push_str("</b>"),
            TagEnd::BlockQuote(_) => {
                trim_trailing_newlines(out);
                out.push_str("</blockquote>");
            }
            TagEnd::CodeBlock => {
                trim_trailing_newlines(out);
                out.push_str("</code></pre>");
            }
            TagEnd::List(_) => {
                self.lists.pop();
            }
            TagEnd::Emphasis => out.push_str("</i>"),
            TagEnd::Strong => out.push_str("</b>"),
            TagEnd::Strikethrough => out.push_str("</s>"),
            TagEnd::Link => {
                let opened = self.links.pop() == Some(true);
                out.push_str(if opened { "</a>" } else { "" });
            }
            TagEnd::Image => {
                self.links.pop();
            }
            _ => {}
        }
    }
}

/// A blank line before a new block (none at the start, one inside a list item).
fn block_gap(out: &mut String) {
    if out.is_empty() || out.ends_with("<blockquote>") {
        return;
    }
    trim_trailing_newlines(out);
    out.push_str("\n\n");
}

fn trim_trailing_newlines(out: &mut String) {
    while out.ends_with('\n') {
        out.pop();
    }
}

/// A fence's info word usable as a class name.
fn is_language(lang: &str) -> bool {
    !lang.is_empty()
        && lang.len() <= 32
        && lang
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '-' | '_' | '.'))
}

/// Telegram accepts http(s), tg and mailto links; anything else stays text.
fn is_link(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    ["http://", "https://", "tg://", "mailto:"]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// The text a Telegram client shows for `html` (tags dropped, entities
/// decoded), which is what the 4,096-character limit counts.
pub fn visible(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find(['<', '&']) {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if rest.starts_with('<') {
            match rest.find('>') {
                Some(end) => rest = &rest[end + 1..],
                None => {
                    out.push_str(rest);
                    rest = "";
                }
            }
        } else {
            let (text, len) = [
                ("&amp;", '&'),
                ("&lt;", '<'),
                ("&gt;", '>'),
                ("&quot;", '"'),
            ]
            .iter()
            .find(|(e, _)| rest.starts_with(e))
            .map_or(('&', 1), |(e, c)| (*c, e.len()));
            out.push(text);
            rest = &rest[len..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_html_would_read() {
        assert_eq!(render("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
        assert_eq!(
            render("<b>not bold</b> <script>x</script>"),
            "&lt;b&gt;not bold&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;"
        );
    }

    #[test]
    fn inline_styles_map_to_telegram_tags() {
        assert_eq!(
            render("**bold** *it* ~~gone~~ `x<y`"),
            "<b>bold</b> <i>it</i> <s>gone</s> <code>x&lt;y</code>"
        );
        assert_eq!(
            render("[site](https://e.x/?a=1&b=\"2\") [bad](javascript:alert(1))"),
            "<a href=\"https://e.x/?a=1&amp;b=&quot;2&quot;\">site</a> bad"
        );
    }

    #[test]
    fn code_blocks_keep_their_language_and_escape_everything() {
        assert_eq!(
            render("Look:\n\n```rust\nif a < b && c { x() }\n```\n"),
            "Look:\n\n<pre><code class=\"language-rust\">if a &lt; b &amp;&amp; c { x() }</code></pre>"
        );
        assert_eq!(
            render("```\"><b>\nx\n```"),
            "<pre><code>x</code></pre>",
            "an info string that is not a language is dropped"
        );
    }

    #[test]
    fn blocks_headings_lists_and_quotes() {
        let md = "# Title\n\nSome text\nmore.\n\n- one\n- two\n\n1. a\n2. b\n\n> quoted";
        assert_eq!(
            render(md),
            "<b>Title</b>\n\nSome text\nmore.\n\n• one\n• two\n\n1. a\n2. b\n\n<blockquote>quoted</blockquote>"
        );
    }

    #[test]
    fn visible_text_is_what_telegram_counts() {
        let html = render("**a** < `b&c`\n\n```\nx\n```");
        assert_eq!(visible(&html), "a < b&c\n\nx");
    }
}
