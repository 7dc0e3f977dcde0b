//! `egirl memory search Q [--json]` and `egirl memory reindex`: the memory
//! index from the shell. Both bring the index up to date first (only files
//! that changed); without embeddings, search is full-text and says so.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressStyle};

use super::{EXIT_OK, Environment, Exit};
use crate::memory::{Memory, Progress, SearchResult};
use crate::print;
use crate::providers::remote::RemoteProviders;

#[derive(Debug, clap::Args)]
pub struct MemoryArgs {
    #[command(subcommand)]
    pub command: MemoryCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum MemoryCommand {
    /// Search MEMORY.md and the daily logs (hybrid: full-text and vectors).
    Search {
        /// What to look for (several words are one query).
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
        /// Print {"query", "fallback", "hits"} as one JSON object.
        #[arg(long)]
        json: bool,
        /// Hits to show (default: [memory] max_results).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100))]
        max_results: Option<u64>,
        /// Leave out hits scoring below this, 0 to 1 (default: [memory] min_score).
        #[arg(long, value_name = "SCORE")]
        min_score: Option<f64>,
    },
    /// Bring the index up to date with the files (only what changed).
    Reindex,
}

pub async fn run(env: &Environment, args: &MemoryArgs) -> Result<u8, Exit> {
    let remote = RemoteProviders::from_config(&env.config.remote, &env.secrets);
    let memory = Arc::new(
        Memory::new(&env.workspace, &env.config, &remote).with_redactor(env.redactor.clone()),
    );
    match &args.command {
        MemoryCommand::Search {
            query,
            json,
            max_results,
            min_score,
        } => {
            if min_score.is_some_and(|s| !(0.0..=1.0).contains(&s)) {
                return Err(Exit::usage("--min-score must be between 0 and 1"));
            }
            let query = query.join(" ");
            let result = memory
                .search(&query, max_results.map(|m| m as usize), *min_score)
                .await
                .map_err(|e| Exit::failure(format!("memory search failed: {e:#}")))?;
            for notice in &result.notices {
                print::err(format_args!("egirl: {notice}"));
            }
            let written = if *json {
                let line = serde_json::to_string(&result)
                    .map_err(|e| Exit::failure(format!("cannot encode the result: {e}")))?;
                print::out_json(&line)
            } else {
                print::out(&human(&result, memory.has_embedder()))
            };
            written.map_err(|e| Exit::failure(format!("cannot write to stdout: {e}")))?;
            Ok(EXIT_OK)
        }
        MemoryCommand::Reindex => reindex(&memory).await,
    }
}

/// Hits as `score  path:start-end` with the line that matched under it.
fn human(result: &SearchResult, has_embedder: bool) -> String {
    let mut out = String::new();
    if result.fallback.is_some() {
        out.push_str(if has_embedder {
            "(full-text only: the embeddings server did not answer)\n"
        } else {
            "(full-text only: no embeddings configured)\n"
        });
    }
    if result.hits.is_empty() {
        out.push_str("no memory matched\n");
    }
    for hit in &result.hits {
        out.push_str(&format!(
            "{:.3}  {}:{}-{}\n",
            hit.score, hit.path, hit.start_line, hit.end_line
        ));
        // The line that matched, with its number.
        let first: String = hit.matched_line().chars().take(100).collect();
        let first = if hit.best_line > 0 {
            format!("{}: {first}", hit.best_line)
        } else {
            first
        };
        out.push_str(&format!("       {first}\n"));
    }
    out
}

async fn reindex(memory: &Arc<Memory>) -> Result<u8, Exit> {
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(0);
        if let Ok(style) =
            ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} chunks ({eta})")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message("embedding");
        bar
    });
    // Plain lines off a terminal: one per tenth of the work at most.
    let last_printed = Mutex::new(0usize);
    let progress = |p: Progress| match (p, &bar) {
        (
            Progress::Planned {
                files,
                changed,
                to_embed,
            },
            _,
        ) => {
            let line = format!(
                "memory: {files} files, {changed} changed, {to_embed} chunk texts to embed"
            );
            match &bar {
                Some(bar) => {
                    bar.println(line);
                    bar.set_length(to_embed as u64);
                }
                None => print::err(line),
            }
        }
        (Progress::Embedded { done, .. }, Some(bar)) => bar.set_position(done as u64),
        (Progress::Embedded { done, total }, None) => {
            let mut last = last_printed.lock().unwrap_or_else(|e| e.into_inner());
            if done == total || done - *last >= total.div_ceil(10) {
                *last = done;
                print::err(format_args!("memory: embedded {done}/{total}"));
            }
        }
    };
    let report = memory.sync(Some(&progress)).await;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let report = report.map_err(|e| Exit::failure(format!("memory reindex failed: {e:#}")))?;
    for notice in &report.notices {
        print::err(format_args!("egirl: {notice}"));
    }
    if let Some(e) = &report.embed_error {
        print::err(format_args!(
            "egirl: embeddings failed ({e}); full-text search works, the next reindex adds the vectors"
        ));
    }
    let (files, chunks, vectors) = memory
        .counts()
        .await
        .map_err(|e| Exit::failure(format!("memory index: {e:#}")))?;
    print::out(&format!(
        "memory index: {files} files, {chunks} chunks, {vectors} vectors ({} re-indexed, {} removed, {} embedded)\n",
        report.indexed, report.removed, report.embedded
    ))
    .map_err(|e| Exit::failure(format!("cannot write to stdout: {e}")))?;
    Ok(EXIT_OK)
}
