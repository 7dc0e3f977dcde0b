//! A writer's batch with streamed text merged: consecutive `delta` (or
//! `reasoning`) events of one session, origin and submission go out as
//! one event carrying the last of their numbers, so a client that fell a
//! little behind catches up in a few frames instead of one per token.

use std::sync::Arc;

use crate::protocol::{AnswerDelta, Event, EventKind, ReasoningDelta};

/// A merged delta grows to about this size, then a new one starts.
const MAX_MERGED_BYTES: usize = 64 * 1024;

pub fn merge_batch(batch: Vec<(u64, Arc<Event>)>) -> Vec<(u64, Arc<Event>)> {
    let mut out: Vec<(u64, Arc<Event>)> = Vec::with_capacity(batch.len());
    for (seq, event) in batch {
        if let Some((last_seq, last)) = out.last_mut()
            && let Some(text) = mergeable(last, &event)
        {
            let merged = Arc::make_mut(last);
            match &mut merged.kind {
                EventKind::Delta(AnswerDelta { text: t })
                | EventKind::Reasoning(ReasoningDelta { text: t }) => t.push_str(text),
                _ => {}
            }
            *last_seq = seq;
            continue;
        }
        out.push((seq, event));
    }
    out
}

/// `next`'s text when it continues `last`'s streamed text.
fn mergeable<'a>(last: &Event, next: &'a Event) -> Option<&'a str> {
    if last.session != next.session
        || last.origin != next.origin
        || last.submission != next.submission
    {
        return None;
    }
    match (&last.kind, &next.kind) {
        (EventKind::Delta(a), EventKind::Delta(b)) if a.text.len() < MAX_MERGED_BYTES => {
            Some(&b.text)
        }
        (EventKind::Reasoning(a), EventKind::Reasoning(b)) if a.text.len() < MAX_MERGED_BYTES => {
            Some(&b.text)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Origin, TurnEnded};

    fn ev(session: &str, kind: EventKind) -> Arc<Event> {
        Arc::new(Event {
            agent: None,
            submission: None,
            session: session.into(),
            origin: Origin::Cli,
            kind,
        })
    }

    fn delta(session: &str, text: &str) -> Arc<Event> {
        ev(session, EventKind::Delta(AnswerDelta { text: text.into() }))
    }

    #[test]
    fn consecutive_deltas_of_one_session_merge_under_the_last_number() {
        let ended = ev("a", EventKind::TurnEnded(TurnEnded { interrupted: false }));
        let batch = vec![
            (1, delta("a", "one ")),
            (2, delta("a", "two ")),
            (3, delta("b", "other")),
            (4, delta("a", "three")),
            (5, ended.clone()),
            (6, delta("a", "four")),
        ];
        let got = merge_batch(batch);
        let want = vec![
            (2, delta("a", "one two ")),
            (3, delta("b", "other")),
            (4, delta("a", "three")),
            (5, ended),
            (6, delta("a", "four")),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn merging_leaves_the_ring_s_event_alone() {
        let first = delta("a", "x");
        let batch = vec![(1, first.clone()), (2, delta("a", "y"))];
        let got = merge_batch(batch);
        assert_eq!(got, vec![(2, delta("a", "xy"))]);
        assert_eq!(first, delta("a", "x"));
    }
}
