//! Telegram misbehaving: a 429 with `retry_after`, a connection dropped
//! during long polling, a revoked token.

use std::time::Duration;

use egirl::protocol::BotStatus;
use egirl::surfaces::telegram;

use super::{DM, Setup, start};
use crate::support::fake_llama::Reply;
use crate::support::fake_telegram::{Fault, OWNER_ID, REVOKED_TOKEN};
use egirl::protocol::EventKind;

#[tokio::test]
async fn a_429_is_retried_after_retry_after_and_the_answer_arrives_once() {
    let rig = start(Setup::default(), |_| {}).await;
    rig.telegram.fail_next("sendMessage", Fault::RetryAfter(1));
    rig.llama.push_reply(Reply::text("patience"));
    let asked = rig.telegram.message(DM, OWNER_ID, "hi");

    let sent = rig.telegram.wait_sent(1).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].text.as_str(), sent[0].reply_to),
        ("patience", Some(asked))
    );
    assert_eq!(
        rig.telegram.calls("sendMessage"),
        2,
        "one refused, one sent"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rig.telegram.sent().len(), 1, "sent twice");
}

#[tokio::test]
async fn a_connection_dropped_during_long_polling_is_polled_again() {
    let rig = start(Setup::default(), |_| {}).await;
    // Every status the bridge goes through from here.
    let mut status = rig.bot.as_ref().unwrap().status.clone();
    status.borrow_and_update();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while status.changed().await.is_ok() {
            let now = status.borrow_and_update().clone();
            record.lock().unwrap().push(now);
        }
    });
    let polls = rig.telegram.calls("getUpdates");
    rig.telegram.fail_next("getUpdates", Fault::Drop);
    // The current poll returns empty within a second; the next one is cut.
    rig.telegram.wait_calls("getUpdates", polls + 2).await;
    rig.llama.push_reply(Reply::text("still here"));
    rig.telegram.message(DM, OWNER_ID, "are you there?");
    let sent = rig.telegram.wait_sent(1).await;
    assert_eq!(sent[0].text, "still here");
    let seen = seen.lock().unwrap().clone();
    assert!(
        matches!(seen.as_slice(), [BotStatus::Reconnecting(why), BotStatus::Ready(_)] if why.contains("cannot reach Telegram")),
        "{seen:?}"
    );
}

#[tokio::test]
async fn a_revoked_token_is_one_notice_not_a_retry_loop() {
    let setup = Setup {
        token: REVOKED_TOKEN,
        wait_ready: false,
        ..Setup::default()
    };
    let rig = start(setup, |_| {}).await;
    let mut status = rig.bot.as_ref().unwrap().status.clone();
    let stopped = tokio::time::timeout(
        Duration::from_secs(10),
        status.wait_for(|s| matches!(s, BotStatus::Stopped(_))),
    )
    .await
    .expect("stopped within 10 s")
    .expect("status open")
    .clone();
    assert_eq!(stopped, BotStatus::Stopped(telegram::UNAUTHORIZED.into()));
    // Nothing keeps hammering the API.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(rig.telegram.calls("getMe"), 1);
    assert_eq!(rig.telegram.calls("getUpdates"), 0);
    assert!(!format!("{stopped:?}").contains("revoked-token"));
}

/// What quitting the TUI asks before it stops the bot: is a chat waiting
/// for an answer? Yes from the message's arrival until the answer is out.
#[tokio::test]
async fn the_bridge_says_when_a_chat_waits_for_an_answer() {
    let mut rig = start(Setup::default(), |_| {}).await;
    assert!(!rig.bot.as_ref().unwrap().answering());
    rig.llama
        .push_reply(Reply::chunks(&["slow ", "answer"]).frame_delay(Duration::from_millis(300)));
    rig.telegram.message(DM, OWNER_ID, "take your time");
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), rig.events.recv())
            .await
            .expect("a turn")
            .unwrap();
        if matches!(event.kind, EventKind::TurnStarted(_)) {
            break;
        }
    }
    assert!(rig.bot.as_ref().unwrap().answering());
    rig.turn(&telegram::session_for(DM)).await;
    rig.telegram.wait_sent(1).await;
    // The bridge sees the turn end just after the answer is out.
    let bot = rig.bot.as_ref().unwrap();
    crate::support::fake_telegram::wait_for(Duration::from_secs(5), || !bot.answering()).await;
}

#[tokio::test]
async fn html_telegram_refuses_is_sent_again_as_plain_text() {
    let rig = start(Setup::default(), |_| {}).await;
    rig.telegram.fail_next("sendMessage", Fault::BadEntities);
    rig.llama.push_reply(Reply::text("**bold** & `code`"));
    let asked = rig.telegram.message(DM, OWNER_ID, "hi");
    let sent = rig.telegram.wait_sent(1).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].text, "bold & code");
    assert_eq!(sent[0].parse_mode, None);
    assert_eq!(sent[0].reply_to, Some(asked));
}
