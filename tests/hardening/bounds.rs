//! Bounds (docs/security.md, "Bounds"), replayed against the real binary:
//! a model stream cannot make egirl allocate what an index says or grow
//! without end, and one turn whose tool outputs exceed the window is
//! trimmed to fit instead of failing.

use crate::support::cli::{Cli, events, of_type, stderr};
use crate::support::fake_llama::{FakeLlama, Reply, count_tokens, render_prompt};
use crate::support::fake_openai::{self, FakeOpenAi};

/// Five `read_file`s of ~30 KB files at the default 32,768
/// context. The old main failed the turn ("needs N prompt tokens ... the
/// window allows M"); now the outputs are trimmed with a marker and the
/// turn completes with every request inside the window.
#[tokio::test]
async fn five_large_reads_in_one_turn_are_trimmed_to_fit_the_window() {
    five_large_reads(true).await;
}

/// The same against a server that cannot count tokens (vLLM, Ollama):
/// egirl's own estimates trim the outputs.
#[tokio::test]
async fn five_large_reads_fit_without_the_servers_token_counts() {
    five_large_reads(false).await;
}

async fn five_large_reads(token_endpoints: bool) {
    let fake = FakeLlama::start().await;
    fake.set_token_endpoints(token_endpoints);
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

/// A streamed tool-call index of 4,000,000,000 once aborted the
/// process on a 288 GB allocation. Now the reply fails with one line and
/// egirl exits normally.
#[tokio::test]
async fn a_huge_tool_call_index_fails_the_reply_with_one_line() {
    let fake = FakeLlama::start().await;
    let frame = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":4000000000,"id":"c1","type":"function","function":{"name":"exec","arguments":"{}"}}]},"finish_reason":null}]}"#;
    let end = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#;
    fake.push_reply(Reply::raw_sse(&format!(
        "data: {frame}\n\ndata: {end}\n\ndata: [DONE]\n\n"
    )));
    let cli = Cli::new(&fake, "");
    let out = cli.run(&["-m", "hi", "--json"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let ev = events(&out);
    let errors = of_type(&ev, "error");
    assert_eq!(errors.len(), 1, "{ev:?}");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(message.contains("tool call 4000000000"), "{message}");
    assert!(message.contains("at most 64"), "{message}");
    assert!(!message.contains('\n'));
    assert_eq!(ev.last().unwrap()["type"], "turn_ended");

    // Without --json: the same, as one line on stderr.
    fake.push_reply(Reply::raw_sse(&format!(
        "data: {frame}\n\ndata: {end}\n\ndata: [DONE]\n\n"
    )));
    let out = cli.run(&["-m", "hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let said: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("egirl:"))
        .map(str::to_string)
        .collect();
    assert_eq!(said.len(), 1, "{}", stderr(&out));
    assert!(said[0].contains("tool call 4000000000"), "{said:?}");
}

/// The same stream from OpenAI (the parser is shared with Azure): the
/// remote reply fails with one line and the turn goes on locally.
#[tokio::test]
async fn a_huge_tool_call_index_from_openai_fails_that_reply_only() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text("answered locally"));
    let cloud = FakeOpenAi::start().await;
    let frame = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":4000000000,"id":"c1","type":"function","function":{"name":"exec","arguments":"{}"}}]},"finish_reason":null}]}"#;
    cloud.push(fake_openai::Reply::raw_sse(&format!(
        "data: {frame}\n\ndata: [DONE]\n\n"
    )));
    let extra = format!(
        "[routing]\nalways_remote = [\"greeting\"]\n[remote.openai]\nmodel = \"gpt-test\"\nbase_url = \"{}/v1\"\n",
        cloud.url()
    );
    let cli = Cli::new(&fake, &extra);
    let out = cli
        .run_with_env(
            &["-m", "hi", "--json"],
            &[("OPENAI_API_KEY", "sk-test-key")],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    assert_eq!(cloud.hits(), 1, "{ev:?}");
    let notices = of_type(&ev, "notice");
    assert!(
        notices.iter().any(|n| {
            let m = n["message"].as_str().unwrap();
            m.contains("tool call 4000000000") && m.contains("answering locally")
        }),
        "{notices:?}"
    );
    assert_eq!(of_type(&ev, "final")[0]["text"], "answered locally");
}

/// The largest resident set of any child process this test binary has
/// waited for, in bytes (Linux reports kilobytes). Other tests' children
/// count too, so it is an upper bound on this test's egirl.
fn children_max_rss() -> u64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct it is given.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(rc, 0);
    usage.ru_maxrss as u64 * 1024
}

/// A server that never stops streaming once grew egirl to 5.9 GB.
/// Now the reply is cut at the 4 MiB cap: the stream is dropped, a notice
/// says so, and the turn ends with what arrived. The fake stops after
/// 64 MiB (the old main read all of it and failed on the truncated stream).
#[tokio::test]
async fn a_server_that_never_stops_is_cut_at_the_reply_cap() {
    const CAP: usize = 4 << 20;
    let fake = FakeLlama::start().await;
    let piece = "all work and no play ".repeat(400); // 8,400 bytes a frame
    fake.push_reply(Reply::endless(&piece, 64 << 20));
    let cli = Cli::new(&fake, "");
    let out = cli.run(&["-m", "talk forever", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let notices = of_type(&ev, "notice");
    assert!(
        notices
            .iter()
            .any(|n| n["message"].as_str().unwrap().contains("reply cap (4 MiB")),
        "{notices:?}"
    );
    let streamed: usize = of_type(&ev, "delta")
        .iter()
        .map(|d| d["text"].as_str().unwrap().len())
        .sum();
    assert!(
        streamed <= CAP && streamed > CAP - piece.len(),
        "{streamed}"
    );
    let answer = of_type(&ev, "final")[0]["text"].as_str().unwrap().len();
    assert!(answer <= CAP && answer > CAP - piece.len(), "{answer}");
    assert_eq!(ev.last().unwrap()["type"], "turn_ended");
    let rss = children_max_rss();
    eprintln!("largest child resident set: {} MB", rss >> 20);
    assert!(rss < 500 << 20, "{} MB", rss >> 20);
}
