//! The status line: local endpoint state, provider/model, context used,
//! session cost, the TUI session; on the right what keys do right now.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::protocol::{BotStatus, Origin};
use crate::surfaces::tui::app::{App, LocalState};
use crate::surfaces::tui::conversation::badge;
use crate::surfaces::tui::feeds::tokens;
use crate::surfaces::tui::wrap;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    let right = key_hints(app, area.width);
    let right_w = wrap::spans_width(&right);
    let room = usize::from(area.width).saturating_sub(right_w + 1);
    let left = fit_segments(app, segments(app), room);
    buf.set_line(area.x, area.y, &Line::from(left), area.width);
    if right_w <= usize::from(area.width) {
        let x = area.x + area.width - right_w as u16;
        buf.set_line(x, area.y, &Line::from(right), right_w as u16);
    }
}

fn separator(app: &App) -> Span<'static> {
    Span::styled(" │ ", Style::default().fg(app.theme.border))
}

/// The left side's segments in the order they are dropped when the line
/// is too narrow (last first).
fn segments(app: &App) -> Vec<Vec<Span<'static>>> {
    let t = &app.theme;
    let (session_cost, _) = app.costs();
    vec![
        vec![Span::styled(
            " egirl",
            Style::default()
                .fg(t.assistant)
                .add_modifier(Modifier::BOLD),
        )],
        link(app),
        agent(app),
        local_endpoint(app),
        model(app),
        vec![Span::styled(context_used(app), Style::default().fg(t.text))],
        vec![Span::styled(
            format!("${session_cost:.4}"),
            Style::default().fg(t.text),
        )],
        discord(app),
        telegram(app),
        mcp(app),
        target_session(app),
    ]
}

/// The agent the input goes to, in its color (nothing without agents).
fn agent(app: &App) -> Vec<Span<'static>> {
    let Some(agent) = app.current_agent() else {
        return Vec::new();
    };
    let color = app.theme.agent_color(app.agents.color_slot(agent));
    vec![
        Span::styled("agent ", app.theme.muted()),
        Span::styled(
            agent.to_string(),
            Style::default().fg(color).add_modifier(Modifier::BOLD),
        ),
    ]
}

/// The provider and model of the session's last turn; the pin instead
/// when the session has one (`/model`).
fn model(app: &App) -> Vec<Span<'static>> {
    let t = &app.theme;
    let s = &app.status;
    match app
        .sessions
        .get(&app.session)
        .and_then(|i| i.pinned.as_ref())
    {
        Some(pin) => vec![Span::styled(
            format!("pinned {pin}"),
            Style::default().fg(t.focus),
        )],
        None => vec![Span::styled(
            format!("{}/{}", s.provider, s.model),
            Style::default().fg(t.text),
        )],
    }
}

/// The segments that fit in `room`, separated, in order.
fn fit_segments(app: &App, segments: Vec<Vec<Span<'static>>>, room: usize) -> Vec<Span<'static>> {
    let mut left: Vec<Span<'static>> = Vec::new();
    // An empty segment (a bot this process does not run, no MCP servers)
    // takes no room.
    for (i, segment) in segments.into_iter().filter(|s| !s.is_empty()).enumerate() {
        let extra = if i > 0 { 3 } else { 0 };
        if wrap::spans_width(&left) + extra + wrap::spans_width(&segment) > room {
            break;
        }
        if i > 0 {
            left.push(separator(app));
        }
        left.extend(segment);
    }
    left
}

/// Attached: to which process, or that the connection is lost (nothing
/// in process). Second on the line: the last to be dropped for room.
fn link(app: &App) -> Vec<Span<'static>> {
    let t = &app.theme;
    let line = &app.link.line;
    let text = line.text();
    if text.is_empty() {
        return Vec::new();
    }
    let color = if line.is_trouble() {
        t.warning
    } else {
        t.routing_local
    };
    vec![Span::styled(text, Style::default().fg(color))]
}

/// The local endpoint and whether it answers, or how many replicas do.
fn local_endpoint(app: &App) -> Vec<Span<'static>> {
    let t = &app.theme;
    let s = &app.status;
    let endpoint = s
        .endpoint
        .trim_start_matches("http://")
        .trim_start_matches("https://")
        .trim_end_matches('/');
    let (state, color) = match s.local {
        LocalState::Unknown => ("", t.muted),
        LocalState::Up => (" up", t.routing_local),
        LocalState::Failing => (" failing", t.error),
    };
    // Replicas: how many of them answer, instead of one address.
    let (endpoint, state, color) = match s.replicas {
        Some((up, total)) => {
            let color = match up {
                0 => t.error,
                n if n < total => t.warning,
                _ => t.routing_local,
            };
            (format!("local {up}/{total}"), "", color)
        }
        None => (endpoint.to_string(), state, color),
    };
    vec![
        Span::styled("● ", Style::default().fg(color)),
        Span::styled(format!("{endpoint}{state}"), Style::default().fg(color)),
    ]
}

/// `ctx used/length (percent)`, or only what is used when the length is
/// unknown.
fn context_used(app: &App) -> String {
    let s = &app.status;
    let used = match s.context_estimated {
        true => format!("~{}", tokens(s.context_used)),
        false => tokens(s.context_used),
    };
    if s.context_length > 0 {
        format!(
            "ctx {used}/{} ({}%)",
            tokens(s.context_length),
            s.context_used * 100 / s.context_length
        )
    } else {
        format!("ctx {used}")
    }
}

/// Below this width the running tool's timer is left out of the status
/// line (the turn's stays), so the context meter and the cost still fit.
const TOOL_TIMER_WIDTH: u16 = 140;

/// The right side: what keys do right now.
fn key_hints(app: &App, width: u16) -> Vec<Span<'static>> {
    let t = &app.theme;
    if app.quit_armed() {
        return vec![Span::styled(
            "Ctrl+C again to quit ",
            Style::default().fg(t.warning).add_modifier(Modifier::BOLD),
        )];
    }
    let mut r = Vec::new();
    if let Some(working) = app.working_label(width >= TOOL_TIMER_WIDTH) {
        r.push(Span::styled(working, Style::default().fg(t.tool)));
        r.push(separator(app));
    }
    if !app.mouse_capture {
        r.push(Span::styled(
            "mouse off (F12)",
            Style::default().fg(t.warning),
        ));
        r.push(separator(app));
    }
    r.push(Span::styled("? help ", t.muted()));
    r
}

/// The session the input sends to; loud when it is not a TUI session
/// (the user is answering Discord or cron from the desk).
fn target_session(app: &App) -> Vec<Span<'static>> {
    let t = &app.theme;
    match app.sessions.get(&app.session).map(|s| &s.origin) {
        Some(origin) if *origin != Origin::Tui => vec![Span::styled(
            format!("→ {} · {}", badge(origin), app.session),
            Style::default().fg(t.warning).add_modifier(Modifier::BOLD),
        )],
        _ => vec![Span::styled(app.session.clone(), t.muted())],
    }
}

/// The Telegram bot's connection; nothing when this process runs none.
fn telegram(app: &App) -> Vec<Span<'static>> {
    let t = &app.theme;
    let (text, color) = match &app.status.telegram {
        BotStatus::Off => return Vec::new(),
        BotStatus::Connecting => ("telegram connecting…".to_string(), t.warning),
        BotStatus::Ready(_) => ("telegram ok".to_string(), t.routing_local),
        BotStatus::Reconnecting(_) => ("telegram reconnecting…".to_string(), t.warning),
        BotStatus::Stopped(reason) => (
            // Shorter than Discord's: both may be on the line.
            format!("telegram stopped: {}", wrap::truncate(reason, 32)),
            t.error,
        ),
    };
    vec![Span::styled(text, Style::default().fg(color))]
}

/// The Discord bot's connection, as the bridge reports it.
fn discord(app: &App) -> Vec<Span<'static>> {
    let t = &app.theme;
    let (text, color) = match &app.status.discord {
        BotStatus::Off => ("discord off".to_string(), t.muted),
        BotStatus::Connecting => ("discord connecting…".to_string(), t.warning),
        BotStatus::Ready(name) => (format!("discord ● {name}"), t.routing_local),
        BotStatus::Reconnecting(_) => ("discord reconnecting…".to_string(), t.warning),
        BotStatus::Stopped(reason) => (
            format!("discord stopped: {}", wrap::truncate(reason, 48)),
            t.error,
        ),
    };
    vec![Span::styled(text, Style::default().fg(color))]
}

/// `mcp 2/3`: servers ready of those configured (nothing without any).
fn mcp(app: &App) -> Vec<Span<'static>> {
    let t = &app.theme;
    let Some((ready, total)) = crate::surfaces::tui::mcp::counts(&app.status.mcp) else {
        return Vec::new();
    };
    let failed = app.status.mcp.iter().any(|s| s.state == "failed");
    let color = if ready == total {
        t.routing_local
    } else if failed {
        t.error
    } else {
        t.warning
    };
    vec![Span::styled(
        format!("mcp {ready}/{total}"),
        Style::default().fg(color),
    )]
}
