//! One-line cells: message headers with origin badges, and tool calls
//! (collapsed to one line, or expanded with arguments and output).

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::RenderCtx;
use crate::protocol::Origin;
use crate::surfaces::tui::feeds::{ToolEntry, ToolState};
use crate::surfaces::tui::theme::Theme;
use crate::surfaces::tui::wrap;

/// `you  TUI` / `egirl  Discord #general`: who, then where from; with
/// agents, whose session it is before that (`egirl  work · Discord #general`).
pub(super) fn header_line(
    who: &str,
    color: ratatui::style::Color,
    origin: &Origin,
    queued: bool,
    t: &Theme,
    agent: Option<(&str, ratatui::style::Color)>,
) -> Line<'static> {
    let mut spans = vec![
        Span::styled(
            who.to_string(),
            Style::default().fg(color).add_modifier(Modifier::BOLD),
        ),
        Span::raw("  "),
    ];
    if let Some((name, color)) = agent {
        spans.push(Span::styled(name.to_string(), Style::default().fg(color)));
        spans.push(Span::styled(" · ", t.muted()));
    }
    spans.push(Span::styled(badge(origin), t.muted()));
    if queued {
        spans.push(Span::styled("  (queued)", Style::default().fg(t.warning)));
    }
    Line::from(spans)
}

/// The origin as people say it.
pub fn badge(origin: &Origin) -> String {
    match origin {
        Origin::Tui => "TUI".into(),
        Origin::Cli => "CLI".into(),
        Origin::Web => "web".into(),
        Origin::Webhook => "webhook".into(),
        Origin::Heartbeat => "heartbeat".into(),
        Origin::Discord(channel) => format!("Discord #{channel}"),
        Origin::Cron(job) => format!("cron {job}"),
        Origin::Telegram(chat) => format!("Telegram {chat}"),
        Origin::Acp => "editor".into(),
    }
}

pub(super) fn tool_lines(
    seq: usize,
    width: u16,
    ctx: &RenderCtx<'_>,
    shown: Shown,
) -> Vec<Line<'static>> {
    let t = ctx.theme;
    let Some(r) = ctx.tools.get(seq) else {
        return vec![Line::styled("  ⚙ (tool call no longer kept)", t.muted())];
    };
    let color = match r.state {
        ToolState::Ok => t.routing_local,
        ToolState::Failed => t.error,
        ToolState::Denied | ToolState::AwaitingApproval => t.warning,
        ToolState::Running => t.tool,
        ToolState::Restored => t.muted,
    };
    let mut status = format!("{} {}", r.state.symbol(), r.state.label());
    if let Some(ms) = r.duration_ms {
        status.push_str(&format!(" · {ms} ms"));
    }
    let counts = r
        .diff
        .as_ref()
        .map(|d| (format!("+{}", d.added), format!("−{}", d.removed)));
    let counts_w = counts
        .as_ref()
        .map_or(0, |(a, r)| 3 + wrap::width(a) + 1 + wrap::width(r));
    let width = usize::from(width);
    let fixed = 4 + wrap::width(&r.call.name) + 1 + 3 + wrap::width(&status) + counts_w;
    let summary = wrap::one_line(&r.summary(), width.saturating_sub(fixed).max(8));
    let mut out = vec![Line::from(vec![
        Span::styled("  ⚙ ", Style::default().fg(t.tool)),
        Span::styled(
            r.call.name.clone(),
            Style::default().fg(t.tool).add_modifier(Modifier::BOLD),
        ),
        Span::raw(" "),
        Span::styled(summary, Style::default().fg(t.text)),
        Span::styled(" · ", t.muted()),
        Span::styled(status, Style::default().fg(color)),
    ])];
    if let Some((added, removed)) = counts {
        out[0].spans.extend([
            Span::styled(" · ", t.muted()),
            Span::styled(added, Style::default().fg(t.diff_added)),
            Span::raw(" "),
            Span::styled(removed, Style::default().fg(t.diff_removed)),
        ]);
    }
    match shown {
        Shown::Expanded { output_lines } => out.extend(expanded_lines(r, width, t, output_lines)),
        Shown::Collapsed => out.extend(note_lines(r, width, t)),
    }
    out
}

/// Dimmed lines under a collapsed call: a running call's latest progress
/// (a delegation's step), or why a failed call failed.
fn note_lines(r: &ToolEntry, width: usize, t: &Theme) -> Vec<Line<'static>> {
    let notes: Vec<&str> = match r.state {
        ToolState::Running | ToolState::AwaitingApproval => r
            .output
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(str::trim)
            .into_iter()
            .collect(),
        ToolState::Failed => failure_reason(&r.output),
        _ => Vec::new(),
    };
    notes
        .into_iter()
        .map(|note| {
            Line::from(vec![
                Span::styled("    ↳ ", t.muted()),
                Span::styled(
                    wrap::one_line(note, width.saturating_sub(6).max(8)),
                    t.muted(),
                ),
            ])
        })
        .collect()
}

/// How a call shows: its one-liner (and notes under it), or expanded with
/// its arguments and up to `output_lines` of its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shown {
    Collapsed,
    Expanded { output_lines: usize },
}

/// Output lines of each call while every call is expanded (Alt+O); one
/// call expanded on its own (Ctrl+O, a click) shows all of its output.
pub(super) const EXPANDED_ALL_LINES: usize = 20;

/// An expanded call: its arguments, then the first `shown` lines of its
/// output.
fn expanded_lines(r: &ToolEntry, width: usize, t: &Theme, shown: usize) -> Vec<Line<'static>> {
    let bar = [Span::styled("    │ ", t.muted())];
    let inner = width.saturating_sub(6).max(8);
    let args = serde_json::to_string_pretty(&r.call.arguments).unwrap_or_default();
    let output = r.output.trim_end();
    let mut body: Vec<(Style, &str)> = args.lines().map(|l| (t.muted(), l)).collect();
    let total = output.lines().count();
    body.extend(
        output
            .lines()
            .take(shown)
            .map(|l| (Style::default().fg(t.text), l)),
    );
    let mut out = Vec::new();
    for (style, line) in body {
        let pieces = vec![(style, line.to_string())];
        out.extend(wrap::into_lines(
            wrap::wrap_hard(&pieces, inner),
            &bar,
            &bar,
        ));
    }
    if total > shown {
        out.push(Line::from(vec![
            bar[0].clone(),
            Span::styled(
                format!("… {} more lines · Ctrl+O on it shows all", total - shown),
                t.muted(),
            ),
        ]));
    }
    out
}

/// Lines shown under a failed call saying why.
const REASON_LINES: usize = 2;

/// The first lines of a failed call's output that say why: an exec's exit
/// status and the start of its stderr when it wrote any, else the output's
/// first lines (a tool's error message).
pub(super) fn failure_reason(output: &str) -> Vec<&str> {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let stderr = lines.iter().position(|l| *l == "[stderr]");
    let mut out: Vec<&str> = match stderr {
        Some(at) => {
            let status = lines.first().filter(|l| l.starts_with("exit code"));
            let err = lines[at + 1..].iter().take_while(|l| **l != "[stdout]");
            status.into_iter().chain(err).copied().collect()
        }
        None => lines.into_iter().filter(|l| *l != "[stdout]").collect(),
    };
    out.truncate(REASON_LINES);
    out
}

#[cfg(test)]
mod tests {
    use super::failure_reason;

    #[test]
    fn a_failure_says_the_exit_status_and_the_start_of_stderr() {
        let exec = "exit code 1 (0.0s)\n[stdout]\npartial\n[stderr]\ntouch: cannot touch 'x': Read-only\nmore";
        assert_eq!(
            failure_reason(exec),
            ["exit code 1 (0.0s)", "touch: cannot touch 'x': Read-only"]
        );
        assert_eq!(
            failure_reason("\nno such file: notes.md\n"),
            ["no such file: notes.md"]
        );
        assert!(failure_reason("").is_empty());
    }
}
