//! Two fake endpoints serving one model behind one `[local]`.

use std::time::Duration;

use egirl::protocol::{EventKind, TurnEnded};

use super::{notices, received, routings, session_on, start_replicas, usage_endpoints};
use crate::agent::final_text;
use crate::support::fake_llama::FakeLlama;

/// 3 sessions alternate 10 turns each: every turn of a session goes to the
/// endpoint its first turn went to, its rendezvous home (two live on a,
/// one on b).
#[tokio::test]
async fn sessions_keep_their_endpoint_across_turns() {
    let (a, b) = (FakeLlama::start().await, FakeLlama::start().await);
    let urls = [a.url(), b.url()];
    let mut h = start_replicas(&[&a, &b], |_| {});
    let sessions = [
        session_on(&urls, 0, 0),
        session_on(&urls, 1, 0),
        session_on(&urls, 0, 1),
    ];
    let mut home: Vec<Option<String>> = vec![None; 3];
    for turn in 0..10 {
        for (i, session) in sessions.iter().enumerate() {
            let text = format!("{session} says hello number {turn}");
            h.send(session, &text);
            let events = h.turn(session).await;
            assert!(final_text(&events).is_some(), "{events:?}");
            assert!(notices(&events).is_empty(), "{events:?}");
            let served = usage_endpoints(&events);
            assert_eq!(served.len(), 1, "{events:?}");
            let on_a = received(&a, &text);
            let on_b = received(&b, &text);
            assert!(on_a != on_b, "{text} went to exactly one endpoint");
            let url = if on_a { a.url() } else { b.url() };
            assert_eq!(served[0].as_deref(), Some(url.as_str()));
            match &home[i] {
                None => home[i] = Some(url),
                Some(first) => assert_eq!(*first, url, "{session} moved at turn {turn}"),
            }
        }
    }
    assert_eq!(home[0].as_deref(), Some(a.url().as_str()));
    assert_eq!(home[1].as_deref(), Some(b.url().as_str()), "its home");
    assert_eq!(a.requests().len(), 20);
    assert_eq!(b.requests().len(), 10);
}

/// The session's endpoint dies between turns: the next turn fails over to
/// the other endpoint and completes there, with one notice and a routing
/// event saying why; later turns stay there without a notice.
#[tokio::test]
async fn a_failed_endpoint_moves_the_session_and_the_turn_completes() {
    let (a, b) = (FakeLlama::start().await, FakeLlama::start().await);
    let s1 = &session_on(&[a.url(), b.url()], 0, 0);
    let mut h = start_replicas(&[&a, &b], |_| {});
    h.send(s1, "first question");
    let first = h.turn(s1).await;
    assert_eq!(usage_endpoints(&first), vec![Some(a.url())]);

    a.set_down(true);
    h.send(s1, "second question");
    let second = h.turn(s1).await;
    assert!(final_text(&second).is_some(), "{second:?}");
    let said = notices(&second);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains(&a.url()) && said[0].contains(&b.url()) && said[0].contains("503"),
        "{said:?}"
    );
    let reasons: Vec<String> = routings(&second).into_iter().map(|r| r.2).collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("failover:") && r.contains(&a.url())),
        "{reasons:?}"
    );
    assert_eq!(usage_endpoints(&second), vec![Some(b.url())]);
    assert!(received(&b, "second question"));
    // The transcript keeps both turns; the second was sent whole to b.
    let sent = b.requests().last().cloned().expect("a request");
    assert!(sent.to_string().contains("first question"), "{sent}");

    h.send(s1, "third question");
    let third = h.turn(s1).await;
    assert!(notices(&third).is_empty(), "{third:?}");
    assert_eq!(usage_endpoints(&third), vec![Some(b.url())]);
}

/// A down endpoint is probed less and less often (the wait doubles, up to
/// 12 x `probe_every`), so an idle daemon whose server is off is not woken
/// every few seconds; it is still found again when it answers.
#[tokio::test]
async fn a_down_endpoint_is_probed_less_and_less_often() {
    let (a, b) = (FakeLlama::start().await, FakeLlama::start().await);
    let s1 = &session_on(&[a.url(), b.url()], 0, 0);
    let mut h = start_replicas(&[&a, &b], |_| {});
    a.set_down(true);
    h.send(s1, "hello");
    assert_eq!(usage_endpoints(&h.turn(s1).await), vec![Some(b.url())]);
    let before = a.hits("/health");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    // Every 50 ms would be 30 probes; doubling from 50 ms up to 600 ms
    // gives 5 by 1.35 s.
    let probes = a.hits("/health") - before;
    assert!((2..=8).contains(&probes), "{probes} probes in 1.5 s");
    recover(&a).await;
    h.send(s1, "back");
    assert_eq!(usage_endpoints(&h.turn(s1).await), vec![Some(a.url())]);
}

/// An endpoint nothing listens on, the session's home: the turn is served
/// by the other, with one notice naming the dead one.
#[tokio::test]
async fn an_unreachable_endpoint_fails_over_on_the_first_turn() {
    let b = FakeLlama::start().await;
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        format!("http://{}", listener.local_addr().expect("addr"))
    };
    let s1 = &session_on(&[dead.clone(), b.url()], 0, 0);
    let mut h = crate::agent::start(&b, |c| {
        c.local.endpoints = vec![dead.clone(), b.url()];
    });
    h.send(s1, "hello there");
    let events = h.turn(s1).await;
    assert!(final_text(&events).is_some(), "{events:?}");
    let said = notices(&events);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains(&dead) && said[0].contains("cannot reach"),
        "{said:?}"
    );
    assert_eq!(usage_endpoints(&events), vec![Some(b.url())]);
}

/// After failover the dead endpoint is probed until it answers /health;
/// then the sessions that live there come back to it (the moved one
/// without a notice: nothing failed) and new ones homed there go to it.
#[tokio::test]
async fn a_recovered_endpoint_takes_its_sessions_back() {
    let (a, b) = (FakeLlama::start().await, FakeLlama::start().await);
    let urls = [a.url(), b.url()];
    let (s1, s2, s3) = (
        &session_on(&urls, 0, 0),
        &session_on(&urls, 0, 1),
        &session_on(&urls, 0, 2),
    );
    let mut h = start_replicas(&[&a, &b], |_| {});
    a.set_down(true);
    h.send(s1, "one");
    let events = h.turn(s1).await;
    assert_eq!(usage_endpoints(&events), vec![Some(b.url())]);

    // While a is down, a new session whose home is a goes to b.
    h.send(s2, "two");
    assert_eq!(usage_endpoints(&h.turn(s2).await), vec![Some(b.url())]);

    recover(&a).await;
    h.send(s3, "three");
    let events = h.turn(s3).await;
    assert_eq!(usage_endpoints(&events), vec![Some(a.url())], "{events:?}");
    assert!(notices(&events).is_empty());

    for (session, text) in [(s1, "four"), (s2, "five")] {
        h.send(session, text);
        let events = h.turn(session).await;
        assert_eq!(usage_endpoints(&events), vec![Some(a.url())], "{session}");
        assert!(notices(&events).is_empty(), "{events:?}");
    }
}

/// A session back on its home after a failover is in its old slot there
/// (the session keeps one slot number, src/agent/session.rs), so the cache
/// it left is found again.
#[tokio::test]
async fn a_session_back_home_gets_its_slot_back() {
    let (a, b) = (FakeLlama::start().await, FakeLlama::start().await);
    a.set_total_slots(2);
    b.set_total_slots(2);
    let urls = [a.url(), b.url()];
    let (first, second) = (&session_on(&urls, 0, 0), &session_on(&urls, 0, 1));
    let mut h = start_replicas(&[&a, &b], |_| {});
    for session in [first, second] {
        h.send(session, "hello");
        assert_eq!(usage_endpoints(&h.turn(session).await), vec![Some(a.url())]);
    }
    let slot = |fake: &FakeLlama| fake.requests().last().map(|r| r["id_slot"].clone());
    assert_eq!(slot(&a), Some(1.into()));

    a.set_down(true);
    h.send(second, "away");
    assert_eq!(usage_endpoints(&h.turn(second).await), vec![Some(b.url())]);
    recover(&a).await;
    h.send(second, "back");
    assert_eq!(usage_endpoints(&h.turn(second).await), vec![Some(a.url())]);
    assert_eq!(slot(&a), Some(1.into()));
}

/// `fake` answers again: waits until the pool's probe has seen it.
async fn recover(fake: &FakeLlama) {
    fake.set_down(false);
    let probes = fake.hits("/health");
    for attempt in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if fake.hits("/health") > probes {
            // The probe that saw it healthy; let its answer land.
            tokio::time::sleep(Duration::from_millis(100)).await;
            return;
        }
        assert!(attempt < 99, "never probed again");
    }
}

/// `max_concurrent` is per endpoint: with 1 each, two sessions on two
/// endpoints stream at once (the second is not queued behind the first).
#[tokio::test]
async fn max_concurrent_applies_per_endpoint() {
    use crate::support::fake_llama::Reply;
    let (a, b) = (FakeLlama::start().await, FakeLlama::start().await);
    // s1's reply on a never ends; s2's on b must still arrive.
    a.push_reply(Reply::hang());
    let urls = [a.url(), b.url()];
    let (s1, s2) = (&session_on(&urls, 0, 0), &session_on(&urls, 1, 0));
    let mut h = start_replicas(&[&a, &b], |c| c.local.max_concurrent = 1);
    h.send(s1, "hang please");
    // s1 (on a) is streaming before s2 (on b) arrives.
    for _ in 0..100 {
        if received(&a, "hang please") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.send(s2, "quick one");
    let events = h.turn(s2).await;
    assert!(final_text(&events).is_some(), "{events:?}");
    assert_eq!(usage_endpoints(&events), vec![Some(b.url())]);
    h.agent.submit(egirl::protocol::Op::Interrupt {
        session: s1.clone(),
    });
    let ended = h.turn(s1).await;
    assert!(matches!(
        ended.last(),
        Some(EventKind::TurnEnded(TurnEnded { interrupted: true }))
    ));
}
