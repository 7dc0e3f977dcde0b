//! Tools: each call with its state (awaiting approval, running, ok,
//! failed, denied), duration, arguments and the first lines of output.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::surfaces::tui::app::App;
use crate::surfaces::tui::feeds::ToolState;
use crate::surfaces::tui::layout::Pane;
use crate::surfaces::tui::wrap;

/// Output lines shown per call.
const OUTPUT_LINES: usize = 3;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    super::side(app, Pane::Tools, false, area, buf);
}

pub fn lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut out = Vec::new();
    for r in app.tools.iter() {
        let color = match r.state {
            ToolState::Ok => t.routing_local,
            ToolState::Failed => t.error,
            ToolState::Denied | ToolState::AwaitingApproval => t.warning,
            ToolState::Running => t.tool,
            ToolState::Restored => t.muted,
        };
        let mut head = vec![
            Span::styled(format!("{} ", r.state.symbol()), Style::default().fg(color)),
            Span::styled(
                crate::surfaces::tui::mcp::call_name(&r.call.name, &r.call.arguments),
                Style::default().fg(t.tool).add_modifier(Modifier::BOLD),
            ),
            Span::styled(format!(" {}", r.state.label()), Style::default().fg(color)),
        ];
        if let Some(ms) = r.duration_ms {
            head.push(Span::styled(format!(" · {ms} ms"), t.muted()));
        }
        if let Some(diff) = &r.diff {
            head.extend([
                Span::styled(" · ", t.muted()),
                Span::styled(
                    format!("+{}", diff.added),
                    Style::default().fg(t.diff_added),
                ),
                Span::raw(" "),
                Span::styled(
                    format!("−{}", diff.removed),
                    Style::default().fg(t.diff_removed),
                ),
            ]);
        }
        out.push(Line::from(head));
        let inner = width.saturating_sub(2);
        let summary = r.summary();
        if !summary.is_empty() {
            out.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(wrap::one_line(&summary, inner), Style::default().fg(t.text)),
            ]));
        }
        if let Some(sandbox) = &r.call.sandbox {
            out.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(
                    wrap::truncate(&format!("sandbox: {sandbox}"), inner),
                    t.muted(),
                ),
            ]));
        }
        // exec's stream markers say nothing on their own: skip them.
        let lines: Vec<&str> = r
            .output
            .lines()
            .filter(|l| !l.trim().is_empty() && !matches!(l.trim(), "[stdout]" | "[stderr]"))
            .collect();
        // A running call's output is its progress: the latest lines matter.
        let skip = match r.state {
            ToolState::Running | ToolState::AwaitingApproval => {
                lines.len().saturating_sub(OUTPUT_LINES)
            }
            _ => 0,
        };
        for line in lines.into_iter().skip(skip).take(OUTPUT_LINES) {
            out.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(wrap::truncate(line.trim_end(), inner), t.muted()),
            ]));
        }
    }
    out
}
