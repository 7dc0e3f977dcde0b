use egirl::config::ToolFormat;
use egirl::protocol::{
    AnswerDelta, EventKind, FinalAnswer, Op, Queued, Route, Routing, TokenUsage, TurnEnded,
    TurnStarted,
};
use serde_json::Value;

use super::{error_text, final_text, start, tool_results};
use crate::support::fake_llama::{FakeLlama, Reply};

#[tokio::test]
async fn streams_text_and_persists_the_turn() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text("Hello there, friend."));
    let mut h = start(&fake, |_| {});
    h.send("s1", "hi");
    let events = h.turn("s1").await;

    assert!(matches!(&events[0], EventKind::TurnStarted(TurnStarted { text, .. }) if text == "hi"));
    assert!(matches!(
        &events[1],
        EventKind::Routing(Routing {
            route: Route::Local(_),
            ..
        })
    ));
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            EventKind::Delta(AnswerDelta { text }) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "Hello there, friend.");
    assert!(events.iter().any(
        |e| matches!(e, EventKind::Usage(TokenUsage { input_tokens, .. }) if *input_tokens > 0)
    ));
    assert_eq!(final_text(&events).as_deref(), Some("Hello there, friend."));
    assert!(matches!(
        events.last(),
        Some(EventKind::TurnEnded(TurnEnded { interrupted: false }))
    ));

    let transcript = h.transcript("s1");
    assert_eq!(transcript.len(), 2);
    assert_eq!(transcript[0]["role"], "user");
    assert_eq!(transcript[0]["typed"], "hi");
    assert_eq!(transcript[1]["content"], "Hello there, friend.");
    let log = h.daily_log().await;
    assert!(
        log.contains("hi") && log.contains("Hello there, friend."),
        "{log}"
    );
    // The user's line first, each under its heading.
    let (user, answer) = (log.find("· user · tui\n\nhi\n"), log.find("· egirl · tui"));
    assert!(user.is_some() && user < answer, "{log}");
    // The next new session's file is made after the turn, and taken.
    let spare = h.workspace.join("sessions").join(".spare");
    let inode = |p: &std::path::Path| {
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).expect("a file"))
    };
    let spare_inode = inode(&spare);
    fake.push_reply(Reply::text("Hi again."));
    h.send("s2", "hello");
    h.turn("s2").await;
    assert_eq!(h.transcript("s2").len(), 2);
    let s2 = h.workspace.join("sessions").join("s2.jsonl");
    assert_eq!(
        inode(&s2),
        spare_inode,
        "the new session's file is the spare"
    );
    h.daily_log().await;
    assert!(spare.is_file(), "no spare after the second turn");
}

#[tokio::test]
async fn request_is_ordered_for_the_prefix_cache() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("read_file", r#"{"path": "notes.md"}"#)]),
        Reply::text("The note says hi."),
        Reply::text("Second answer."),
    ]);
    let mut h = start(&fake, |_| {});
    std::fs::write(h.workspace.join("notes.md"), "hi from the note\n").expect("write");
    h.send("s1", "what does notes.md say?");
    let events = h.turn("s1").await;
    assert_eq!(final_text(&events).as_deref(), Some("The note says hi."));
    let results = tool_results(&events);
    assert!(
        results[0].1 && results[0].2.contains("hi from the note"),
        "{results:?}"
    );
    h.send("s1", "and again?");
    h.turn("s1").await;

    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    for r in &requests {
        assert_eq!(r["cache_prompt"], true);
        assert_eq!(r["stream"], true);
        let system = r["messages"][0]["content"].as_str().unwrap_or("");
        assert!(system.starts_with(egirl::agent::STATIC_SYSTEM));
        assert!(system.contains("<file name=\"SOUL.md\">"));
        assert!(
            !system.contains("now:"),
            "volatile bits stay out of the system prompt"
        );
        // The tool list is byte-identical every time.
        assert_eq!(r["tools"], requests[0]["tools"]);
    }
    // Each request re-sends the previous one's messages byte for byte, then appends.
    for pair in requests.windows(2) {
        let before = pair[0]["messages"].as_array().expect("messages");
        let after = pair[1]["messages"].as_array().expect("messages");
        assert!(after.len() > before.len());
        assert_eq!(&after[..before.len()], &before[..]);
    }
    // The volatile block closes the new user message.
    let last_user = requests[2]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or(Value::Null);
    let content = last_user["content"].as_str().unwrap_or("");
    assert!(
        content.starts_with("and again?") && content.contains("<context>\nnow: "),
        "{content}"
    );
}

#[tokio::test]
async fn qwen3_history_is_sent_in_the_spec_format() {
    let fake = FakeLlama::start().await;
    let call = "Checking.\n<tool_call>\n{\"name\": \"glob\", \"arguments\": {\"pattern\": \"*.md\"}}\n</tool_call>";
    fake.push_replies([Reply::text(call), Reply::text("Found them.")]);
    let mut h = start(&fake, |c| c.local.tool_format = ToolFormat::Qwen3);
    h.send("q", "list markdown files");
    let events = h.turn("q").await;
    assert_eq!(final_text(&events).as_deref(), Some("Found them."));
    // The streamed text never showed the call.
    assert!(!events.iter().any(
        |e| matches!(e, EventKind::Delta(AnswerDelta { text }) if text.contains("tool_call"))
    ));

    let second = &fake.requests()[1];
    assert!(
        second.get("tools").is_none(),
        "qwen3 mode sends no native tools"
    );
    let messages = second["messages"].as_array().expect("messages");
    let system = messages[0]["content"].as_str().unwrap_or("");
    assert!(
        system.contains("<tools>\n{\"type\": \"function\"")
            || system.contains("<tools>\n{\"type\":\"function\""),
        "{system}"
    );
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["content"], call);
    assert_eq!(messages[3]["role"], "user");
    let response = messages[3]["content"].as_str().unwrap_or("");
    assert!(
        response.starts_with("<tool_response>\n") && response.ends_with("\n</tool_response>"),
        "{response}"
    );
    assert!(response.contains("AGENTS.md"), "{response}");
    assert!(messages.iter().all(|m| m["role"] != "tool"));
}

#[tokio::test]
async fn malformed_arguments_go_back_to_the_model() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("read_file", r#"{"path": "a.md",,, oops"#)]),
        Reply::text("Sorry, fixed."),
    ]);
    let mut h = start(&fake, |_| {});
    h.send("m", "read a.md");
    let events = h.turn("m").await;
    let results = tool_results(&events);
    assert!(
        !results[0].1 && results[0].2.contains("invalid JSON"),
        "{results:?}"
    );
    assert_eq!(final_text(&events).as_deref(), Some("Sorry, fixed."));
}

#[tokio::test]
async fn repeated_identical_calls_are_pointed_out() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("glob", r#"{"pattern": "*.md"}"#)]),
        Reply::tool_calls(&[("glob", r#"{"pattern": "*.md"}"#)]),
        Reply::text("done"),
    ]);
    let mut h = start(&fake, |_| {});
    h.send("r", "list");
    let events = h.turn("r").await;
    let results = tool_results(&events);
    assert!(results[0].1);
    assert!(
        !results[1].1 && results[1].2.contains("already called"),
        "{results:?}"
    );
}

#[tokio::test]
async fn max_turns_ends_the_loop_with_a_clear_error() {
    let fake = FakeLlama::start().await;
    for i in 0..3 {
        fake.push_reply(Reply::tool_calls(&[(
            "glob",
            &format!("{{\"pattern\": \"{i}*\"}}"),
        )]));
    }
    let mut h = start(&fake, |c| c.agent.max_turns = 3);
    h.send("x", "loop");
    let events = h.turn("x").await;
    let error = error_text(&events).expect("an error");
    assert!(error.contains("3 model requests"), "{error}");
    assert_eq!(fake.requests().len(), 3);
}

#[tokio::test]
async fn server_failures_are_one_clear_error_and_the_transcript_stays() {
    for (reply, expect) in [
        (Reply::status(500, "boom"), "500"),
        (Reply::text("partial answer").truncated(), "ended early"),
    ] {
        let fake = FakeLlama::start().await;
        fake.push_reply(reply);
        let mut h = start(&fake, |_| {});
        h.send("e", "hello");
        let events = h.turn("e").await;
        let error = error_text(&events).expect("an error event");
        assert!(error.contains(expect) && !error.contains('\n'), "{error}");
        assert_eq!(h.transcript("e").len(), 1, "the user message is kept");
        // In the daily log too, though the turn never answered.
        let log = h.daily_log().await;
        assert!(log.contains("· user · tui\n\nhello\n"), "{log}");
        // The next turn works.
        h.send("e", "again");
        let events = h.turn("e").await;
        assert_eq!(final_text(&events).as_deref(), Some("ok"));
    }
}

#[tokio::test]
async fn server_down_and_timeouts_are_reported() {
    let fake = FakeLlama::start().await;
    // Nothing listens on port 1.
    let mut h = start(&fake, |c| c.local.endpoint = "http://127.0.0.1:1".into());
    h.send("d", "hello");
    let events = h.turn("d").await;
    let error = error_text(&events).expect("an error event");
    assert!(error.contains("cannot reach"), "{error}");

    fake.push_reply(Reply::hang());
    let mut h = start(&fake, |c| {
        c.local.timeout = egirl::config::ConfigDuration(std::time::Duration::from_millis(300))
    });
    h.send("t", "hello");
    let events = h.turn("t").await;
    let error = error_text(&events).expect("an error event");
    assert!(error.contains("did not answer"), "{error}");
}

#[tokio::test]
async fn a_second_message_waits_for_the_running_turn() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::text("first answer is slow").frame_delay(std::time::Duration::from_millis(40)),
        Reply::text("second answer"),
    ]);
    let mut h = start(&fake, |_| {});
    h.send("q", "one");
    h.send("q", "two");
    let mut kinds = h.turn("q").await;
    kinds.extend(h.turn("q").await);
    let queued = kinds
        .iter()
        .position(|e| matches!(e, EventKind::Queued(Queued { position: 1, .. })));
    let first_end = kinds
        .iter()
        .position(|e| matches!(e, EventKind::TurnEnded(_)));
    assert!(queued.is_some() && queued < first_end, "{kinds:?}");
    let finals: Vec<String> = kinds
        .iter()
        .filter_map(|e| match e {
            EventKind::Final(FinalAnswer { text }) => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(finals, ["first answer is slow", "second answer"]);
    // The second request saw the whole first turn: nothing interleaved.
    let second = &fake.requests()[1];
    let roles: Vec<&str> = second["messages"]
        .as_array()
        .map(|m| m.iter().filter_map(|x| x["role"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
}

#[tokio::test]
async fn interrupt_stops_the_stream_promptly() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text("this never finishes").stall());
    let mut h = start(&fake, |_| {});
    h.send("i", "talk");
    loop {
        let e = h.next().await;
        if matches!(e.kind, EventKind::Delta(_)) {
            break;
        }
    }
    let asked = std::time::Instant::now();
    h.agent.submit(Op::Interrupt {
        session: "i".into(),
    });
    let events = h.turn("i").await;
    assert!(matches!(
        events.last(),
        Some(EventKind::TurnEnded(TurnEnded { interrupted: true }))
    ));
    eprintln!("interrupt took {:?}", asked.elapsed());
    // The partial answer is kept, marked.
    let t = h.transcript("i");
    assert!(
        t[1]["content"]
            .as_str()
            .unwrap_or("")
            .contains("[interrupted"),
        "{t:?}"
    );
    // The session is usable afterwards.
    h.send("i", "again");
    assert_eq!(final_text(&h.turn("i").await).as_deref(), Some("ok"));
}

#[tokio::test]
async fn resumed_session_sends_its_history() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("first"), Reply::text("second")]);
    let dir;
    {
        let mut h = start(&fake, |_| {});
        h.send("keep", "remember me");
        h.turn("keep").await;
        dir = h.workspace.clone();
        // Same workspace, new core: the session comes back from its transcript.
        let (agent, _task) = egirl::agent::spawn(super::config_for(&fake), dir.clone(), Vec::new());
        let mut events = agent.bus.subscribe();
        agent.submit(Op::UserMessage {
            images: Vec::new(),
            session: "keep".into(),
            origin: egirl::protocol::Origin::Cli,
            text: "do you?".into(),
        });
        while let Some(e) = events.recv().await {
            if matches!(e.kind, EventKind::TurnEnded(_)) {
                break;
            }
        }
        drop(h);
    }
    let second = &fake.requests()[1];
    let contents: Vec<&str> = second["messages"]
        .as_array()
        .map(|m| m.iter().filter_map(|x| x["content"].as_str()).collect())
        .unwrap_or_default();
    assert!(contents[1].starts_with("remember me"), "{contents:?}");
    assert_eq!(contents[2], "first");
    assert!(contents[3].starts_with("do you?"));
}

#[tokio::test]
async fn auto_mode_puts_tools_in_the_prompt_when_the_template_drops_them() {
    let fake = FakeLlama::start().await;
    fake.set_supports_tools(false);
    let call =
        "<tool_call>\n{\"name\": \"glob\", \"arguments\": {\"pattern\": \"*.md\"}}\n</tool_call>";
    fake.push_replies([Reply::text(call), Reply::text("done")]);
    let mut h = start(&fake, |c| c.local.tool_format = ToolFormat::Auto);
    h.send("a", "list");
    let events = h.turn("a").await;
    assert_eq!(final_text(&events).as_deref(), Some("done"));
    assert!(tool_results(&events)[0].1);
    for request in fake.requests() {
        assert!(request.get("tools").is_none());
        let system = request["messages"][0]["content"].as_str().unwrap_or("");
        assert!(system.contains("<tools>"), "{system}");
    }
}

#[tokio::test]
async fn sessions_get_their_own_slots_when_the_server_has_several() {
    let fake = FakeLlama::start().await;
    fake.set_total_slots(2);
    let mut h = start(&fake, |_| {});
    h.send("tui-1", "hi");
    h.turn("tui-1").await;
    h.send("discord-1", "hi");
    h.turn("discord-1").await;
    h.send("tui-1", "again");
    h.turn("tui-1").await;
    let slots: Vec<Value> = fake
        .requests()
        .iter()
        .map(|r| r["id_slot"].clone())
        .collect();
    assert_eq!(slots[0], slots[2], "{slots:?}");
    assert_ne!(slots[0], slots[1], "{slots:?}");
}

/// Session ids, in the order their deltas arrived.
async fn delta_order(h: &mut super::Harness, sessions: usize) -> Vec<String> {
    let mut order = Vec::new();
    let mut ended = 0;
    while ended < sessions {
        let event = h.next().await;
        match event.kind {
            EventKind::Delta(_) => order.push(event.session),
            EventKind::TurnEnded(_) => ended += 1,
            _ => {}
        }
    }
    order
}

#[tokio::test]
async fn sessions_share_the_local_server_up_to_max_concurrent() {
    let slow = || {
        Reply::text("one two three four five six").frame_delay(std::time::Duration::from_millis(30))
    };
    for (max_concurrent, interleaved) in [(1, false), (2, true)] {
        let fake = FakeLlama::start().await;
        fake.push_replies([slow(), slow()]);
        let mut h = start(&fake, |c| c.local.max_concurrent = max_concurrent);
        h.send("a", "go");
        h.send("b", "go");
        let order = delta_order(&mut h, 2).await;
        let switches = order.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(
            switches > 1,
            interleaved,
            "max_concurrent {max_concurrent}: {order:?}"
        );
    }
}

#[tokio::test]
async fn shutdown_cancels_the_running_turn_and_never_starts_queued_ones() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::hang(), Reply::text("must never be asked for")]);
    let mut h = start(&fake, |_| {});
    h.send("s", "first, slow");
    h.send("s", "second, queued");
    // Both accepted (the second queued) before the shutdown.
    loop {
        if matches!(h.next().await.kind, EventKind::Queued(_)) {
            break;
        }
    }
    // The first turn is waiting on the model.
    let start = std::time::Instant::now();
    while fake.hits("/v1/chat/completions") == 0 {
        assert!(start.elapsed().as_secs() < 15, "the first turn never asked");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(h.agent.submit(egirl::protocol::Op::Shutdown));
    let mut ended = Vec::new();
    while ended.len() < 2 {
        if let EventKind::TurnEnded(TurnEnded { interrupted }) = h.next().await.kind {
            ended.push(interrupted);
        }
    }
    assert_eq!(ended, [true, true]);
    assert_eq!(fake.hits("/v1/chat/completions"), 1, "the queued turn ran");
    assert!(!h.agent.busy());
}
