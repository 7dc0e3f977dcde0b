//! The context meter: the prompt the session's next request would send,
//! of the window it goes into. Live, each turn's `usage` says it (the
//! core counts the prompt and the reply as kept, reasoning left out).
//! For a session read from its transcript (resumed, picked, forked) the
//! last reply's recorded size or the last compaction's result is known,
//! and what came after it is estimated; a transcript older than those
//! records is estimated whole. An estimate shows as `~`.

use super::app::App;
use crate::protocol::{ContextUse, Role};
use crate::sessions::Record;

/// The system prompt and the tool list when nothing says better
/// (src/agent/context.rs keeps them under 1,500 tokens).
pub const FIXED_ESTIMATE: u64 = 1_500;

/// Template tokens around each message (`<|im_start|>role` … `<|im_end|>`).
const MESSAGE_OVERHEAD: u64 = 6;

/// What the meter shows for one session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meter {
    pub used: u64,
    /// The window, when a record said it.
    pub length: Option<u64>,
    /// Some of `used` is an estimate.
    pub estimated: bool,
}

/// About four bytes a token, as the core estimates without its server.
fn estimate(record: &Record) -> u64 {
    let m = &record.message;
    let calls: usize = m
        .tool_calls
        .iter()
        .map(|c| c.name.len() + c.arguments.to_string().len() + 24)
        .sum();
    ((m.content.len() + calls) as u64).div_ceil(4) + MESSAGE_OVERHEAD
}

/// The meter of a session whose live records are `records`.
pub fn from_records(records: &[Record]) -> Meter {
    // The last known size, and what came after it.
    let mut known: Option<u64> = None;
    let mut length = None;
    let mut after = 0;
    for record in records {
        if let Some(c) = &record.compaction {
            known = Some(c.after_tokens);
            after = 0;
            continue;
        }
        if let Some(ContextUse { used, length: n }) = record.details.context {
            known = Some(used);
            length = Some(n);
            after = 0;
            continue;
        }
        if record.message.role != Role::System {
            after += estimate(record);
        }
    }
    match known {
        Some(used) => Meter {
            used: used + after,
            length,
            estimated: after > 0,
        },
        None if records.is_empty() => Meter::default(),
        None => Meter {
            used: FIXED_ESTIMATE + after,
            length,
            estimated: true,
        },
    }
}

impl App {
    /// Shows `meter` (the input's session's).
    pub fn show_meter(&mut self, meter: Meter) {
        self.status.context_used = meter.used;
        self.status.context_estimated = meter.estimated;
        if let Some(length) = meter.length.filter(|&n| n > 0) {
            self.status.context_length = length;
        }
    }

    /// The meter of `session` read from its transcript (nothing on disk: empty).
    pub fn meter_from_transcript(&mut self, session: &str) {
        let records = self
            .transcript_of(session)
            .filter(|path| path.is_file())
            .and_then(|path| crate::sessions::load(&path).ok())
            .unwrap_or_default();
        self.show_meter(from_records(&records));
    }

    /// After `/clear`: the history is gone, the next prompt is the system
    /// prompt and the tools (estimated).
    pub fn meter_cleared(&mut self) {
        self.show_meter(Meter {
            used: FIXED_ESTIMATE,
            length: None,
            estimated: true,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ChatMessage;
    use crate::protocol::Origin;
    use crate::sessions::Compaction;

    fn record(message: ChatMessage) -> Record {
        Record::now(Origin::Tui, message)
    }

    #[test]
    fn known_sizes_win_and_what_follows_is_estimated() {
        let mut reply = record(ChatMessage::assistant("ok"));
        reply.details.context = Some(ContextUse {
            used: 3_000,
            length: 8_192,
        });
        let records = vec![record(ChatMessage::user("a".repeat(400))), reply.clone()];
        let m = from_records(&records);
        assert_eq!(
            m,
            Meter {
                used: 3_000,
                length: Some(8_192),
                estimated: false
            }
        );
        let mut more = records.clone();
        more.push(record(ChatMessage::user("b".repeat(40))));
        assert_eq!(from_records(&more).used, 3_000 + 10 + MESSAGE_OVERHEAD);
        let mut compacted = record(ChatMessage::system("summary"));
        compacted.compaction = Some(Compaction {
            kept: 0,
            summarized_messages: 2,
            before_tokens: 3_000,
            after_tokens: 900,
            model: "local".into(),
        });
        more.push(compacted);
        assert_eq!(from_records(&more).used, 900);
    }

    #[test]
    fn an_old_transcript_is_estimated_whole_and_an_empty_one_is_zero() {
        let m = from_records(&[record(ChatMessage::user("a".repeat(4_000)))]);
        assert_eq!(m.used, FIXED_ESTIMATE + 1_000 + MESSAGE_OVERHEAD);
        assert!(m.estimated);
        assert_eq!(from_records(&[]), Meter::default());
    }
}
