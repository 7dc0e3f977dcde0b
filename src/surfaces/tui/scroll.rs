//! Scrolling a column of lines that grows at the bottom: pinned to the
//! bottom until the user scrolls up; while scrolled up the view stays put
//! as lines arrive, and `unseen` says there is something new below.

use std::cell::Cell;

#[derive(Debug, Default)]
pub struct Scroll {
    /// First line shown; `None` follows the bottom.
    top: Option<usize>,
    /// New content arrived below while scrolled up.
    pub unseen: bool,
    /// (total lines, viewport height) at the last draw. Key handling needs
    /// them to page, and only the draw knows the width that fixes them;
    /// recording them is the one write a draw makes.
    view: Cell<(usize, usize)>,
}

impl Scroll {
    /// Shows the first lines rather than the newest (summaries, not feeds).
    pub fn at_top() -> Self {
        Self {
            top: Some(0),
            ..Self::default()
        }
    }

    pub fn is_pinned(&self) -> bool {
        self.top.is_none()
    }

    /// The first line to show for `total` lines in `height` rows; records
    /// both for the next key press.
    pub fn first_line(&self, total: usize, height: usize) -> usize {
        self.view.set((total, height));
        let bottom = total.saturating_sub(height);
        self.top.map_or(bottom, |t| t.min(bottom))
    }

    /// Corrects the total recorded at the last draw (a pane that drew
    /// without knowing it measures it before scrolling).
    pub fn set_total(&self, total: usize) {
        let (_, height) = self.view.get();
        self.view.set((total, height));
    }

    pub fn content_added(&mut self) {
        if self.top.is_some() {
            self.unseen = true;
        }
    }

    pub fn up(&mut self, n: usize) {
        let (total, height) = self.view.get();
        let current = self.top.unwrap_or(total.saturating_sub(height));
        let top = current.min(total.saturating_sub(height)).saturating_sub(n);
        // Nothing to scroll when everything fits: stay pinned.
        if total > height {
            self.top = Some(top);
        }
    }

    pub fn down(&mut self, n: usize) {
        let (total, height) = self.view.get();
        if let Some(top) = self.top {
            let top = top + n;
            if top + height >= total {
                self.end();
            } else {
                self.top = Some(top);
            }
        }
    }

    pub fn page_up(&mut self) {
        self.up(self.page());
    }

    pub fn page_down(&mut self) {
        self.down(self.page());
    }

    pub fn home(&mut self) {
        let (total, height) = self.view.get();
        if total > height {
            self.top = Some(0);
        }
    }

    /// Scrolls so that `line` shows a third of the way down (search jumps).
    pub fn show(&mut self, line: usize) {
        let (total, height) = self.view.get();
        if total <= height {
            return;
        }
        let bottom = total - height;
        let top = line.saturating_sub(height / 3).min(bottom);
        if top == bottom {
            self.end();
        } else {
            self.top = Some(top);
        }
    }

    /// Scrolls so that `line` shows, unless it already does.
    pub fn reveal(&mut self, line: usize) {
        let (total, height) = self.view.get();
        let top = self
            .top
            .unwrap_or(total.saturating_sub(height))
            .min(total.saturating_sub(height));
        if !(top..top + height).contains(&line) {
            self.show(line);
        }
    }

    pub fn end(&mut self) {
        self.top = None;
        self.unseen = false;
    }

    fn page(&self) -> usize {
        self.view.get().1.saturating_sub(1).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_scrolls_and_repins() {
        let mut s = Scroll::default();
        assert_eq!(s.first_line(100, 10), 90);
        s.page_up();
        assert_eq!(s.first_line(100, 10), 81);
        // New lines below do not move the view; they are flagged.
        s.content_added();
        assert_eq!(s.first_line(120, 10), 81);
        assert!(s.unseen && !s.is_pinned());
        s.down(1000);
        assert!(s.is_pinned() && !s.unseen);
        assert_eq!(s.first_line(120, 10), 110);
        s.home();
        assert_eq!(s.first_line(120, 10), 0);
        s.end();
        assert_eq!(s.first_line(120, 10), 110);
    }

    #[test]
    fn reveal_moves_only_when_the_line_is_out_of_view() {
        let mut s = Scroll::default();
        s.first_line(100, 10);
        s.reveal(95);
        assert!(s.is_pinned());
        s.reveal(30);
        assert_eq!(s.first_line(100, 10), 27);
        s.reveal(33);
        assert_eq!(s.first_line(100, 10), 27);
    }

    #[test]
    fn short_content_never_unpins() {
        let mut s = Scroll::default();
        s.first_line(5, 10);
        s.page_up();
        s.home();
        assert!(s.is_pinned());
    }
}
