use super::*;

fn text(md: &str, width: usize) -> Vec<String> {
    render(md, width, &Theme::default())
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

#[test]
fn paragraphs_wrap_and_are_separated() {
    assert_eq!(
        text("one two three four\n\nfive", 10),
        ["one two", "three four", "", "five"]
    );
}

#[test]
fn lists_nest_and_number() {
    let out = text("- a\n- b\n  1. c\n  2. d\n\nafter", 40);
    assert_eq!(out, ["• a", "• b", "  1. c", "  2. d", "", "after"]);
}

#[test]
fn list_items_wrap_under_their_text() {
    assert_eq!(text("- alpha beta gamma", 12), ["• alpha beta", "  gamma"]);
}

#[test]
fn quotes_headings_links_and_code() {
    let out = text(
        "# Title\n\n> quoted\n\nsee [docs](https://x.dev) and `code`",
        60,
    );
    assert_eq!(
        out,
        [
            "# Title",
            "",
            "│ quoted",
            "",
            "see docs (https://x.dev) and code"
        ]
    );
}

#[test]
fn fenced_code_keeps_every_character_and_highlights() {
    let lines = render("```rust\nlet x = 1;\n```", 40, &Theme::default());
    assert_eq!(lines.len(), 3);
    assert!(lines[1].spans.len() > 1, "not highlighted: {:?}", lines[1]);
    let out = text("```\nabcdefghij\n```", 8);
    assert_eq!(out, ["```", "abcdefgh", "ij", "```"]);
}

#[test]
fn an_unclosed_fence_renders_while_streaming() {
    let out = text("text\n\n```py\nprint(1)", 40);
    assert_eq!(out, ["text", "", "```py", "print(1)", "```"]);
}

#[test]
fn tables_align_and_shrink() {
    let out = text("| a | bb |\n|---|---:|\n| ccc | d |", 40);
    assert_eq!(out, ["a   │ bb", "────┼───", "ccc │  d"]);
    let narrow = text("| aaaaaaaaaa | bbbbbbbbbb |\n|---|---|\n| x | y |", 16);
    assert!(narrow.iter().all(|l| wrap::width(l) <= 16), "{narrow:?}");
}
