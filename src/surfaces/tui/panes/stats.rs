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

/// With agents, this run's cost per agent (its sessions' costs), each
/// in its color; nothing without agents.
fn agent_costs(app: &App) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut costs: std::collections::BTreeMap<&str, f64> = Default::default();
    for (session, cost) in &app.stats.session_cost {
        if let Some((agent, _)) = app.agents.tag(session) {
            *costs.entry(agent).or_default() += cost;
        }
    }
    app.agents
        .names()
        .iter()
        .filter_map(|name| Some((name, *costs.get(name.as_str())?)))
        .map(|(name, cost)| {
            let color = t.agent_color(app.agents.color_slot(name));
            Line::from(vec![
                Span::styled("agent ", t.muted()),
                Span::styled(name.clone(), Style::default().fg(color)),
                Span::styled(format!(" ${cost:.4}"), Style::default().fg(t.text)),
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
    out.extend(agent_costs(app));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::wire::SpendPeriod;
    use crate::surfaces::tui::theme::Theme;

    fn app_with(budget: Vec<SpendPeriod>) -> App {
        let mut app = App::new(crate::surfaces::tui::app::AppOptions {
            session: "s".into(),
            theme: Theme::default(),
            theme_dirs: Vec::new(),
            model: "m".into(),
            endpoint: "http://127.0.0.1:1".into(),
            context_length: 1024,
        });
        app.status.budget = budget;
        app
    }

    fn period(name: &str, spent_usd: f64, cap_usd: f64) -> SpendPeriod {
        SpendPeriod {
            name: name.into(),
            key: "k".into(),
            spent_usd,
            cap_usd,
        }
    }

    fn text(app: &App) -> Vec<String> {
        lines(app, 60)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn shows_spend_against_each_cap_even_before_any_usage() {
        let app = app_with(vec![period("day", 1.5, 2.0), period("month", 30.0, 30.0)]);
        let shown = text(&app);
        assert_eq!(shown[0], "budget day $1.50 of $2.00");
        assert_eq!(
            shown[1],
            "budget month $30.00 of $30.00 · spent: local only"
        );
        assert!(text(&app_with(Vec::new())).is_empty());
    }

    #[test]
    fn remote_and_escalate_say_the_budget_is_spent_and_send_nothing() {
        let mut app = app_with(vec![period("day", 2.0, 2.0)]);
        for command in ["/remote", "/escalate"] {
            let effects = crate::surfaces::tui::commands::run(&mut app, command);
            assert!(effects.is_empty(), "{command} sent something");
            let said = app
                .conversation
                .entries
                .last()
                .map(|e| e.text.clone())
                .unwrap_or_default();
            assert_eq!(
                said,
                format!(
                    "{command}: the remote budget is spent (budget: day 2.00/2.00 USD); nothing sent"
                )
            );
        }
        let mut app = app_with(vec![period("day", 1.0, 2.0)]);
        assert!(!crate::surfaces::tui::commands::run(&mut app, "/remote").is_empty());
    }
}
