//! The `/approvals` overlay: the rules in force, under a heading per kind
//! (exec prefixes, exact commands, hosts, MCP tools, delegation), each
//! with its id, scope, source and when it was added; `d` revokes.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::protocol::{ApprovalRule, ApprovalRuleKind, ApprovalScope};
use crate::surfaces::tui::app::App;
use crate::surfaces::tui::approval_rules::RulesOverlay;
use crate::surfaces::tui::wrap;

/// Under the list: what the scopes mean.
const NOTE: &str = "session rules end with this egirl; permanent ones live in .egirl/approvals.toml; config ones in egirl.toml";

pub fn render(app: &App, overlay: &RulesOverlay, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    let t = &app.theme;
    let width = area.width.saturating_sub(4).min(110);
    let inner_w = usize::from(width.saturating_sub(4));
    let rule_w = (inner_w / 2).max(12);
    let mut lines: Vec<Line<'static>> = Vec::new();
    // The line of each rule, to keep the selection in view.
    let mut selected_line = 0;
    let mut group: Option<ApprovalRuleKind> = None;
    for (i, rule) in overlay.rules.iter().enumerate() {
        if group != Some(rule.kind) {
            group = Some(rule.kind);
            lines.push(Line::styled(
                rule.kind.heading().to_string(),
                Style::default().fg(t.focus).add_modifier(Modifier::BOLD),
            ));
        }
        let base = if i == overlay.selected {
            selected_line = lines.len();
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        let details = wrap::truncate(&details(rule), inner_w.saturating_sub(rule_w + 12));
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<8}  ", rule.id), base.fg(t.muted)),
            Span::styled(
                format!("{:<rule_w$}  ", wrap::truncate(&shown(rule), rule_w)),
                base.fg(t.user),
            ),
            Span::styled(details, base.fg(t.muted)),
        ]));
    }
    let height = (lines.len() as u16 + 4).min(area.height);
    let inner = super::centered_overlay(
        app,
        area,
        (width, height),
        " Approvals · d revokes · Esc closes ",
        buf,
    );
    if inner.height == 0 {
        return;
    }
    let (note, color) = match &overlay.said {
        Some(said) => (said.as_str(), t.warning),
        None => (NOTE, t.muted),
    };
    let note = Line::styled(
        wrap::truncate(note, usize::from(inner.width)),
        Style::default().fg(color),
    );
    buf.set_line(inner.x, inner.bottom() - 1, &note, inner.width);
    let visible = usize::from(inner.height.saturating_sub(2)).max(1);
    let first = selected_line.saturating_sub(visible - 1);
    for (row, line) in lines.iter().skip(first).take(visible).enumerate() {
        buf.set_line(inner.x, inner.y + row as u16, line, inner.width);
    }
}

/// The rule as read: an MCP tool by server and tool.
fn shown(rule: &ApprovalRule) -> String {
    match rule.kind {
        ApprovalRuleKind::Mcp => match rule.rule.strip_prefix("mcp__") {
            Some(rest) => match rest.split_once("__") {
                Some((server, tool)) => format!("{server} · {tool}"),
                None => rule.rule.clone(),
            },
            None => rule.rule.clone(),
        },
        _ => rule.rule.clone(),
    }
}

/// Scope, source and when it was added.
fn details(rule: &ApprovalRule) -> String {
    let when = match (&rule.added, rule.scope) {
        (_, ApprovalScope::Config) => String::new(),
        (Some(added), _) => format!(" · added {}", local_time(added)),
        (None, _) => " · before dates were kept".into(),
    };
    let source = match rule.scope {
        // "session · this session (in memory)" says it twice.
        ApprovalScope::Session => String::new(),
        _ => format!(" · {}", rule.source.trim_start_matches("config ")),
    };
    format!("{}{source}{when}", rule.scope.name())
}

/// `2026-11-26 09:12` in the local time zone (the text as it is when it
/// does not parse).
pub fn local_time(rfc3339: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(rfc3339) {
        Ok(at) => at
            .with_timezone(&chrono::Local)
            .format("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => rfc3339.to_string(),
    }
}
