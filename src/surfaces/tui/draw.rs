//! `draw`: the whole screen from the state, read-only (television's
//! pure `draw`). The only writes are memo caches and the scroll and
//! layout metrics key handling reads back.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::app::{App, Overlay};
use super::layout::{Pane, Side, layout};
use super::panes;

pub fn draw(app: &App, frame: &mut Frame<'_>) {
    let area = frame.area();
    render(app, area, frame.buffer_mut());
}

/// Renders into any buffer (tests and benchmarks use this directly).
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let rects = layout(area, &app.layout_params(area.width));
    app.rects.set(Some(rects));
    panes::conversation::render(app, rects.conversation, buf);
    match rects.side {
        Side::Stacked {
            routing,
            tools,
            memory,
            stats,
        } => {
            panes::routing::render(app, routing, buf);
            panes::tools::render(app, tools, buf);
            panes::memory::render(app, memory, buf);
            panes::stats::render(app, stats, buf);
        }
        Side::Tabs(r) => panes::side(app, app.side_tab, true, r, buf),
        Side::Zoomed(pane, r) if pane != Pane::Conversation => {
            panes::side(app, pane, false, r, buf)
        }
        Side::Zoomed(..) | Side::Hidden => {}
    }
    panes::input::render(app, rects.input, buf);
    panes::status::render(app, rects.status, buf);
    if app.approvals.current().is_some() {
        panes::approval::render(app, area, buf);
    } else if let Some(picker) = &app.rewind {
        panes::rewind::render(app, picker, area, buf);
    } else if let Some(overlay) = &app.approval_rules {
        panes::approval_rules::render(app, overlay, area, buf);
    } else if let Some(picker) = &app.models {
        panes::models::render(app, picker, area, buf);
    } else if app.overlay == Some(Overlay::Help) {
        panes::help::render(app, area, buf);
    } else if app.overlay == Some(Overlay::Sessions) {
        panes::sessions::render(app, area, buf);
    } else if app.overlay == Some(Overlay::Agents) {
        panes::agents::render(app, area, buf);
    }
}
