//! Stats: per provider/model requests, tokens in/out, cached tokens,
//! tok/s and cost; per local endpoint requests, tokens and cache share;
//! session and total cost; the local share of tokens.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::protocol::Target;
use crate::surfaces::tui::app::App;
use crate::surfaces::tui::feeds::tokens;
use crate::surfaces::tui::layout::Pane;
use crate::surfaces::tui::wrap;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    super::side(app, Pane::Stats, false, area, buf);
}

/// Remote spend against each cap set, warning-coloured from 80% on.
fn budget(app: &App) -> Vec<Line<'static>> {
    let t = &app.theme;
    app.status
        .budget
        .iter()
        .map(|p| {
            let share = p.spent_usd / p.cap_usd.max(f64::MIN_POSITIVE);
            let style = match share {
                s if s >= 1.0 => Style::default().fg(t.error),
                s if s >= crate::usage::budget::WARN_SHARE => Style::default().fg(t.warning),
                _ => Style::default().fg(t.text),
            };
            let spent = if p.exhausted() {
                " · spent: local only"
            } else {
                ""
            };
            Line::from(vec![
                Span::styled(format!("budget {} ", p.name), t.muted()),
                Span::styled(
                    format!("${:.2} of ${:.2}{spent}", p.spent_usd, p.cap_usd),
                    style,
                ),
            ])
        })
        .collect()
}

pub fn lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let stats = &app.stats;
    let mut out = budget(app);
    if stats.rows.is_empty() {
        return out;
    }
    for ((provider, model), row) in &stats.rows {
        let (side, color) = match row.target {
            Some(Target::Remote) => ("remote", t.routing_remote),
            _ => ("local", t.routing_local),
        };
        out.push(Line::from(vec![
            Span::styled(
                wrap::truncate(
                    &format!("{provider}/{model}"),
                    width.saturating_sub(side.len() + 1),
                ),
                Style::default().fg(t.text).add_modifier(Modifier::BOLD),
            ),
            Span::styled(format!(" {side}"), Style::default().fg(color)),
        ]));
        out.push(Line::from(vec![Span::styled(
            format!(
                "  {} req · in {} · out {} · cached {}",
                row.requests,
                tokens(row.input_tokens),
                tokens(row.output_tokens),
                tokens(row.cached_tokens)
            ),
            Style::default().fg(t.text),
        )]));
        let speed = row
            .tokens_per_sec
            .map_or("– tok/s".to_string(), |s| format!("{s:.1} tok/s"));
        out.push(Line::from(Span::styled(
            format!("  {speed} · ${:.4}", row.cost_usd),
            t.muted(),
        )));
    }
    // With one endpoint its row would repeat the model's: rows only for replicas.
    let replicas = stats.endpoints.len() > 1;
    for (endpoint, row) in stats.endpoints.iter().filter(|_| replicas) {
        let name = endpoint
            .trim_start_matches("http://")
            .trim_start_matches("https://");
        out.push(Line::from(Span::styled(
            wrap::truncate(name, width),
            Style::default().fg(t.routing_local),
        )));
        out.push(Line::from(Span::styled(
            format!(
                "  {} req · in {} · out {} · cache {}%",
                row.requests,
                tokens(row.input_tokens),
                tokens(row.output_tokens),
                row.cache_share()
            ),
            Style::default().fg(t.text),
        )));
    }
    let (session, total) = app.costs();
    out.push(Line::from(super::field(
        app,
        "cost",
        format!("session ${session:.4} · total ${total:.4}"),
    )));
    if let Some(share) = stats.local_share() {
        out.push(Line::from(vec![
            Span::styled("share ", t.muted()),
            Span::styled(
                format!("local {share}%"),
                Style::default().fg(t.routing_local),
            ),
            Span::styled(" · ", t.muted()),
            Span::styled(
                format!("remote {}%", 100 - share),
                Style::default().fg(t.routing_remote),
            ),
        ]));
    }
    out
}
