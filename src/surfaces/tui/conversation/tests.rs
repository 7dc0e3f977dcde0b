use super::*;

static NO_AGENTS: std::sync::LazyLock<crate::surfaces::tui::agents::Agents> =
    std::sync::LazyLock::new(Default::default);

fn ctx<'a>(theme: &'a Theme, tools: &'a ToolLog) -> RenderCtx<'a> {
    RenderCtx {
        theme,
        tools,
        expanded: false,
        epoch: 0,
        agents: &NO_AGENTS,
    }
}

#[test]
fn streaming_reuses_finished_blocks_and_matches_the_full_render() {
    let theme = Theme::default();
    let tools = ToolLog::default();
    let mut t = Conversation::default();
    t.delta("s", &Origin::Tui, "first paragraph\n\nsecond\n");
    let a = t.entries[0].lines(40, &ctx(&theme, &tools));
    t.delta("s", &Origin::Tui, "part");
    let b = t.entries[0].lines(40, &ctx(&theme, &tools));
    assert_eq!(a.len(), b.len());
    // The finished block was not rendered again: the same allocation.
    assert!(Rc::ptr_eq(&a.head, &b.head));
    let cached = t.entries[0].cache.borrow().as_ref().map(|c| c.stable);
    assert_eq!(cached, Some("first paragraph\n\n".len()));
    drop((a, b));
    t.finish("s", &Origin::Tui, "first paragraph\n\nsecond\npart");
    let full = t.entries[0].lines(40, &ctx(&theme, &tools));
    let again = t.entries[0].lines(40, &ctx(&theme, &tools));
    assert!(Rc::ptr_eq(&full.head, &again.head));
    assert_eq!(full.to_vec(), whole("first paragraph\n\nsecond\npart", 40));
}

/// An answer's lines rendered in one go, as a transcript read back shows it.
fn whole(text: &str, width: u16) -> Vec<Line<'static>> {
    let theme = Theme::default();
    let tools = ToolLog::default();
    let mut t = Conversation::default();
    t.answer("s", &Origin::Tui, text);
    t.entries[0].lines(width, &ctx(&theme, &tools)).to_vec()
}

const TRICKY: &str = "# Plan\n\nSome *prose* with `code` and a [link](https://x.y).\n\n\
1. one\n1. two\n\n1. three, loose\n\n   continued item\n\n\
- a\n- b\n\n- c\n\n\
| a | b |\n|---|---:|\n| 1 | 2 |\n\n\
```rust\nfn main() {\n\n    let x = 1;\n}\n```\n\n\
> quoted\n>\n> more\n\n\
    indented code\n\n    after a blank\n\n\
<div>\n\nhtml around\n\n</div>\n\n\
---\n\nThe end.\n";

#[test]
fn streamed_answers_render_each_byte_once_and_match_the_whole() {
    let theme = Theme::default();
    let tools = ToolLog::default();
    for text in [TRICKY.to_string(), TRICKY.repeat(4)] {
        let text = text.as_str();
        for step in [1, 3, 7, 64] {
            let mut t = Conversation::default();
            let mut frames = Vec::new();
            let mut at = 0;
            while at < text.len() {
                let mut end = (at + step).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                t.delta("s", &Origin::Tui, &text[at..end]);
                at = end;
                // A frame every few deltas, as the loop draws.
                frames.push(t.entries[0].lines(60, &ctx(&theme, &tools)).len());
            }
            t.finish("s", &Origin::Tui, text);
            // The last frame before the final one showed it all, the same way.
            let streamed = t.entries[0].lines(60, &ctx(&theme, &tools)).len();
            assert_eq!(frames.last().copied(), Some(streamed));
            let shown = t.entries[0].lines(60, &ctx(&theme, &tools)).to_vec();
            assert_eq!(shown, whole(text, 60), "step {step}");
            let rendered = t.entries[0].cache.borrow().as_ref().map(|c| c.rendered);
            assert_eq!(
                rendered,
                Some(text.len()),
                "step {step}: bytes rendered twice"
            );
            assert!(frames.iter().all(|&n| n > 0));
        }
    }
}

#[test]
fn queued_messages_are_not_shown_twice() {
    let mut t = Conversation::default();
    t.push(
        "s",
        &Origin::Tui,
        Kind::User { queued: true },
        "later".into(),
    );
    t.user("s", &Origin::Tui, "later");
    assert_eq!(t.entries.len(), 1);
    assert_eq!(t.entries[0].kind, Kind::User { queued: false });
}

#[test]
fn a_tool_call_splits_the_answer_and_clear_keeps_other_sessions() {
    let mut t = Conversation::default();
    t.delta("a", &Origin::Tui, "before");
    t.delta("b", &Origin::Discord("1".into()), "other");
    t.close("a");
    t.delta("a", &Origin::Tui, "after");
    assert_eq!(t.entries.len(), 3);
    t.clear_session("a");
    t.delta("b", &Origin::Discord("1".into()), " more");
    assert_eq!(t.entries.len(), 1);
    assert_eq!(t.entries[0].text, "other more");
}

/// Ctrl+O re-renders the entries that expand (a tool call's diff,
/// reasoning), never the finished answers around them.
#[test]
fn expanding_re_renders_only_the_entries_that_expand() {
    use crate::protocol::ToolCallEvent;
    use crate::surfaces::tui::feeds::{ToolEntry, ToolState};
    let theme = Theme::default();
    let mut tools = ToolLog::default();
    let seq = tools.push(ToolEntry {
        call: ToolCallEvent {
            id: "c1".into(),
            name: "write_file".into(),
            arguments: serde_json::json!({"path": "n.md"}),
            sandbox: None,
        },
        session: "s".into(),
        origin: Origin::Tui,
        state: ToolState::Ok,
        duration_ms: Some(2),
        output: "created n.md (10 lines, 40 bytes)".into(),
        approval: None,
        diff: None,
    });
    // A new file of 10 lines, as the core's diff of it reads.
    let body: String = (0..10).map(|i| format!("\n+line {i}")).collect();
    tools.diffed(
        "s",
        "c1",
        crate::protocol::FileDiff {
            path: "n.md".into(),
            added: 10,
            removed: 0,
            text: format!("@@ -0,0 +1,10 @@{body}"),
        },
    );
    let mut t = Conversation::default();
    t.answer("s", &Origin::Tui, "Here it is.");
    t.push("s", &Origin::Tui, Kind::Tool(seq), String::new());
    t.reasoning("s", &Origin::Tui, "think");
    t.close("s");
    let mut c = ctx(&theme, &tools);
    let answer = t.entries[0].lines(40, &c);
    let collapsed = t.entries[1].lines(40, &c);
    t.entries[2].lines(40, &c);
    // The one-liner (it continues the answer: no header), 6 diff lines
    // of 11, the marker.
    assert_eq!(collapsed.len(), 1 + diff::PREVIEW + 1);
    let shown = collapsed.to_vec();
    assert_eq!(
        shown[shown.len() - 1].to_string(),
        "    … 5 more lines · Ctrl+O expands"
    );

    c.expanded = true;
    let again = t.entries[0].lines(40, &c);
    assert!(
        Rc::ptr_eq(&answer.head, &again.head),
        "the answer was rendered again"
    );
    let expanded = t.entries[1].lines(40, &c);
    assert!(
        expanded
            .to_vec()
            .iter()
            .any(|l| l.to_string() == "    +line 9")
    );
    let thinking = t.entries[2].lines(40, &c).to_vec();
    assert_eq!(thinking.len(), 2, "reasoning shows its text expanded");
    // Far from the viewport a diff drops its lines, not its height.
    t.keep_lines_near(100..101);
    assert!(!t.entries[1].diff.has_lines());
    assert_eq!(t.entries[1].height(40, &c), expanded.len());
    assert!(
        !t.entries[1].diff.has_lines(),
        "measuring rendered the diff again"
    );
    // Heights follow expansion too.
    assert_eq!(t.entries[2].height(40, &c), 2);
    c.expanded = false;
    assert_eq!(t.entries[2].height(40, &c), 1);
}

#[test]
fn messages_never_drawn_are_measured_by_estimate_and_drawing_makes_it_exact() {
    let theme = Theme::default();
    let tools = ToolLog::default();
    let c = ctx(&theme, &tools);
    let mut t = Conversation::default();
    for i in 0..50 {
        t.user("s", &Origin::Tui, &format!("question {i}"));
        t.finish(
            "s",
            &Origin::Tui,
            &format!("answer {i}\n\nwith a second paragraph"),
        );
    }
    let total: usize = t.entries.iter().map(|e| e.height(40, &c)).sum();
    assert_eq!(t.entries_with_lines(), 0, "measuring rendered messages");
    // Header and text: a user message is exact; an answer's blank line
    // between paragraphs is a text line too.
    assert_eq!(t.entries[0].height(40, &c), 2);
    assert_eq!(total, 50 * (2 + 4));
    let drawn = t.entries[1].lines(40, &c).len();
    assert_eq!(t.entries[1].height(40, &c), drawn);
}
