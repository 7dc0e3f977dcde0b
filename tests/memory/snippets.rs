//! A hit shows the lines that matched, not its chunk's first lines (issue
//! 15): the planted fact at line 43 of a MEMORY.md of 40 filler facts,
//! through the real binary, with vectors, with full text only, and found by
//! meaning alone.

use serde_json::Value;

use crate::support::cli::{Cli, events, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

const FACT: &str = "My favorite text editor is Helix.";

/// `# Memory`, a blank line, 40 facts that all say "favorite" (lines
/// 3-42), and the one that answers at line 43: the chunk that holds it
/// starts some twenty lines earlier and ends on it.
fn planted_memory() -> String {
    let things = [
        "color", "season", "fruit", "river", "mountain", "city", "bird", "tree",
    ];
    let mut text = String::from("# Memory\n\n");
    for i in 1..=40 {
        let thing = things[i % things.len()];
        text.push_str(&format!(
            "- Fact {i}: my favorite {thing} changed during week {i} of a long and busy year.\n"
        ));
    }
    text.push_str(FACT);
    text.push('\n');
    text
}

fn cli_with_memory(fake: &FakeLlama, extra: &str) -> Cli {
    let cli = Cli::new(fake, extra);
    std::fs::create_dir_all(cli.workspace()).expect("workspace");
    std::fs::write(cli.workspace().join("MEMORY.md"), planted_memory()).expect("MEMORY.md");
    cli
}

fn embeddings(fake: &FakeLlama) -> String {
    format!(
        "[local.embeddings]\nendpoint = \"{}\"\nmodel = \"fake-embed\"\n",
        fake.url()
    )
}

/// The first hit of `egirl memory search QUERY --json`, and its fallback.
async fn cli_search(cli: &Cli, query: &str) -> (Value, Value) {
    let out = cli.run(&["memory", "search", query, "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    (json["hits"][0].clone(), json["fallback"].clone())
}

/// The hit shows line 43 as its best line, inside the chunk, which ends
/// on it and starts well before what the snippet shows.
fn assert_answers(hit: &Value) {
    assert_eq!(hit["path"], "MEMORY.md", "{hit}");
    let snippet = hit["snippet"].as_str().unwrap_or_default();
    assert!(snippet.contains(FACT), "{hit}");
    assert!(snippet.chars().count() <= 500, "{hit}");
    assert_eq!(hit["best_line"], 43, "{hit}");
    assert_eq!(
        hit["end_line"], 43,
        "the match is the chunk's last line: {hit}"
    );
    assert_eq!(hit["snippet_end_line"], 43, "{hit}");
    let line = |key: &str| hit[key].as_u64().unwrap_or_default();
    assert!(
        line("start_line") < line("snippet_start_line"),
        "the chunk is longer than the snippet: {hit}"
    );
    assert_eq!(
        snippet.lines().count() as u64,
        line("snippet_end_line") - line("snippet_start_line") + 1,
        "{hit}"
    );
}

/// The model calls `memory_search` and gets the answering line; so does
/// the memory pane's event and `egirl memory search --json`.
async fn planted_fact_is_shown(extra: &str, fake: &FakeLlama, fallback: Value) {
    fake.push_replies([
        Reply::tool_calls(&[("memory_search", r#"{"query": "favorite text editor"}"#)]),
        Reply::text("Helix."),
    ]);
    let cli = cli_with_memory(fake, extra);
    let out = cli.run(&["-m", "what do I write code in?", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);

    let result = ev
        .iter()
        .find(|e| e["type"] == "tool_result" && e["name"] == "memory_search")
        .expect("a memory_search result");
    assert_eq!(result["success"], true, "{result}");
    let output: Value =
        serde_json::from_str(result["output"].as_str().unwrap_or_default()).expect("JSON output");
    assert_eq!(output["fallback"], fallback, "{output}");
    assert_answers(&output["hits"][0]);

    let hits = ev
        .iter()
        .find(|e| e["type"] == "memory_hits")
        .expect("memory_hits for the pane");
    assert_answers(&hits["hits"][0]);

    // What the model read next holds the answer.
    let requests = fake.requests();
    let next = requests.last().expect("a second request");
    let tool_message = next["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "tool")
        .expect("the tool result in the next request");
    assert!(
        tool_message["content"]
            .as_str()
            .is_some_and(|c| c.contains(FACT)),
        "{tool_message}"
    );

    let (hit, cli_fallback) = cli_search(&cli, "favorite text editor").await;
    assert_eq!(cli_fallback, fallback);
    assert_answers(&hit);

    // The plain listing names the line that matched under the hit.
    let out = cli.run(&["memory", "search", "favorite text editor"]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("       43: {FACT}\n")), "{text}");
}

#[tokio::test]
async fn the_planted_fact_reaches_the_model_with_vectors() {
    let fake = FakeLlama::start().await;
    planted_fact_is_shown(&embeddings(&fake), &fake, Value::Null).await;
}

#[tokio::test]
async fn the_planted_fact_reaches_the_model_with_full_text_only() {
    let fake = FakeLlama::start().await;
    planted_fact_is_shown("", &fake, Value::from("fts")).await;
}

/// No word of the query is in the file ("IDE"; the embedder knows it
/// means "editor"): the hit is found by its vector, and its snippet is the
/// line whose own vector is nearest the query's.
#[tokio::test]
async fn a_hit_by_meaning_alone_shows_its_nearest_line() {
    let fake = FakeLlama::start().await;
    fake.set_embedding_synonym("ide", "editor");
    let extra = format!("{}[memory]\nmin_score = 0.0\n", embeddings(&fake));
    let cli = cli_with_memory(&fake, &extra);
    let (hit, fallback) = cli_search(&cli, "IDE").await;
    assert_eq!(fallback, Value::Null);
    assert_answers(&hit);
    assert!(
        fake.embedded_texts().iter().any(|t| t == FACT),
        "the chunk's lines were embedded"
    );
}
