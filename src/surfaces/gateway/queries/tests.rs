use super::*;
use crate::protocol::wire::TranscriptItem;

/// A transcript line at minute `m` of a fixed hour.
fn at(m: u32) -> String {
    format!("2026-11-26T04:{m:02}:00Z")
}

fn write(workspace: &Path, id: &str, lines: &[String]) {
    let dir = workspace.join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{id}.jsonl")), lines.join("\n") + "\n").unwrap();
}

fn user(m: u32, origin: &str, text: &str) -> String {
    serde_json::json!({"ts": at(m), "origin": origin, "role": "user", "content": text}).to_string()
}

fn reply(m: u32, text: &str) -> String {
    serde_json::json!({"ts": at(m), "origin": "tui", "provider": "llamacpp",
        "role": "assistant", "content": text,
        "tool_calls": [{"id": "c1", "name": "exec", "arguments": {"command": "ls"}}]})
    .to_string()
}

fn live(id: &str, busy: bool) -> LiveSession {
    LiveSession {
        id: id.into(),
        origin: "web".into(),
        busy,
        agent: None,
    }
}

#[test]
fn sessions_list_the_live_first_then_the_newest_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    write(ws, "old", &[user(1, "discord:123", "first line\nsecond")]);
    write(ws, "new", &[user(1, "tui", "hi"), reply(9, "hello")]);
    write(ws, "open", &[user(5, "tui", &"x".repeat(200))]);
    std::fs::write(ws.join("sessions/not-a-transcript.txt"), "").unwrap();
    let Reply::Sessions { sessions } = list_sessions(ws, vec![live("open", true)]) else {
        panic!("not sessions");
    };
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["open", "new", "old"]);
    assert!(sessions[0].live && sessions[0].busy && sessions[0].origin == "web");
    assert_eq!(sessions[0].title.chars().count(), 80);
    assert!(sessions[0].title.ends_with('…'));
    assert_eq!(sessions[1].messages, 2);
    assert_eq!(
        sessions[1].last_activity.to_rfc3339(),
        "2026-11-26T04:09:00+00:00"
    );
    assert!(!sessions[1].live);
    assert_eq!(sessions[2].title, "first line");
    assert_eq!(sessions[2].origin, "discord:123");
}

#[test]
fn a_live_session_without_a_transcript_is_listed() {
    let dir = tempfile::tempdir().unwrap();
    let Reply::Sessions { sessions } = list_sessions(dir.path(), vec![live("fresh", false)]) else {
        panic!("not sessions");
    };
    assert_eq!(sessions.len(), 1);
    assert_eq!((sessions[0].messages, sessions[0].live), (0, true));
}

#[test]
fn a_transcript_shows_every_line_in_order_with_its_marks() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let lines = [
        serde_json::json!({"ts": at(0), "mark": "forked_from", "session": "base"}).to_string(),
        serde_json::json!({"ts": at(0), "origin": "tui", "role": "system", "content": "prompt"})
            .to_string(),
        user(1, "web", "run ls"),
        reply(2, ""),
        serde_json::json!({"ts": at(3), "origin": "web", "role": "tool",
            "content": "denied by user", "tool_call_id": "c1", "name": "exec"})
        .to_string(),
        serde_json::json!({"ts": at(4), "origin": "web", "role": "system", "content": "the summary",
            "compaction": {"kept": 1, "summarized_messages": 3, "before_tokens": 900,
                "after_tokens": 200, "model": "local"}})
        .to_string(),
        serde_json::json!({"ts": at(5), "mark": "rewound", "keep": 2, "turn": 1}).to_string(),
    ];
    write(ws, "t", &lines);
    let Reply::Transcript(t) = transcript::transcript(ws, "t") else {
        panic!("not a transcript");
    };
    assert!(!t.truncated);
    let kinds: Vec<String> = t
        .items
        .iter()
        .map(|i| {
            serde_json::to_value(i).unwrap()["item"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "forked_from",
            "user",
            "assistant",
            "tool_result",
            "compaction",
            "rewound"
        ]
    );
    let TranscriptItem::ToolResult { denied, name, .. } = &t.items[3] else {
        panic!("not a tool result");
    };
    assert!(*denied && name == "exec");
    let TranscriptItem::Assistant { tool_calls, .. } = &t.items[2] else {
        panic!("not an answer");
    };
    assert_eq!(tool_calls[0].arguments["command"], "ls");
}

#[test]
fn only_the_newest_items_are_sent() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..transcript::MAX_ITEMS + 3)
        .map(|n| user(0, "tui", &format!("m{n}")))
        .collect();
    write(dir.path(), "long", &lines);
    let Reply::Transcript(t) = transcript::transcript(dir.path(), "long") else {
        panic!("not a transcript");
    };
    assert!(t.truncated);
    assert_eq!(t.items.len(), transcript::MAX_ITEMS);
    let TranscriptItem::User { text, .. } = &t.items[0] else {
        panic!("not a user item");
    };
    assert_eq!(text, "m3");
}

#[test]
fn cron_and_stats_read_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let job = crate::cron::Job {
        id: "daily".into(),
        schedule: crate::cron::Schedule::every("1h").unwrap(),
        message: "check the mail".into(),
        deliver: Default::default(),
        enabled: true,
        created_at: Utc::now(),
        next_run: Some(Utc::now()),
        last_run: None,
        last_status: None,
        consecutive_errors: 0,
    };
    CronStore::in_workspace(ws).add(job).unwrap();
    let Reply::Cron { jobs } = cron(ws) else {
        panic!("not cron");
    };
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].schedule, "every 1h");
    assert_eq!(jobs[0].session, "cron-daily");
    assert!(jobs[0].next_run.is_some() && jobs[0].describe.contains("daily"));

    let Reply::Stats { rows, .. } = stats(ws) else {
        panic!("not stats");
    };
    assert!(rows.is_empty(), "no usage log yet");
    let now = Utc::now().to_rfc3339();
    let line = |provider: &str, cost: f64| {
        serde_json::json!({"ts": now, "session": "s", "origin": "tui", "provider": provider,
            "model": "m", "input_tokens": 10, "output_tokens": 2, "cost_usd": cost})
        .to_string()
    };
    let yesterday = serde_json::json!({"ts": "2020-01-01T00:00:00Z", "session": "s",
        "origin": "tui", "provider": "anthropic", "model": "m", "cost_usd": 9.0});
    let text = [
        line("anthropic", 0.5),
        line("anthropic", 0.25),
        line("llamacpp", 0.0),
    ]
    .join("\n")
        + &format!("\n{yesterday}\n");
    let path = usage_log::path(ws);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    let Reply::Stats {
        rows,
        total_cost_usd,
    } = stats(ws)
    else {
        panic!("not stats");
    };
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0].provider.as_str(), rows[0].requests),
        ("anthropic", 2)
    );
    assert_eq!(rows[0].input_tokens, 20);
    assert!((total_cost_usd - 0.75).abs() < 1e-9);
}
