//! Messages in, answers out: who is answered, threading, typing, HTML
//! escaping and long answers.

use egirl::protocol::{EventKind, Op, Origin, TurnStarted};
use egirl::surfaces::telegram::{self, html, split::TELEGRAM_LIMIT};

use super::{DM, GROUP, Setup, settle, start};
use crate::support::fake_llama::Reply;
use crate::support::fake_telegram::{BOT_USERNAME, OWNER_ID};

#[tokio::test]
async fn a_dm_from_the_owner_is_answered_as_a_threaded_html_reply() {
    let mut rig = start(Setup::default(), |_| {}).await;
    rig.llama.push_reply(Reply::text("hello from **egirl**"));
    let asked = rig.telegram.message(DM, OWNER_ID, "hi there");

    let sent = rig.telegram.wait_sent(1).await;
    assert_eq!(sent[0].chat, DM);
    assert_eq!(sent[0].text, "hello from <b>egirl</b>");
    assert_eq!(sent[0].parse_mode.as_deref(), Some("HTML"));
    assert_eq!(sent[0].reply_to, Some(asked));
    assert!(
        rig.telegram.actions().contains(&(DM, "typing".to_string())),
        "typing was never sent: {:?}",
        rig.telegram.actions()
    );

    // The TUI-side subscriber saw the Telegram session's turn.
    let session = telegram::session_for(DM);
    let events = rig.turn(&session).await;
    assert!(
        events
            .iter()
            .all(|e| e.origin == Origin::Telegram(DM.to_string()))
    );
    assert!(events.iter().any(|e| matches!(&e.kind,
        EventKind::TurnStarted(TurnStarted { text, .. }) if text == "hi there")));
}

#[tokio::test]
async fn strangers_unlisted_groups_and_unmentioned_group_messages_are_ignored() {
    let rig = start(Setup::default(), |_| {}).await;
    rig.telegram.message(7, 7, "I am not the owner");
    rig.telegram
        .message(GROUP, 7, &format!("@{BOT_USERNAME} me neither"));
    rig.telegram.message(
        -1_009_999,
        OWNER_ID,
        &format!("@{BOT_USERNAME} wrong group"),
    );
    rig.telegram.message(GROUP, OWNER_ID, "no mention");
    settle().await;
    assert!(rig.telegram.sent().is_empty(), "{:?}", rig.telegram.sent());
    assert!(
        rig.telegram.actions().is_empty(),
        "typing for an ignored message"
    );
    assert!(rig.llama.requests_to("/v1/chat/completions").is_empty());

    // The same group with a mention is answered, so the bridge was alive.
    rig.llama.push_reply(Reply::text("here"));
    let asked = rig
        .telegram
        .message(GROUP, OWNER_ID, &format!("@{BOT_USERNAME} ping"));
    let sent = rig.telegram.wait_sent(1).await;
    assert_eq!((sent[0].chat, sent[0].reply_to), (GROUP, Some(asked)));
    let requests = rig.llama.requests_to("/v1/chat/completions");
    assert_eq!(requests.len(), 1);
    let body = requests[0].to_string();
    assert!(
        body.contains("ping") && !body.contains(BOT_USERNAME),
        "{body}"
    );
}

#[tokio::test]
async fn html_is_escaped_and_code_blocks_become_pre() {
    let rig = start(Setup::default(), |_| {}).await;
    rig.llama.push_reply(Reply::text(
        "If a < b && c > d, use <b>this</b>:\n\n```rust\nif a < b && ok { run(\"&\") }\n```",
    ));
    rig.telegram.message(DM, OWNER_ID, "explain");
    let sent = rig.telegram.wait_sent(1).await;
    assert_eq!(
        sent[0].text,
        "If a &lt; b &amp;&amp; c &gt; d, use &lt;b&gt;this&lt;/b&gt;:\n\n\
         <pre><code class=\"language-rust\">if a &lt; b &amp;&amp; ok { run(&quot;&amp;&quot;) }</code></pre>"
    );
}

#[tokio::test]
async fn a_10000_character_answer_is_split_at_blocks_under_the_limit() {
    let rig = start(Setup::default(), |_| {}).await;
    let para = "All work and no play makes egirl a dull bot. ".repeat(20); // 900
    let code: Vec<String> = (0..250)
        .map(|i| format!("let v{i:03} = {i} < 1000;"))
        .collect(); // ~5,500: more than one message
    let answer = format!(
        "{p}\n\n{p}\n\n{p}\n\n```rust\n{c}\n```\n\n{p}\n\n{p}\n\n{p}\n\nThe end.",
        p = para.trim_end(),
        c = code.join("\n")
    );
    assert!(answer.chars().count() >= 10_000, "{}", answer.len());
    rig.llama.push_reply(Reply::text(&answer));
    let asked = rig.telegram.message(DM, OWNER_ID, "write a lot");

    // Wait for the last part, then check them all.
    let mut sent = rig.telegram.wait_sent(1).await;
    for _ in 0..100 {
        if sent.last().is_some_and(|s| s.text.ends_with("The end.")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        sent = rig.telegram.sent();
    }
    assert!(sent.len() >= 3, "{} messages", sent.len());
    assert_eq!(sent[0].reply_to, Some(asked), "the first part replies");
    assert!(sent[1..].iter().all(|s| s.reply_to.is_none()));
    for s in &sent {
        let visible = html::visible(&s.text);
        assert!(visible.encode_utf16().count() <= TELEGRAM_LIMIT);
        assert_eq!(
            s.text.matches("<pre>").count(),
            s.text.matches("</pre>").count(),
            "a code block left open:\n{}",
            s.text
        );
        // Paragraphs are never cut: each is whole or absent.
        for p in visible.split("\n\n").filter(|p| p.starts_with("All work")) {
            assert_eq!(p, para.trim_end());
        }
    }
    // Every line of code arrives once, in order, inside a code block.
    let lines: Vec<String> = sent
        .iter()
        .flat_map(|s| {
            html::visible(&s.text)
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|l| l.starts_with("let v"))
        .collect();
    assert_eq!(lines, code);
    let reopened = sent
        .iter()
        .filter(|s| s.text.starts_with("<pre><code class=\"language-rust\">"))
        .count();
    assert!(
        reopened >= 1,
        "the code block was not reopened in a new part"
    );
    let paragraphs = sent
        .iter()
        .map(|s| html::visible(&s.text).matches("All work").count())
        .sum::<usize>();
    assert_eq!(paragraphs, 6 * 20);
}

/// The TUI's input pointed at the chat (the session picker): the answer
/// goes to Telegram, not as a reply, with typing while it runs.
#[tokio::test]
async fn a_message_typed_at_the_desk_into_the_chat_is_answered_in_telegram() {
    let mut rig = start(Setup::default(), |_| {}).await;
    // A chat the config does not allow gets nothing, whoever writes there.
    rig.llama.push_reply(Reply::text("for a stranger"));
    let stranger = telegram::session_for(555);
    rig.agent.submit(Op::UserMessage {
        images: Vec::new(),
        session: stranger.clone(),
        origin: Origin::Tui,
        text: "tell 555 hello".into(),
    });
    rig.turn(&stranger).await;

    rig.llama.push_reply(Reply::text("sent from the desk"));
    let session = telegram::session_for(DM);
    rig.agent.submit(Op::UserMessage {
        images: Vec::new(),
        session: session.clone(),
        origin: Origin::Tui,
        text: "tell my phone hello".into(),
    });
    let events = rig.turn(&session).await;
    assert!(events.iter().all(|e| e.origin == Origin::Tui));
    let sent = rig.telegram.wait_sent(1).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        (sent[0].chat, sent[0].text.as_str(), sent[0].reply_to),
        (DM, "sent from the desk", None)
    );
    assert!(rig.telegram.actions().iter().all(|(chat, _)| *chat == DM));
    assert!(rig.telegram.actions().contains(&(DM, "typing".to_string())));
}
