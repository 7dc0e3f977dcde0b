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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Event, EventKind, HookOutcome, HookRun, Origin};
    use crate::surfaces::tui::theme::Theme;

    #[test]
    fn a_hook_run_is_an_entry_of_the_tools_pane() {
        let mut app = App::new(crate::surfaces::tui::app::AppOptions {
            session: "s".into(),
            theme: Theme::default(),
            theme_dirs: Vec::new(),
            model: "m".into(),
            endpoint: "http://127.0.0.1:1".into(),
            context_length: 1024,
        });
        app.apply(Event {
            agent: None,
            submission: None,
            session: "s".into(),
            origin: Origin::Tui,
            kind: EventKind::Hook(HookRun {
                event: "pre_tool".into(),
                command: "/home/me/bin/guard".into(),
                call_id: Some("c1".into()),
                outcome: HookOutcome::Blocked,
                exit_code: Some(2),
                message: "not on main".into(),
                duration_ms: 12,
            }),
        });
        let shown: Vec<String> = lines(&app, 80)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(shown[0], "⊘ hook pre_tool denied · 12 ms", "{shown:?}");
        assert!(
            shown.iter().any(|l| l.contains("/home/me/bin/guard")),
            "{shown:?}"
        );
        assert!(shown.iter().any(|l| l.contains("not on main")), "{shown:?}");
    }
}
