//! One pure function from the terminal area to named rectangles.
//!
//! At 100x30 and up: the conversation large on the left with the input
//! below it, routing / tools / memory / stats stacked on the right. Below
//! that the side panes fold into one tabbed pane: in a right column when
//! the terminal is wide but short, else in a strip under the conversation;
//! on a tiny terminal they hide (a zoom key still shows each).

use ratatui::layout::{Constraint, Layout, Rect};

/// The panes that can be focused and zoomed (Alt+1..5, F1..F5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pane {
    Conversation,
    Routing,
    Tools,
    Memory,
    Stats,
}

impl Pane {
    pub const ALL: [Pane; 5] = [
        Pane::Conversation,
        Pane::Routing,
        Pane::Tools,
        Pane::Memory,
        Pane::Stats,
    ];
    pub const SIDE: [Pane; 4] = [Pane::Routing, Pane::Tools, Pane::Memory, Pane::Stats];

    pub fn title(self) -> &'static str {
        match self {
            Pane::Conversation => "Conversation",
            Pane::Routing => "Routing",
            Pane::Tools => "Tools",
            Pane::Memory => "Memory",
            Pane::Stats => "Stats",
        }
    }

    /// 1-based number, as on the zoom keys.
    pub fn number(self) -> usize {
        Pane::ALL.iter().position(|p| *p == self).unwrap_or(0) + 1
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutParams {
    /// Rows of text in the input box (the border adds two).
    pub input_rows: u16,
    pub zoom: Option<Pane>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Each side pane in its own rectangle, top to bottom.
    Stacked {
        routing: Rect,
        tools: Rect,
        memory: Rect,
        stats: Rect,
    },
    /// One pane at a time, chosen by tab.
    Tabs(Rect),
    /// A side pane zoomed to the whole main area.
    Zoomed(Pane, Rect),
    Hidden,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rects {
    /// Zero-sized when a side pane is zoomed.
    pub conversation: Rect,
    pub input: Rect,
    pub status: Rect,
    pub side: Side,
}

/// Wide and tall enough for all five panes at once.
pub const FULL_WIDTH: u16 = 100;
pub const FULL_HEIGHT: u16 = 30;

/// Width of the side column next to the conversation, when there is one.
fn side_width(total: u16) -> u16 {
    (total * 35 / 100).clamp(34, 60)
}

/// Width of the input box for a terminal `width` columns wide (the side
/// column takes its share on wide terminals unless a pane is zoomed).
pub fn input_width(width: u16, zoom: Option<Pane>) -> u16 {
    if width >= FULL_WIDTH && zoom.is_none() {
        width - side_width(width)
    } else {
        width
    }
}

pub fn layout(area: Rect, p: &LayoutParams) -> Rects {
    let [main, status] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
    // The input keeps at least one text row and leaves the conversation
    // at least three.
    let input_h = (p.input_rows.max(1) + 2).min(main.height.saturating_sub(3).max(3));
    let [above, input] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(input_h)]).areas(main);

    match p.zoom {
        Some(Pane::Conversation) => {
            return Rects {
                conversation: above,
                input,
                status,
                side: Side::Hidden,
            };
        }
        Some(pane) => {
            return Rects {
                conversation: Rect::new(above.x, above.y, 0, 0),
                input,
                status,
                side: Side::Zoomed(pane, above),
            };
        }
        None => {}
    }

    if area.width >= FULL_WIDTH && area.height >= FULL_HEIGHT {
        let side_w = side_width(area.width);
        let [left, right] =
            Layout::horizontal([Constraint::Min(0), Constraint::Length(side_w)]).areas(main);
        let [conversation, input] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(input_h)]).areas(left);
        let [routing, tools, memory, stats] = Layout::vertical([
            Constraint::Percentage(25),
            Constraint::Percentage(35),
            Constraint::Percentage(20),
            Constraint::Percentage(20),
        ])
        .areas(right);
        return Rects {
            conversation,
            input,
            status,
            side: Side::Stacked {
                routing,
                tools,
                memory,
                stats,
            },
        };
    }
    if area.width >= FULL_WIDTH {
        // Wide but short: a tabbed right column.
        let side_w = side_width(area.width);
        let [left, right] =
            Layout::horizontal([Constraint::Min(0), Constraint::Length(side_w)]).areas(main);
        let [conversation, input] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(input_h)]).areas(left);
        return Rects {
            conversation,
            input,
            status,
            side: Side::Tabs(right),
        };
    }
    if above.height >= 14 {
        // Narrow: a tabbed strip under the conversation.
        let strip = (above.height / 3).clamp(5, 10);
        let [conversation, tabs] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(strip)]).areas(above);
        return Rects {
            conversation,
            input,
            status,
            side: Side::Tabs(tabs),
        };
    }
    Rects {
        conversation: above,
        input,
        status,
        side: Side::Hidden,
    }
}

impl Rects {
    /// Where a pane is drawn, if it is visible.
    pub fn pane(&self, pane: Pane, tab: Pane) -> Option<Rect> {
        if pane == Pane::Conversation {
            return (self.conversation.area() > 0).then_some(self.conversation);
        }
        match self.side {
            Side::Stacked {
                routing,
                tools,
                memory,
                stats,
            } => Some(match pane {
                Pane::Routing => routing,
                Pane::Tools => tools,
                Pane::Memory => memory,
                _ => stats,
            }),
            Side::Tabs(r) => (pane == tab).then_some(r),
            Side::Zoomed(p, r) => (p == pane).then_some(r),
            Side::Hidden => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: LayoutParams = LayoutParams {
        input_rows: 1,
        zoom: None,
    };

    fn covers_without_overlap(r: &Rects, area: Rect) {
        let mut rects = vec![r.conversation, r.input, r.status];
        match r.side {
            Side::Stacked {
                routing,
                tools,
                memory,
                stats,
            } => rects.extend([routing, tools, memory, stats]),
            Side::Tabs(t) | Side::Zoomed(_, t) => rects.push(t),
            Side::Hidden => {}
        }
        let sum: u32 = rects.iter().map(|r| r.area()).sum();
        assert_eq!(sum, area.area(), "{r:?}");
        for (i, a) in rects.iter().enumerate() {
            assert!(area.contains(a.as_position()) || a.area() == 0);
            for b in &rects[i + 1..] {
                assert!(
                    !a.intersects(*b) || a.area() == 0 || b.area() == 0,
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn wide_terminals_stack_the_side_panes() {
        let area = Rect::new(0, 0, 160, 48);
        let r = layout(area, &P);
        assert!(matches!(r.side, Side::Stacked { .. }));
        assert!(r.conversation.width > 90);
        assert_eq!(r.status, Rect::new(0, 47, 160, 1));
        assert_eq!(r.input.height, 3);
        covers_without_overlap(&r, area);
    }

    #[test]
    fn small_terminals_fold_side_panes_into_tabs_then_hide_them() {
        for (w, h) in [(80, 24), (120, 24), (99, 40)] {
            let area = Rect::new(0, 0, w, h);
            let r = layout(area, &P);
            assert!(matches!(r.side, Side::Tabs(_)), "{w}x{h}");
            covers_without_overlap(&r, area);
        }
        let tiny = Rect::new(0, 0, 40, 12);
        let r = layout(tiny, &P);
        assert_eq!(r.side, Side::Hidden);
        covers_without_overlap(&r, tiny);
    }

    #[test]
    fn zoom_gives_a_pane_the_main_area_and_the_input_grows() {
        let area = Rect::new(0, 0, 120, 40);
        let zoom = |pane| LayoutParams {
            input_rows: 4,
            zoom: Some(pane),
        };
        let r = layout(area, &zoom(Pane::Tools));
        assert_eq!(r.side, Side::Zoomed(Pane::Tools, Rect::new(0, 0, 120, 33)));
        assert_eq!(r.input.height, 6);
        assert_eq!(r.pane(Pane::Routing, Pane::Routing), None);
        let r = layout(area, &zoom(Pane::Conversation));
        assert_eq!(r.conversation.width, 120);
        covers_without_overlap(&r, area);
    }
}
