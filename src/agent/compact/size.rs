//! Whether a turn's prompt is surely under the compaction bar without the
//! server counting it (`/apply-template` + `/tokenize`, a round trip that
//! would cost more than everything else a turn adds). The server counts
//! only near the bar, or when nothing cheaper can tell.

use super::super::prompt::{Fixed, estimate_tokens};
use super::super::session::Session;
use super::super::shared::Shared;

/// Below this share of the bar, the last count plus an estimate of the
/// new messages (about four bytes a token) is trusted; at or above it the
/// server counts the whole prompt.
const TRUSTED_PERCENT: u64 = 90;

/// True when the prompt of `fixed` and `history[start..]` holds at most
/// `bar` tokens by a bound that needs no server: its bytes (no token is
/// shorter than a byte), or the server's count of the session's last
/// prompt (`Counted`, when it held the same fixed parts and window start)
/// plus the new messages estimated, under `TRUSTED_PERCENT` of the bar.
/// False: the caller asks the server.
pub(super) fn surely_below(
    shared: &Shared,
    session: &Session,
    fixed: &Fixed,
    start: usize,
    bar: u64,
) -> bool {
    let history = &session.history;
    let image_tokens = shared.config.images.local_tokens;
    if fixed.bound_with(&history[start..], image_tokens) <= bar {
        return true;
    }
    let base = session.counted.as_ref();
    let Some(base) = base.and_then(|c| c.base_for(fixed.fingerprint, start, history.len())) else {
        return false;
    };
    let new: u64 = history[base.to..]
        .iter()
        .map(|m| estimate_tokens(m) + m.images.len() as u64 * image_tokens)
        .sum();
    (base.tokens + new) * 100 < bar * TRUSTED_PERCENT
}
