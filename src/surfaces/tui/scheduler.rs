//! The frame scheduler: a redraw is a request, not a timer. Requests made
//! between frames coalesce into one draw, draws are at least
//! `min_interval` apart (the frame cap), and with no request there is no
//! deadline at all: an idle TUI never wakes up to redraw.

use std::time::{Duration, Instant};

/// About 60 frames per second.
pub const FRAME_INTERVAL: Duration = Duration::from_micros(16_667);

#[derive(Debug)]
pub struct FrameScheduler {
    min_interval: Duration,
    pending: bool,
    last_draw: Option<Instant>,
}

impl FrameScheduler {
    pub fn new(min_interval: Duration) -> Self {
        Self {
            min_interval,
            pending: false,
            last_draw: None,
        }
    }

    /// Something changed on screen.
    pub fn request(&mut self) {
        self.pending = true;
    }

    /// When to draw next: `None` when nothing is pending.
    pub fn deadline(&self, now: Instant) -> Option<Instant> {
        if !self.pending {
            return None;
        }
        Some(match self.last_draw {
            Some(t) => (t + self.min_interval).max(now),
            None => now,
        })
    }

    /// Call after drawing.
    pub fn drawn(&mut self, now: Instant) {
        self.pending = false;
        self.last_draw = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_means_no_deadline() {
        let s = FrameScheduler::new(FRAME_INTERVAL);
        assert_eq!(s.deadline(Instant::now()), None);
    }

    #[test]
    fn requests_coalesce_and_frames_are_capped() {
        let start = Instant::now();
        let mut s = FrameScheduler::new(FRAME_INTERVAL);
        let mut draws = 0;
        // One request every millisecond for a simulated second (a delta
        // storm): draw whenever the deadline has passed.
        for ms in 0..1000u64 {
            let now = start + Duration::from_millis(ms);
            s.request();
            if s.deadline(now).is_some_and(|d| d <= now) {
                s.drawn(now);
                draws += 1;
            }
        }
        assert!((55..=61).contains(&draws), "{draws} draws");
        // Quiet afterwards: nothing more is scheduled.
        let later = start + Duration::from_secs(2);
        s.drawn(later);
        assert_eq!(s.deadline(later), None);
    }
}
