//! HTML as readable markdown for the model: the page's main content
//! (`<main>`, else `<article>`, else the body without navigation, headers,
//! footers, asides, forms and scripts), links kept and made absolute.

use std::rc::Rc;

use htmd::{HtmlToMarkdown, Node};
use markup5ever_rcdom::NodeData;

/// Tags whose content is never what the page is about.
const SKIPPED: [&str; 12] = [
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form",
    "iframe", "svg", "button",
];

/// `html` fetched from `base`, as markdown headed by its title.
pub fn to_markdown(html: &str, base: &url::Url) -> String {
    let converter = HtmlToMarkdown::builder()
        .skip_tags(SKIPPED.to_vec())
        .build();
    let Ok(tree) = converter.html_to_tree(html) else {
        return String::new();
    };
    absolutize(&tree, base);
    let title = find(&tree, "title").map(|t| text_of(&t));
    let main = find(&tree, "main")
        .or_else(|| find(&tree, "article"))
        .or_else(|| find(&tree, "body"))
        .unwrap_or_else(|| tree.clone());
    let body = converter.tree_to_markdown(&main);
    match title
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
    {
        // The page's own heading often repeats the title.
        Some(t) if !body.starts_with(&format!("# {t}")) => format!("# {t}\n\n{body}"),
        _ => body,
    }
}

fn tag(node: &Node) -> Option<String> {
    match &node.data {
        NodeData::Element { name, .. } => Some(name.local.to_string()),
        _ => None,
    }
}

/// The first element named `name`, depth first.
fn find(node: &Rc<Node>, name: &str) -> Option<Rc<Node>> {
    if tag(node).as_deref() == Some(name) {
        return Some(node.clone());
    }
    node.children
        .borrow()
        .iter()
        .find_map(|child| find(child, name))
}

fn text_of(node: &Node) -> String {
    let mut out = String::new();
    if let NodeData::Text { contents } = &node.data {
        out.push_str(&contents.borrow());
    }
    for child in node.children.borrow().iter() {
        out.push_str(&text_of(child));
    }
    out
}

/// `href` and `src` resolved against the page's address, so a link the
/// model reads can be fetched as it is.
fn absolutize(node: &Node, base: &url::Url) {
    if let NodeData::Element { attrs, .. } = &node.data {
        for attr in attrs.borrow_mut().iter_mut() {
            let local = &attr.name.local;
            if (local == "href" || local == "src")
                && let Ok(abs) = base.join(&attr.value)
            {
                attr.value = abs.as_str().into();
            }
        }
    }
    for child in node.children.borrow().iter() {
        absolutize(child, base);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_content_with_absolute_links() {
        let html = r#"<html><head><title>Doc</title><script>var x=1;</script></head>
            <body><nav><a href="/home">Home</a></nav>
            <main><h2>Install</h2><p>Run <code>make</code>, then see <a href="guide.html">the guide</a>.</p>
            <ul><li>one</li><li>two</li></ul></main>
            <footer>© someone</footer></body></html>"#;
        let base = url::Url::parse("https://example.com/docs/index.html").unwrap();
        let md = to_markdown(html, &base);
        assert!(md.starts_with("# Doc\n\n## Install"), "{md}");
        assert!(
            md.contains("[the guide](https://example.com/docs/guide.html)"),
            "{md}"
        );
        assert!(md.contains("`make`"), "{md}");
        assert!(
            md.contains("*   one") || md.contains("- one") || md.contains("* one"),
            "{md}"
        );
        for gone in ["Home", "var x", "someone"] {
            assert!(!md.contains(gone), "{gone} in {md}");
        }
    }
}
