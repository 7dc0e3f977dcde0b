//! Routing: each decision live (the model it went to: local, local-fast
//! or remote; provider/model, confidence, reason; a failover's move) and
//! each escalation (from, to, trigger, reason).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::protocol::{Escalation, Target};
use crate::surfaces::tui::app::App;
use crate::surfaces::tui::conversation::badge;
use crate::surfaces::tui::feeds::RoutingRecord;
use crate::surfaces::tui::layout::Pane;
use crate::surfaces::tui::wrap;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    super::side(app, Pane::Routing, false, area, buf);
}

pub fn lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut out = Vec::new();
    for record in app.routing.iter() {
        match record {
            RoutingRecord::Decision { session, routing } => {
                let color = match routing.route.target() {
                    Target::Local => t.routing_local,
                    Target::Remote => t.routing_remote,
                };
                // The model it went to: `local-fast` beside `local`.
                let name = routing.route.name();
                let mut head = vec![
                    Span::styled(
                        format!("● {name}"),
                        Style::default().fg(color).add_modifier(Modifier::BOLD),
                    ),
                    Span::raw(" "),
                    Span::styled(
                        format!("{}/{}", routing.route.provider(), routing.model),
                        Style::default().fg(t.text),
                    ),
                    Span::styled(format!(" · {:.2}", routing.confidence), t.muted()),
                ];
                if let Some(origin) = other_origin(app, session) {
                    head.push(Span::styled(format!(" · {origin}"), t.muted()));
                }
                out.push(Line::from(head));
                out.extend(indented(&routing.reason, width, t.muted()));
            }
            RoutingRecord::Escalation {
                session,
                escalation,
            } => {
                let Escalation {
                    from,
                    to,
                    reason,
                    trigger,
                } = escalation;
                let mut head = vec![
                    Span::styled(
                        format!("↑ {from} → {to}"),
                        Style::default()
                            .fg(t.routing_remote)
                            .add_modifier(Modifier::BOLD),
                    ),
                    Span::styled(format!(" · {trigger}"), Style::default().fg(t.warning)),
                ];
                if let Some(origin) = other_origin(app, session) {
                    head.push(Span::styled(format!(" · {origin}"), t.muted()));
                }
                out.push(Line::from(head));
                out.extend(indented(reason, width, t.muted()));
            }
        }
    }
    out
}

/// The origin badge of a session other than the TUI's own.
fn other_origin(app: &App, session: &str) -> Option<String> {
    if session == app.session {
        return None;
    }
    app.sessions.get(session).map(|s| badge(&s.origin))
}

fn indented(text: &str, width: usize, style: Style) -> Vec<Line<'static>> {
    let pad = [Span::raw("  ")];
    let pieces = vec![(style, text.to_string())];
    wrap::into_lines(wrap::wrap(&pieces, width.saturating_sub(2)), &pad, &pad)
}
