//! The proactive side against the fake llama-server: heartbeat ticks
//! (empty checklist, HEARTBEAT_OK, active hours, a busy agent) and cron
//! runs (missed while down, persistence, retries, one-shots).

mod cron;
mod heartbeat;
mod paused;

use std::time::Duration;

use crate::support::fake_llama::FakeLlama;

pub const CHAT: &str = "/v1/chat/completions";

/// Waits (up to 15 s) until the fake has received `n` chat requests.
pub async fn wait_requests(fake: &FakeLlama, n: usize) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while fake.hits(CHAT) < n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "expected {n} chat requests, got {}",
            fake.hits(CHAT)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
