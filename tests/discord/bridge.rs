//! Messages in, answers out, the ignore rules, long answers, reconnects.

use std::time::Duration;

use egirl::protocol::{BotStatus, EventKind, FinalAnswer, Origin, TurnStarted};
use egirl::surfaces::discord::{self, DiscordOptions};
use secrecy::SecretString;

use super::{DM, GUILD, GUILD_CHANNEL, Rig, settle, start};
use crate::support::fake_discord::{FakeDiscord, UserMessage};
use crate::support::fake_llama::Reply;

#[tokio::test]
async fn dm_from_the_owner_gets_the_answer_as_a_reply() {
    let mut rig = start(true, |_| {}, |_| {}).await;
    rig.llama.push_reply(Reply::text("hello from egirl"));
    let asked = rig.discord.send(UserMessage::dm(DM, "hi there"));

    let sent = rig.discord.wait_sent(1).await;
    assert_eq!(sent[0].channel, DM);
    assert_eq!(sent[0].content, "hello from egirl");
    assert_eq!(sent[0].reply_to, Some(asked));
    assert!(rig.discord.typing().contains(&DM), "typing was never sent");

    // The TUI-side subscriber saw the Discord session's turn.
    let session = discord::session_for(DM);
    let events = rig.turn(&session).await;
    assert!(
        events
            .iter()
            .all(|e| e.origin == Origin::Discord(DM.to_string()))
    );
    assert!(events.iter().any(|e| matches!(&e.kind,
        EventKind::TurnStarted(TurnStarted { text, .. }) if text == "hi there")));
    assert!(events.iter().any(|e| matches!(&e.kind,
        EventKind::Final(FinalAnswer { text }) if text == "hello from egirl")));
    // The model saw the text without any mention markup.
    let request = rig.llama.requests_to("/v1/chat/completions");
    assert_eq!(request.len(), 1);
}

#[tokio::test]
async fn strangers_other_bots_other_channels_and_unmentioned_guild_messages_are_ignored() {
    let rig = start(true, |_| {}, |_| {}).await;
    rig.discord.send(UserMessage {
        author: 7,
        ..UserMessage::dm(DM, "I am not the owner")
    });
    rig.discord.send(UserMessage {
        author_is_bot: true,
        author: 8,
        ..UserMessage::dm(DM, "beep")
    });
    rig.discord.send(UserMessage {
        guild: Some(GUILD),
        mentions_bot: true,
        ..UserMessage::dm(6002, "<@900> wrong channel")
    });
    rig.discord.send(UserMessage {
        guild: Some(GUILD),
        ..UserMessage::dm(GUILD_CHANNEL, "no mention")
    });
    settle().await;
    assert!(rig.discord.sent().is_empty(), "{:?}", rig.discord.sent());
    assert!(rig.llama.requests_to("/v1/chat/completions").is_empty());

    // The same channel with a mention is answered, so the bridge was alive.
    rig.llama.push_reply(Reply::text("here"));
    let asked = rig.discord.send(UserMessage {
        guild: Some(GUILD),
        mentions_bot: true,
        ..UserMessage::dm(GUILD_CHANNEL, "<@900> ping")
    });
    let sent = rig.discord.wait_sent(1).await;
    assert_eq!(
        (sent[0].channel, sent[0].reply_to),
        (GUILD_CHANNEL, Some(asked))
    );
    assert_eq!(rig.llama.requests_to("/v1/chat/completions").len(), 1);
    let body = rig.llama.requests_to("/v1/chat/completions").remove(0);
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    let text = last["content"].as_str().unwrap();
    assert!(text.starts_with("ping"), "{text}");
}

fn units(s: &str) -> usize {
    s.encode_utf16().count()
}

#[tokio::test]
async fn a_long_answer_arrives_in_valid_chunks_with_balanced_fences() {
    let mut rig = start(true, |_| {}, |_| {}).await;
    let code: Vec<String> = (0..120)
        .map(|i| format!("    println!(\"line {i:03} of the generated example\");"))
        .collect();
    let answer = format!(
        "Here is the program:\n\n```rust\nfn main() {{\n{}\n}}\n```\n\n{}",
        code.join("\n"),
        "That is all. ".repeat(40)
    );
    assert!(answer.len() > 5000, "{}", answer.len());
    rig.llama.push_reply(Reply::text(&answer));
    let asked = rig.discord.send(UserMessage::dm(DM, "write it"));
    rig.turn(&discord::session_for(DM)).await;
    let sent = rig.discord.wait_sent(3).await;

    assert!(sent.len() >= 3, "{} chunks", sent.len());
    for (i, m) in sent.iter().enumerate() {
        assert!(
            units(&m.content) <= 2000,
            "chunk {i}: {} units",
            units(&m.content)
        );
        let fences = m
            .content
            .lines()
            .filter(|l| l.trim_start().starts_with("```"))
            .count();
        assert_eq!(
            fences % 2,
            0,
            "chunk {i} has unbalanced fences:\n{}",
            m.content
        );
        assert_eq!(m.reply_to, if i == 0 { Some(asked) } else { None });
    }
    // Every code line arrives once, in order.
    let lines: Vec<&str> = sent
        .iter()
        .flat_map(|m| m.content.lines())
        .filter(|l| l.contains("of the generated example"))
        .collect();
    assert_eq!(lines, code.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(sent.last().unwrap().content.ends_with("That is all."));
}

#[tokio::test]
async fn the_bot_reconnects_after_the_gateway_closes_the_socket() {
    let mut rig = start(true, |_| {}, |_| {}).await;
    let bot = rig.bot.as_ref().unwrap();
    let mut status = bot.status.clone();
    rig.discord.close_socket();
    rig.discord.wait_sessions(2).await;
    assert_eq!(rig.discord.identifies() + rig.discord.resumes(), 2);
    tokio::time::timeout(
        Duration::from_secs(10),
        status.wait_for(|s| matches!(s, BotStatus::Ready(_))),
    )
    .await
    .expect("ready again")
    .unwrap();

    rig.llama.push_reply(Reply::text("still here"));
    rig.discord.send(UserMessage::dm(DM, "you there?"));
    let sent = rig.discord.wait_sent(1).await;
    assert_eq!(sent[0].content, "still here");
    rig.turn(&discord::session_for(DM)).await;
}

#[tokio::test]
async fn a_rejected_token_shows_in_the_status_and_never_panics() {
    let fake = FakeDiscord::start().await;
    let (agent, _llama, _dir) = bare_agent().await;
    let bot = discord::spawn(
        agent,
        DiscordOptions::new(
            super::discord_config(&fake),
            SecretString::from(crate::support::fake_discord::BAD_TOKEN.to_string()),
            true,
        ),
    );
    let mut status = bot.status.clone();
    let stopped = status_becomes(&mut status, 15, |s| matches!(s, BotStatus::Stopped(_))).await;
    let BotStatus::Stopped(reason) = stopped else {
        unreachable!()
    };
    assert!(reason.contains("rejected the token"), "{reason}");
    assert!(!reason.contains(crate::support::fake_discord::BAD_TOKEN));
    tokio::time::timeout(Duration::from_secs(6), bot.stop())
        .await
        .expect("stops promptly");
}

#[tokio::test]
async fn an_answer_to_a_message_typed_in_the_tui_goes_to_the_channel() {
    let mut rig = start(true, |_| {}, |_| {}).await;
    rig.llama.push_reply(Reply::text("sent from the desk"));
    let session = discord::session_for(DM);
    rig.agent.submit(egirl::protocol::Op::UserMessage {
        images: Vec::new(),
        session: session.clone(),
        origin: Origin::Tui,
        text: "tell them hi".into(),
    });
    rig.turn(&session).await;
    let sent = rig.discord.wait_sent(1).await;
    assert_eq!(
        (sent[0].channel, sent[0].content.as_str(), sent[0].reply_to),
        (DM, "sent from the desk", None)
    );
}

#[tokio::test]
async fn an_unreachable_gateway_shows_in_the_status_and_stops_cleanly() {
    let (agent, _llama, _dir) = bare_agent().await;
    // Nothing listens on the proxy: no /gateway answer, no connection.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut config = super::discord_config(&FakeDiscord::start().await);
    config.proxy = Some(format!("http://127.0.0.1:{port}"));
    let mut options =
        DiscordOptions::new(config, SecretString::from("t0ken-abc".to_string()), true);
    options.connect_grace = Duration::from_millis(300);
    let bot = discord::spawn(agent, options);
    let mut status = bot.status.clone();
    let shown = status_becomes(&mut status, 10, |s| matches!(s, BotStatus::Reconnecting(_))).await;
    assert_eq!(
        shown,
        BotStatus::Reconnecting("cannot reach the Discord gateway; retrying".into())
    );
    tokio::time::timeout(Duration::from_secs(6), bot.stop())
        .await
        .expect("stops promptly");
    assert_eq!(*status.borrow(), BotStatus::Off);
}

/// `[heartbeat] deliver = "discord:<dm>"`: news reaches the owner's DM; a
/// bare HEARTBEAT_OK reaches nobody and shows no typing.
#[tokio::test]
async fn heartbeat_news_reaches_the_dm_and_heartbeat_ok_does_not() {
    let mut rig = start(true, |_| {}, |_| {}).await;
    let session = discord::session_for(DM);
    let beat = |rig: &Rig| {
        assert!(rig.agent.submit(egirl::protocol::Op::UserMessage {
            images: Vec::new(),
            session: session.clone(),
            origin: Origin::Heartbeat,
            text: "Heartbeat check.".into(),
        }))
    };
    rig.llama.push_reply(Reply::text("HEARTBEAT_OK"));
    beat(&rig);
    rig.turn(&session).await;
    assert!(rig.discord.typing().is_empty(), "typing for a heartbeat");

    rig.llama.push_reply(Reply::text(
        "Your flight leaves in 3 hours; check in is open now.",
    ));
    beat(&rig);
    let sent = rig.discord.wait_sent(1).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].channel, DM);
    assert_eq!(
        sent[0].content,
        "Your flight leaves in 3 hours; check in is open now."
    );
    assert_eq!(sent[0].reply_to, None);
}

/// An agent on the fake llama-server, for bridge tests that never get as
/// far as a turn.
async fn bare_agent() -> (
    egirl::agent::AgentHandle,
    crate::support::fake_llama::FakeLlama,
    tempfile::TempDir,
) {
    let llama = crate::support::fake_llama::FakeLlama::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (workspace, _) = egirl::workspace::ensure(&dir.path().join("ws")).unwrap();
    let (agent, _core) = egirl::agent::spawn_with(
        crate::agent::config_for(&llama),
        workspace,
        Vec::new(),
        Default::default(),
    );
    (agent, llama, dir)
}

/// Waits (at most `secs`) until the bot's status satisfies `done`.
async fn status_becomes(
    status: &mut tokio::sync::watch::Receiver<BotStatus>,
    secs: u64,
    done: impl FnMut(&BotStatus) -> bool,
) -> BotStatus {
    let reached = tokio::time::timeout(Duration::from_secs(secs), status.wait_for(done))
        .await
        .map(|r| r.expect("status channel open").clone());
    reached.unwrap_or_else(|_| panic!("status still {:?} after {secs} s", *status.borrow()))
}

#[tokio::test]
async fn after_an_interrupted_turn_the_next_answer_replies_to_its_own_message() {
    let mut rig = start(true, |_| {}, |_| {}).await;
    let session = discord::session_for(DM);
    rig.llama.push_reply(Reply::hang());
    rig.discord.send(UserMessage::dm(DM, "a slow question"));
    // Interrupted from the TUI once the turn is under way.
    loop {
        let e = tokio::time::timeout(Duration::from_secs(10), rig.events.recv())
            .await
            .expect("turn started")
            .unwrap();
        if e.session == session && matches!(e.kind, EventKind::TurnStarted(_)) {
            break;
        }
    }
    // Interrupted once the hanging reply is taken: earlier, the turn ends
    // before asking and the hang would answer the next question.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while rig.llama.pending_replies() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the turn never asked the model"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    rig.agent.submit(egirl::protocol::Op::Interrupt {
        session: session.clone(),
    });
    rig.turn(&session).await;

    rig.llama.push_reply(Reply::text("the second answer"));
    let second = rig.discord.send(UserMessage::dm(DM, "a quick one"));
    let sent = rig.discord.wait_sent(1).await;
    assert_eq!(sent[0].content, "the second answer");
    assert_eq!(sent[0].reply_to, Some(second));
}
