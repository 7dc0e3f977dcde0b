//! Which replica a session lives on: rendezvous (highest-random-weight)
//! hashing of the session id over the endpoints' URLs.
//!
//! Placement is a function of the session id and the configured endpoints
//! alone, so separate `egirl` processes, a restart and the daemon agree on it
//! without sharing state (a slot file saved at shutdown is restored on the
//! endpoint it was saved to). Each (session, endpoint) pair gets a weight; the
//! session goes to the healthy endpoint of highest weight. When an endpoint
//! is down only its sessions move (each to its next-highest), and when it
//! answers again they come back.
//!
//! The weight is the first 8 bytes of SHA-256 over the endpoint, a zero byte
//! and the session id: stable across processes, builds and platforms (unlike
//! std's randomly seeded hasher), and well spread.

use sha2::{Digest, Sha256};

/// The weight of placing `session` on `endpoint`.
pub fn weight(session: &str, endpoint: &str) -> u64 {
    let mut hasher = Sha256::new();
    hasher.update(endpoint.as_bytes());
    hasher.update([0u8]);
    hasher.update(session.as_bytes());
    let digest = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// The index of the endpoint `session` lives on among those `healthy`
/// says answer; `None` when none does. Ties (never seen in practice) go
/// to the first.
pub fn home<S: AsRef<str>>(
    session: &str,
    endpoints: &[S],
    healthy: impl Fn(usize) -> bool,
) -> Option<usize> {
    endpoints
        .iter()
        .enumerate()
        .filter(|(i, _)| healthy(*i))
        .map(|(i, e)| (weight(session, e.as_ref()), std::cmp::Reverse(i)))
        .max()
        .map(|(_, std::cmp::Reverse(i))| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: [&str; 2] = ["http://gpu1:8080", "http://gpu2:8080"];
    const THREE: [&str; 3] = ["http://gpu1:8080", "http://gpu2:8080", "http://gpu3:8080"];

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("session-{i}")).collect()
    }

    fn counts(endpoints: &[&str], sessions: &[String]) -> Vec<usize> {
        let mut counts = vec![0; endpoints.len()];
        for s in sessions {
            counts[home(s, endpoints, |_| true).unwrap()] += 1;
        }
        counts
    }

    #[test]
    fn weights_are_stable_values() {
        // Pinned: a change here moves every session of every user.
        assert_eq!(
            weight("s1", "http://gpu1:8080"),
            weight("s1", "http://gpu1:8080")
        );
        assert_eq!(weight("", ""), 0x6e34_0b9c_ffb3_7a98);
        assert_eq!(weight("abc", "x"), 0x7899_406e_7ba3_0b39);
        assert_ne!(
            weight("s1", "http://gpu1:8080"),
            weight("s1", "http://gpu2:8080")
        );
        // The separator keeps (endpoint, session) pairs apart.
        assert_ne!(weight("b", "a"), weight("", "ab"));
    }

    #[test]
    fn a_session_has_one_home_whatever_the_order_of_asking() {
        for s in ids(50) {
            let first = home(&s, &THREE, |_| true);
            assert_eq!(first, home(&s, &THREE, |_| true));
            // Listing the endpoints in another order names the same URL.
            let reversed: Vec<&str> = THREE.iter().rev().copied().collect();
            let other = home(&s, &reversed, |_| true).map(|i| reversed[i]);
            assert_eq!(first.map(|i| THREE[i]), other);
        }
    }

    #[test]
    fn six_hundred_sessions_spread_over_two_and_three_endpoints() {
        let sessions = ids(600);
        // Within 15% of an even share (a binomial's spread is ~4%).
        for c in counts(&TWO, &sessions) {
            assert!((255..=345).contains(&c), "{c} of 600 on one of two");
        }
        for c in counts(&THREE, &sessions) {
            assert!((170..=230).contains(&c), "{c} of 600 on one of three");
        }
    }

    #[test]
    fn removing_an_endpoint_moves_only_its_sessions_and_they_come_back() {
        let sessions = ids(600);
        let down = 1;
        let mut moved = 0;
        for s in &sessions {
            let before = home(s, &THREE, |_| true).unwrap();
            let after = home(s, &THREE, |i| i != down).unwrap();
            if before == down {
                assert_ne!(after, down);
                moved += 1;
            } else {
                assert_eq!(before, after, "{s} moved though its endpoint stayed up");
            }
        }
        assert!((170..=230).contains(&moved), "{moved}");
        // The moved sessions spread over both survivors.
        let survivors: Vec<usize> = sessions
            .iter()
            .filter(|s| home(s, &THREE, |_| true) == Some(down))
            .map(|s| home(s, &THREE, |i| i != down).unwrap())
            .collect();
        assert!(survivors.contains(&0) && survivors.contains(&2));
    }

    #[test]
    fn nothing_healthy_is_no_home() {
        assert_eq!(home("s1", &TWO, |_| false), None);
        assert_eq!(home::<&str>("s1", &[], |_| true), None);
    }
}
