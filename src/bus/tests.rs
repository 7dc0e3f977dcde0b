use super::*;
use crate::protocol::SubmissionId;
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

#[tokio::test]
async fn events_carry_the_submission_their_task_answers() {
    let bus = EventBus::new();
    let mut rx = bus.subscribe();
    let notice = || {
        EventKind::Notice(Notice {
            message: "n".into(),
        })
    };
    bus.emit("s", &Origin::Cli, notice());
    let id = SubmissionId("7".into());
    answering(Some(id.clone()), async {
        bus.emit("s", &Origin::Cli, notice());
        answer(None);
        bus.emit("s", &Origin::Cli, notice());
    })
    .await;
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(rx.recv().await.and_then(|e| e.submission));
    }
    assert_eq!(got, [None, Some(id), None]);
}
