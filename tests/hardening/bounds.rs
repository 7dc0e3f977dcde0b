//! Bounds (issue 14, findings 5 and 11), replayed against the real binary:
//! a model stream cannot make egirl allocate what an index says or grow
//! without end, and one turn whose tool outputs exceed the window is
//! trimmed to fit instead of failing.

use serde_json::Value;

use crate::support::cli::{Cli, events, stderr};
use crate::support::fake_llama::{FakeLlama, Reply, count_tokens, render_prompt};

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// Finding 11: five `read_file`s of ~30 KB files at the default 32,768
/// context. The old main failed the turn ("needs N prompt tokens ... the
/// window allows M"); now the outputs are trimmed with a marker and the
/// turn completes with every request inside the window.
#[tokio::test]
async fn five_large_reads_in_one_turn_are_trimmed_to_fit_the_window() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    let mut calls = Vec::new();
    for n in 0..5 {
        // 300 lines of 100 bytes: ~30 KB, under read_file's own limits.
        let text: String = (1..=300)
            .map(|line| format!("file {n} line {line:03} {}\n", "x".repeat(82)))
            .collect();
        std::fs::write(ws.join(format!("f{n}.txt")), text).unwrap();
        calls.push(("read_file", format!(r#"{{"path": "f{n}.txt"}}"#)));
    }
    let calls: Vec<(&str, &str)> = calls.iter().map(|(n, a)| (*n, a.as_str())).collect();
    fake.push_replies([Reply::tool_calls(&calls), Reply::text("read them all")]);

    let out = cli.run(&["-m", "read the five files", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    assert_eq!(of_type(&ev, "final")[0]["text"], "read them all");
    // Each output reached the surfaces whole.
    let results = of_type(&ev, "tool_result");
    assert_eq!(results.len(), 5);
    for result in &results {
        assert_eq!(result["success"], true, "{result}");
        assert!(result["output"].as_str().unwrap().contains("line 300"));
    }
    assert!(
        of_type(&ev, "notice").iter().any(|n| n["message"]
            .as_str()
            .unwrap()
            .contains("trimmed 5 tool output")),
        "{ev:?}"
    );

    // The second request carries the outputs trimmed, head and tail kept
    // around a marker, and fits the window.
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let sent = &requests[1];
    let tokens = count_tokens(&render_prompt(sent), true);
    assert!(tokens < 32768, "{tokens}");
    let outputs: Vec<&str> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(outputs.len(), 5);
    for (n, output) in outputs.iter().enumerate() {
        assert!(
            output.starts_with(&format!("f{n}.txt (300 lines)\n")),
            "{output:.80}"
        );
        assert!(
            output.contains(&format!("file {n} line 300")),
            "the tail is kept"
        );
        assert!(
            output.contains("lines (") && output.contains("bytes) of this output left out"),
            "{output}"
        );
    }

    // The transcript keeps every output whole.
    let sessions = ws.join("sessions");
    let transcript: String = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    for n in 0..5 {
        assert!(transcript.contains(&format!("file {n} line 150")));
    }
    assert!(!transcript.contains("left out to fit"));
}
