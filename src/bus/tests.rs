use super::*;
use crate::protocol::{AnswerDelta, Notice};

#[tokio::test]
async fn every_subscriber_gets_every_event() {
    let bus = EventBus::new();
    let mut a = bus.subscribe();
    let mut b = bus.subscribe();
    for i in 0..1000 {
        bus.emit(
            "s",
            &Origin::Cli,
            EventKind::Delta(AnswerDelta {
                text: i.to_string(),
            }),
        );
        bus.emit(
            "s",
            &Origin::Cli,
            EventKind::Notice(Notice {
                message: i.to_string(),
            }),
        );
    }
    for _ in 0..2000 {
        assert!(a.recv().await.is_some());
        assert!(b.recv().await.is_some());
    }
    drop(bus);
    assert!(a.recv().await.is_none());
}
