//! A compaction in the conversation: a divider saying what was replaced
//! ("compacted 42 messages, 6.1k → 0.9k tokens"), and under it the summary
//! the model now sees, shown when expanded (Ctrl+O), like a diff.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::RenderCtx;
use crate::surfaces::tui::wrap;

/// The divider's words: how many messages, tokens before and after.
pub fn label(summarized_messages: usize, before_tokens: u64, after_tokens: u64) -> String {
    format!(
        "compacted {summarized_messages} messages, {} → {} tokens",
        tokens(before_tokens),
        tokens(after_tokens)
    )
}

/// 6100 → "6.1k"; under a thousand as is.
fn tokens(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else {
        format!("{:.1}k", n as f64 / 1000.0)
    }
}

pub(super) fn render(
    label: &str,
    summary: &str,
    width: u16,
    ctx: &RenderCtx<'_>,
    expanded: bool,
) -> Vec<Line<'static>> {
    let t = ctx.theme;
    let hint = if expanded { "" } else { " (Ctrl+O: summary)" };
    let words = format!(" {label}{hint} ");
    let total = usize::from(width).saturating_sub(2);
    let used = words.chars().count() + 2;
    let mut out = if used + 2 <= total {
        let rule = "─".repeat(total - used);
        vec![Line::from(vec![
            Span::raw("  "),
            Span::styled(format!("──{words}{rule}"), t.muted()),
        ])]
    } else {
        // Too narrow for a rule: the words, wrapped.
        let pieces = vec![(t.muted(), format!("──{}", words.trim_end()))];
        let indent = [Span::raw("  ")];
        wrap::into_lines(wrap::wrap(&pieces, total.max(8)), &indent, &indent)
    };
    if expanded {
        let style = t.muted().add_modifier(Modifier::ITALIC);
        let bar = [Span::styled("    │ ", t.muted())];
        let inner = usize::from(width).saturating_sub(6).max(8);
        for line in summary.trim().split('\n') {
            let pieces = vec![(style, line.to_string())];
            out.extend(wrap::into_lines(wrap::wrap(&pieces, inner), &bar, &bar));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_rounds_to_thousands() {
        assert_eq!(
            label(42, 6100, 912),
            "compacted 42 messages, 6.1k → 912 tokens"
        );
        assert_eq!(
            label(3, 12_345, 1000),
            "compacted 3 messages, 12.3k → 1.0k tokens"
        );
    }
}
