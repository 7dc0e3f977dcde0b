//! A `TestBackend` that notes each frame the loop flushes and when a
//! marker text first appears in one after the last delta was sent. The
//! notes are shared with the bench's other threads through `Watch`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ratatui::backend::{Backend, ClearType, TestBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

#[derive(Default)]
pub struct Watch {
    frames: AtomicU64,
    frame_times: Mutex<Vec<Instant>>,
    last_sent: Mutex<Option<Instant>>,
    seen_at: Mutex<Option<Instant>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Watch {
    pub fn frames(&self) -> u64 {
        self.frames.load(Ordering::Relaxed)
    }

    pub fn frame_times(&self) -> Vec<Instant> {
        lock(&self.frame_times).clone()
    }

    /// The last delta went into the channel now: look for the marker.
    pub fn last_sent(&self, at: Instant) {
        *lock(&self.last_sent) = Some(at);
    }

    pub fn seen(&self) -> bool {
        lock(&self.seen_at).is_some()
    }

    /// From sending the last delta to the flush of the first frame with
    /// the marker on screen.
    pub fn latency(&self) -> Option<Duration> {
        let sent = (*lock(&self.last_sent))?;
        let seen = (*lock(&self.seen_at))?;
        Some(seen.saturating_duration_since(sent))
    }
}

pub struct Probe {
    inner: TestBackend,
    marker: String,
    watch: Arc<Watch>,
}

impl Probe {
    pub fn new(width: u16, height: u16, marker: &str) -> Self {
        Self {
            inner: TestBackend::new(width, height),
            marker: marker.to_string(),
            watch: Arc::default(),
        }
    }

    pub fn watch(&self) -> Arc<Watch> {
        self.watch.clone()
    }

    fn screen_has_marker(&self) -> bool {
        let buf = self.inner.buffer();
        let area = buf.area;
        (area.top()..area.bottom()).any(|y| {
            let row: String = (area.left()..area.right())
                .map(|x| buf[(x, y)].symbol())
                .collect();
            row.contains(&self.marker)
        })
    }
}

impl Backend for Probe {
    type Error = <TestBackend as Backend>::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }

    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }

    /// `Terminal::draw` ends each frame with exactly one flush.
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()?;
        let now = Instant::now();
        self.watch.frames.fetch_add(1, Ordering::Relaxed);
        lock(&self.watch.frame_times).push(now);
        let looking = lock(&self.watch.last_sent).is_some() && !self.watch.seen();
        if looking && self.screen_has_marker() {
            *lock(&self.watch.seen_at) = Some(now);
        }
        Ok(())
    }
}
