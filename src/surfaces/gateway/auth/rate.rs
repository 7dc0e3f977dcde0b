//! Pairing attempts per minute, for the whole listener and per peer
//! address: a code has 10^8 values, and a client that may guess without
//! limit would find one within its 5 minutes. Every attempt counts, right
//! or wrong, so the attempt after the limit is refused even with the right
//! code.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Attempts allowed in any minute, per listener and per peer.
pub const ATTEMPTS_PER_MINUTE: usize = 5;

const WINDOW: Duration = Duration::from_secs(60);

#[derive(Default)]
pub struct PairingLimit {
    recent: Mutex<Recent>,
}

#[derive(Default)]
struct Recent {
    all: VecDeque<Instant>,
    by_peer: HashMap<IpAddr, VecDeque<Instant>>,
}

impl PairingLimit {
    /// Counts an attempt from `peer` now; false when it is over a limit
    /// (the attempt is then refused unseen).
    pub fn allow(&self, peer: Option<IpAddr>) -> bool {
        self.allow_at(peer, Instant::now())
    }

    fn allow_at(&self, peer: Option<IpAddr>, now: Instant) -> bool {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let recent = &mut *recent;
        forget_before(&mut recent.all, now);
        recent.by_peer.retain(|_, times| {
            forget_before(times, now);
            !times.is_empty()
        });
        let peer_times = peer.map(|ip| recent.by_peer.entry(ip).or_default());
        let peer_full = peer_times
            .as_ref()
            .is_some_and(|t| t.len() >= ATTEMPTS_PER_MINUTE);
        if peer_full || recent.all.len() >= ATTEMPTS_PER_MINUTE {
            return false;
        }
        if let Some(times) = peer_times {
            times.push_back(now);
        }
        recent.all.push_back(now);
        true
    }
}

fn forget_before(times: &mut VecDeque<Instant>, now: Instant) {
    while times
        .front()
        .is_some_and(|t| now.duration_since(*t) >= WINDOW)
    {
        times.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sixth_attempt_in_a_minute_is_refused() {
        let limit = PairingLimit::default();
        let peer = Some("10.0.0.2".parse().unwrap());
        let start = Instant::now();
        for _ in 0..ATTEMPTS_PER_MINUTE {
            assert!(limit.allow_at(peer, start));
        }
        assert!(!limit.allow_at(peer, start));
        // The listener's own limit holds for another peer too.
        assert!(!limit.allow_at(Some("10.0.0.3".parse().unwrap()), start));
        assert!(limit.allow_at(peer, start + WINDOW));
    }
}
