//! Automatic compaction that cannot get the prompt under `compact_at`:
//! the turns kept verbatim (`keep_recent` and the current one) are alone
//! larger than that. Compacting again on the next turn would summarize
//! one more turn and land above it again: two extra model requests a
//! turn for nothing. So it pauses until the prompt has grown by a quarter
//! of the window (then a compaction summarizes several turns at once),
//! and the user hears once what would make room.

pub(super) use super::super::summary::compaction_retry_at as retry_at;

/// What the user is told when automatic compaction pauses.
pub(super) fn notice(after_tokens: u64, threshold: u64, keep_recent: usize, again: u64) -> String {
    format!(
        "compaction cannot bring this session under [agent] compact_at: {after_tokens} tokens remain after it, the threshold is {threshold} \
         (the {keep_recent} most recent turn(s) it keeps verbatim are that large). Automatic compaction pauses until the prompt reaches {again} tokens; \
         older turns are left out of the window meanwhile. To make room now: /compact (with a lower [agent] keep_recent), /new or /clear to start over, \
         or raise [agent] compact_at."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_only_above_the_threshold_and_for_a_quarter_window() {
        assert_eq!(retry_at(800, 1000, 8192), None);
        assert_eq!(retry_at(1000, 1000, 8192), None);
        assert_eq!(retry_at(1500, 1000, 8192), Some(1500 + 2048));
        let text = notice(1500, 1000, 2, 3548);
        assert!(text.contains("/compact") && text.contains("/new") && text.contains("compact_at"));
    }
}
