use super::*;

#[test]
fn stable_prefix_stops_at_blank_lines_outside_fences() {
    assert_eq!(stable_prefix("para one\n\npara two"), 10);
    assert_eq!(stable_prefix("no blank yet"), 0);
    let fenced = "intro\n\n```\ncode\n\nmore code\n";
    assert_eq!(stable_prefix(fenced), 7);
    let closed = "```\na\n\nb\n```\n\nafter";
    assert_eq!(stable_prefix(closed), closed.len() - 5);
}

fn ctx<'a>(theme: &'a Theme, tools: &'a ToolLog) -> RenderCtx<'a> {
    RenderCtx {
        theme,
        tools,
        expanded: false,
        epoch: 0,
    }
}

#[test]
fn streaming_reuses_finished_blocks_and_matches_the_full_render() {
    let theme = Theme::default();
    let tools = ToolLog::default();
    let mut t = Transcript::default();
    t.delta("s", &Origin::Tui, "first paragraph\n\nsecond ");
    let a = t.entries[0].lines(40, &ctx(&theme, &tools));
    t.delta("s", &Origin::Tui, "part");
    let b = t.entries[0].lines(40, &ctx(&theme, &tools));
    assert_eq!(a.len(), b.len());
    // The finished block was not rendered again: the same allocation.
    assert!(Rc::ptr_eq(&a.head, &b.head));
    let cached = t.entries[0].cache.borrow().as_ref().map(|c| c.stable);
    assert_eq!(cached, Some("first paragraph\n\n".len()));
    t.finish("s", &Origin::Tui, "first paragraph\n\nsecond part");
    let full = t.entries[0].lines(40, &ctx(&theme, &tools));
    assert_eq!(full.to_vec(), b.to_vec());
    let again = t.entries[0].lines(40, &ctx(&theme, &tools));
    assert!(Rc::ptr_eq(&full.head, &again.head));
}

#[test]
fn queued_messages_are_not_shown_twice() {
    let mut t = Transcript::default();
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
    let mut t = Transcript::default();
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
