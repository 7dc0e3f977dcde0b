//! The bound on clients served at once, over a stream the test holds.

use std::sync::Arc;

use super::admission::SocketOwner;
use super::{Bounds, Gateway, HelloFacts, MAX_CLIENTS};
use crate::bus::EventBus;
use crate::link::CoreLink;
use crate::link::frames::{self, Framed};
use crate::protocol::wire::{CoreStatus, MAX_CLIENT_FRAME};

fn gateway() -> Gateway {
    let (_tx, status) = tokio::sync::watch::channel(CoreStatus::default());
    let submit = Arc::new(|_| true);
    let link = CoreLink::new(submit, EventBus::new(), status, Arc::new(|| {}), None);
    Gateway::start(link, HelloFacts::default(), Bounds::default())
}

/// A connection's server half, and the client half the test keeps.
fn pipe() -> (Framed, Framed) {
    let (a, b) = tokio::io::duplex(1 << 16);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    (
        frames::lines(ar, aw, MAX_CLIENT_FRAME),
        frames::lines(br, bw, MAX_CLIENT_FRAME),
    )
}

#[tokio::test]
async fn clients_past_the_bound_are_told_and_closed() {
    let gateway = gateway();
    let mut silent = Vec::new();
    for _ in 0..MAX_CLIENTS {
        let (server, client) = pipe();
        let gateway = gateway.clone();
        silent.push(client);
        tokio::spawn(async move {
            gateway
                .serve(server, Arc::new(SocketOwner::new("t".into())))
                .await
        });
    }
    tokio::task::yield_now().await;
    let (server, mut client) = pipe();
    let refused = tokio::spawn({
        let gateway = gateway.clone();
        async move {
            gateway
                .serve(server, Arc::new(SocketOwner::new("t".into())))
                .await
        }
    });
    let line = client.reader.read_frame().await.unwrap().unwrap();
    assert!(line.contains("too many clients"), "{line}");
    refused.await.unwrap();
    drop(silent);
}
