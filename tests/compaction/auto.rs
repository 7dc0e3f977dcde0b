//! Auto-compaction when the prompt passes `compact_at`.

use super::*;
use crate::support::cli::of_type;

#[tokio::test]
async fn a_long_session_compacts_once_and_resumes_from_the_summary() {
    let (fake, cli) = setup("").await;
    two_turns(&fake, &cli, "day").await;
    let before = fake.requests().len();
    fake.push_replies([
        Reply::tool_calls(&[(
            "memory_save",
            r#"{"text": "the user tests compaction", "long_term": true}"#,
        )]),
        Reply::text("SUMMARY-XYZ: the user asked questions 1 and 2."),
        Reply::text("answer 3"),
    ]);
    let ev = turn(&cli, "day", &big(3)).await;

    let compactions = of_type(&ev, "compaction");
    assert_eq!(compactions.len(), 1, "{ev:?}");
    let c = compactions[0];
    // Turn 1 (question and answer) went; turn 2 and the current one stay.
    assert_eq!(c["summarized_messages"], 2);
    assert_eq!(c["model"], "fake");
    assert!(
        c["summary"]
            .as_str()
            .unwrap_or("")
            .starts_with("SUMMARY-XYZ")
    );
    let (b, a) = (c["before_tokens"].as_u64(), c["after_tokens"].as_u64());
    assert!(a.unwrap_or(0) > 0 && a < b, "{c}");
    // The flush's call is shown and ran; its text and the summary never stream.
    let call = of_type(&ev, "tool_call");
    assert_eq!(call.len(), 1);
    assert_eq!(call[0]["name"], "memory_save");
    assert_eq!(of_type(&ev, "tool_result")[0]["success"], true);
    assert!(
        of_type(&ev, "delta")
            .iter()
            .all(|d| !d["text"].as_str().unwrap_or("").contains("SUMMARY")),
        "the summary streamed"
    );
    assert_eq!(of_type(&ev, "final")[0]["text"], "answer 3");
    let memory = std::fs::read_to_string(cli.workspace().join("MEMORY.md")).unwrap_or_default();
    assert!(memory.contains("the user tests compaction"), "{memory}");

    // Flush, one summary request, then the turn's own request.
    let requests = fake.requests()[before..].to_vec();
    assert_eq!(requests.len(), 3);
    assert!(super::asks(&requests[0], FLUSH_ASK));
    assert!(super::asks(&requests[1], SUMMARY_ASK));
    assert_eq!(
        fake.requests()
            .iter()
            .filter(|r| super::asks(r, SUMMARY_ASK))
            .count(),
        1
    );
    // The summary request carries what it summarizes, with the turn's tools.
    assert!(sends(&requests[1], "question 1:") && !sends(&requests[1], "question 3:"));
    assert!(
        requests[1]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
    let main = &requests[2];
    // The summary is in the system prompt, fenced; the history goes on
    // with the kept turn.
    assert_eq!(main["messages"][0]["role"], "system");
    assert!(
        main["messages"][0]["content"]
            .as_str()
            .unwrap_or("")
            .contains("```summary\nSUMMARY-XYZ")
    );
    assert_eq!(main["messages"][1]["role"], "user");
    assert!(super::user_messages_holding(main, "SUMMARY-XYZ").is_empty());
    assert!(!sends(main, "question 1:"));
    assert!(sends(main, "question 2:") && sends(main, "question 3:"));

    // Every original record stays, plus one compaction record.
    let records = transcript(&cli, "day");
    for n in 1..=3 {
        let q = format!("question {n}:");
        assert!(
            records
                .iter()
                .any(|r| r["role"] == "user" && r["content"].as_str().unwrap_or("").contains(&q)),
            "{q} lost"
        );
    }
    let marks: Vec<&Value> = records
        .iter()
        .filter(|r| r["compaction"].is_object())
        .collect();
    assert_eq!(marks.len(), 1);
    assert!(
        marks[0]["content"]
            .as_str()
            .unwrap_or("")
            .starts_with("SUMMARY-XYZ")
    );

    // Resumed: the next run starts from the summary and the kept turns,
    // and the prefix stays put on the turn after.
    fake.push_reply(Reply::text("answer 4"));
    let ev = turn(&cli, "day", "question 4: short").await;
    assert!(of_type(&ev, "compaction").is_empty());
    let resumed = fake.requests().last().cloned().unwrap_or_default();
    assert!(
        resumed["messages"][0]["content"]
            .as_str()
            .unwrap_or("")
            .contains("```summary\nSUMMARY-XYZ")
    );
    assert!(!sends(&resumed, "question 1:"));
    assert!(sends(&resumed, "question 2:") && sends(&resumed, "question 4:"));
    let before: Vec<&Value> = main["messages"].as_array().into_iter().flatten().collect();
    let after: Vec<&Value> = resumed["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(
        before[..],
        after[..before.len()],
        "the resumed prompt re-sends the compacted history byte for byte"
    );
}

#[tokio::test]
async fn a_failed_summary_drops_the_oldest_turns_with_a_notice() {
    let (fake, cli) = setup("").await;
    two_turns(&fake, &cli, "fails").await;
    let before = fake.requests().len();
    fake.push_replies([
        Reply::text("NONE"),
        Reply::status(500, r#"{"error": {"message": "summary exploded"}}"#),
        Reply::text("answer 3"),
    ]);
    let ev = turn(&cli, "fails", &big(3)).await;
    assert!(of_type(&ev, "compaction").is_empty(), "{ev:?}");
    let notice = of_type(&ev, "notice")
        .into_iter()
        .find_map(|n| {
            n["message"]
                .as_str()
                .filter(|m| m.contains("compaction failed"))
        })
        .unwrap_or_else(|| panic!("no fallback notice: {ev:?}"));
    assert!(notice.contains("oldest messages"), "{notice}");
    // The flush ran silently: no tool call, its text not shown.
    assert!(of_type(&ev, "tool_call").is_empty());
    assert!(of_type(&ev, "delta").iter().all(|d| d["text"] != "NONE"));
    assert_eq!(of_type(&ev, "final")[0]["text"], "answer 3");
    let main = fake.requests().last().cloned().unwrap_or_default();
    assert_eq!(fake.requests().len() - before, 3);
    assert!(
        !sends(&main, "question 1:"),
        "the oldest turn is still sent"
    );
    assert!(sends(&main, "question 2:") && sends(&main, "question 3:"));
    let records = transcript(&cli, "fails");
    assert!(records.iter().all(|r| r.get("compaction").is_none()));
    assert_eq!(
        records.iter().filter(|r| r["role"] == "user").count(),
        3,
        "a user message was lost"
    );
}

#[tokio::test]
async fn compact_at_zero_leaves_the_window_as_it_was() {
    let (fake, cli) = setup("compact_at = 0\n").await;
    two_turns(&fake, &cli, "off").await;
    fake.push_reply(Reply::text("answer 3"));
    let ev = turn(&cli, "off", &big(3)).await;
    assert!(of_type(&ev, "compaction").is_empty());
    assert!(fake.requests().iter().all(|r| !super::asks(r, SUMMARY_ASK)));
    assert_eq!(of_type(&ev, "final")[0]["text"], "answer 3");
}
