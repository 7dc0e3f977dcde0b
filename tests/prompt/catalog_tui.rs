//! A resumed transcript shows a catalog call as the tool it ran, as the
//! live view did (the transcript keeps the call as the model sent it).

use egirl::chat::{ChatMessage, ToolCall};
use egirl::protocol::Origin;
use egirl::sessions::{Record, Transcript};

use crate::tui::{SESSION, app, screen};

fn record(message: ChatMessage) -> Record {
    Record::now(Origin::Tui, message)
}

#[test]
fn a_resumed_catalog_call_shows_as_the_tool_it_ran() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut t, _) = Transcript::open(dir.path(), SESSION).expect("open transcript");
    let call = ToolCall {
        id: "call-1".into(),
        name: "more_tools".into(),
        arguments: serde_json::json!({"name": "cron_list", "arguments": {}}),
        arguments_error: None,
    };
    let mut asks = ChatMessage::assistant("");
    asks.tool_calls = vec![call.clone()];
    for m in [
        ChatMessage::user("what is scheduled?"),
        asks,
        ChatMessage::tool_result(&call, "stretch: every 2h"),
        ChatMessage::assistant("One job: stretch, every two hours."),
    ] {
        t.append(&record(m)).expect("append");
    }
    let records =
        egirl::sessions::load(&Transcript::path(dir.path(), SESSION)).expect("load transcript");
    let mut app = app();
    app.load_history(SESSION, &records);
    let tool = app.tools.iter().next().expect("tool record");
    assert_eq!(tool.call.name, "cron_list");
    assert_eq!(tool.call.arguments, serde_json::json!({}));
    assert_eq!(tool.output, "stretch: every 2h");
    let shown = screen(&app, 120, 30);
    assert!(shown.contains("cron_list"), "{shown}");
}
