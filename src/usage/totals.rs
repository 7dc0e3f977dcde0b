//! Sums over usage lines: what `egirl stats` prints per day, model,
//! session and agent, and the TUI's `/stats` per agent.

use serde::Serialize;

use super::usage_log::UsageLine;

/// Sums over a group of requests.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    pub requests: u64,
    pub local_requests: u64,
    pub remote_requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    /// Share of requests the local model answered (0 to 1).
    pub local_share: f64,
}

impl Totals {
    pub fn add(&mut self, line: &UsageLine) {
        self.requests += 1;
        if line.local {
            self.local_requests += 1;
        } else {
            self.remote_requests += 1;
        }
        self.input_tokens += line.input_tokens;
        self.output_tokens += line.output_tokens;
        self.cached_tokens += line.cached_tokens;
        self.cost_usd += line.cost_usd;
        self.local_share = self.local_requests as f64 / self.requests as f64;
    }

    /// The totals of `lines`.
    pub fn of<'a>(lines: impl IntoIterator<Item = &'a UsageLine>) -> Self {
        let mut totals = Totals::default();
        for line in lines {
            totals.add(line);
        }
        totals
    }
}
