//! Memory search and indexing: 100,000 chunks with 768-dimension
//! vectors. Hybrid search p50/p99 and full-text-only p50 through
//! `Memory::search` (the no-change check of the files, the query embedding
//! over HTTP, FTS5, the vector scan, the hits' text) with the memory
//! watcher running, as the agent runs it (its word spares the check a stat
//! of every file), and hybrid once more through a memory with no watcher;
//! against a bare
//! brute-force `f32` cosine scan over the same vectors in the same run
//! (target: hybrid p50 at most a third of the 1-thread scan's, and under
//! 50 ms). The search's own vector side (the 8-bit code scan and the exact
//! rescoring of its candidates) is timed alone too, and its recall@10
//! against the exact scan over the 32 queries is printed with the bytes
//! the loaded vectors hold. Indexing throughput (chunks/s, no embedding) and a no-change
//! re-index of 1,000 files (target: under 100 ms).
//!
//! `cargo bench --bench memory` (figures in docs/benchmarks.md). The workspace is
//! generated once per run (1,000 daily logs of 100 entries of 70
//! pseudo-random words each, deterministic, and a one-chunk MEMORY.md) and indexed through `Memory::sync`
//! without an embedder, which times the indexing; vectors (deterministic
//! pseudo-random, normalised) are then written straight into the index's
//! `embeddings` table, as a sync with an embedder would have stored them,
//! so that setting up does not spend minutes in JSON. The query embedding
//! comes from a tiny in-process `/v1/embeddings` server. After criterion,
//! each case is timed over single calls and the percentiles are printed
//! (`EGIRL_BENCH_CALLS=N`, default 200).

use std::hint::black_box;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::routing::post;
use criterion::{Criterion, criterion_group};
use egirl::config::MemoryConfig;
use egirl::memory::watch::MemoryWatcher;
use egirl::memory::{Embedder, LoadedVectors, Memory, dot};
use rusqlite::Connection;
use serde_json::{Value, json};

const FILES: usize = 1_000;
const ENTRIES_PER_FILE: usize = 100;
const WORDS_PER_ENTRY: usize = 70;
const DIMS: usize = 768;
const VOCABULARY: usize = 20_000;
const EMBED_MODEL: &str = "bench-embed";

/// xorshift64*: deterministic and fast enough for 77 million floats.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A word index with a Zipf-like spread: a few words are everywhere,
    /// most are rare, as in real notes.
    fn word(&mut self) -> usize {
        let u = self.unit().max(1e-6);
        ((VOCABULARY as f32).powf(u) as usize).saturating_sub(1) % VOCABULARY
    }
}

fn word(i: usize) -> String {
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "di", "fa", "gu", "ho",
        "je",
    ];
    let mut out = String::new();
    let mut n = i + 16;
    while n > 0 {
        out.push_str(SYLLABLES[n % 16]);
        n /= 16;
    }
    out
}

fn vector_for(seed: u64) -> Vec<f32> {
    let mut rng = Rng(seed | 1);
    let mut v: Vec<f32> = (0..DIMS).map(|_| rng.unit() - 0.5).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn text_seed(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn write_workspace(root: &Path) {
    let mut rng = Rng(0x5eed);
    std::fs::create_dir_all(root.join("memory")).expect("memory dir");
    std::fs::write(root.join("MEMORY.md"), "# Memory\n\nBench workspace.\n").expect("MEMORY.md");
    for f in 0..FILES {
        let mut text = String::with_capacity(ENTRIES_PER_FILE * 500);
        for e in 0..ENTRIES_PER_FILE {
            text.push_str(&format!(
                "\n### {:02}:{:02} · user · tui\n\n",
                e / 60,
                e % 60
            ));
            for w in 0..WORDS_PER_ENTRY {
                if w > 0 {
                    text.push(' ');
                }
                text.push_str(&word(rng.word()));
            }
            text.push_str(".\n");
        }
        let day = chrono::NaiveDate::from_ymd_opt(2020, 1, 1).expect("date")
            + chrono::Days::new(f as u64);
        std::fs::write(root.join(format!("memory/{day}.md")), text).expect("log");
    }
}

/// What a sync with an embedder leaves behind: one vector per chunk text,
/// the model and dimension recorded.
fn store_vectors(root: &Path) -> usize {
    let conn = rusqlite::Connection::open(egirl::memory::db_path(root)).expect("index");
    let tx = conn.unchecked_transaction().expect("tx");
    let mut count = 0;
    {
        let mut hashes = tx
            .prepare("SELECT DISTINCT hash FROM chunks")
            .expect("select");
        let hashes: Vec<String> = hashes
            .query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("hashes");
        let mut insert = tx
            .prepare("INSERT OR REPLACE INTO embeddings(hash, vector) VALUES (?1, ?2)")
            .expect("insert");
        for hash in hashes {
            let blob: Vec<u8> = vector_for(text_seed(&hash))
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect();
            insert.execute(rusqlite::params![hash, blob]).expect("row");
            count += 1;
        }
    }
    let embedder = Embedder::local("http://127.0.0.1:1", EMBED_MODEL);
    for (key, value) in [
        ("embed_model", embedder.id()),
        ("embed_dims", DIMS.to_string()),
        ("missing_vectors", "0".into()),
        ("generation", "1000000".into()),
    ] {
        tx.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
            rusqlite::params![key, value],
        )
        .expect("meta");
    }
    tx.commit().expect("commit");
    count
}

/// `/v1/embeddings` answering a deterministic vector per input.
async fn embeddings_server() -> SocketAddr {
    async fn embed(Json(body): Json<Value>) -> Json<Value> {
        let inputs: Vec<String> = match &body["input"] {
            Value::Array(a) => a
                .iter()
                .map(|v| v.as_str().unwrap_or("").to_string())
                .collect(),
            Value::String(s) => vec![s.clone()],
            _ => Vec::new(),
        };
        let data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"index": i, "embedding": vector_for(text_seed(t))}))
            .collect();
        Json(json!({ "data": data }))
    }
    let app = axum::Router::new().route("/v1/embeddings", post(embed));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

/// Two or three words of middling frequency, as a person would ask.
fn queries() -> Vec<String> {
    let mut rng = Rng(0xabcdef);
    (0..32)
        .map(|i| {
            (0..2 + i % 2)
                .map(|_| word(50 + (rng.next() % 2_000) as usize))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The floor: every vector's dot product with the query, then the best 24.
fn bare_scan(data: &[f32], query: &[f32]) -> Vec<(usize, f32)> {
    let mut scores: Vec<(usize, f32)> = data
        .chunks_exact(DIMS)
        .map(|row| dot(row, query))
        .enumerate()
        .collect();
    let k = 24.min(scores.len());
    scores.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1));
    scores.truncate(k);
    scores
}

/// The same floor on two threads, each scanning half the rows.
fn bare_scan_2_threads(data: &[f32], query: &[f32]) -> Vec<(usize, f32)> {
    let half = (data.len() / DIMS).div_ceil(2) * DIMS;
    let (a, b) = data.split_at(half);
    let (mut first, second) = std::thread::scope(|s| {
        let other = s.spawn(|| bare_scan(b, query));
        (bare_scan(a, query), other.join().expect("scan thread"))
    });
    first.extend(
        second
            .into_iter()
            .map(|(row, score)| (row + half / DIMS, score)),
    );
    first.sort_by(|x, y| y.1.total_cmp(&x.1));
    first.truncate(24);
    first
}

/// The stored vectors as `f32` (ids, rows): what the search held before
/// it kept 8-bit codes, the baseline scan's input.
fn load_f32(conn: &Connection) -> (Vec<i64>, Vec<f32>) {
    let mut stmt = conn
        .prepare("SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.hash = c.hash")
        .expect("select");
    let mut rows = stmt.query([]).expect("query");
    let (mut ids, mut data) = (Vec::new(), Vec::new());
    while let Some(row) = rows.next().expect("row") {
        ids.push(row.get(0).expect("id"));
        let blob = row.get_ref(1).expect("vector").as_blob().expect("blob");
        data.extend(
            blob.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
    }
    (ids, data)
}

/// Recall@10 of the search's vector side (codes, then exact rescoring)
/// against the exact `f32` scan, over all the queries.
fn recall_at_10(s: &Setup, query_vectors: &[Vec<f32>]) -> f64 {
    let mut found = 0;
    for query in query_vectors {
        let mut exact = bare_scan(&s.data, query);
        exact.sort_by(|a, b| b.1.total_cmp(&a.1));
        let exact: Vec<i64> = exact.iter().take(10).map(|(row, _)| s.ids[*row]).collect();
        let hits = s.vectors.top_k(&s.conn, query, 10).expect("top k");
        found += hits.iter().filter(|(id, _)| exact.contains(id)).count();
    }
    found as f64 / (query_vectors.len() * 10) as f64
}

struct Setup {
    // Dropped before the workspace: the watchers stop first.
    _watchers: Vec<MemoryWatcher>,
    _dir: tempfile::TempDir,
    hybrid: Arc<Memory>,
    /// The same index searched with no watcher running, as a one-shot
    /// `egirl memory search` (or `[memory] watch = false`) does.
    unwatched: Arc<Memory>,
    fts: Arc<Memory>,
    vectors: LoadedVectors,
    conn: Connection,
    ids: Vec<i64>,
    data: Vec<f32>,
    embedder: Embedder,
    runtime: tokio::runtime::Runtime,
}

fn setup() -> Setup {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_path_buf();
    let started = Instant::now();
    write_workspace(&root);
    println!(
        "workspace: {FILES} files written in {:.1?}",
        started.elapsed()
    );

    let fts = Arc::new(Memory::with_embedder(&root, MemoryConfig::default(), None));
    let started = Instant::now();
    let report = runtime.block_on(fts.sync(None)).expect("index");
    let took = started.elapsed();
    let (files, chunks, _) = runtime.block_on(fts.counts()).expect("counts");
    println!(
        "indexing (chunking, hashing, SQLite + FTS5; no embedding): {files} files, {chunks} chunks in {took:.2?} = {:.0} chunks/s",
        chunks as f64 / took.as_secs_f64()
    );
    assert_eq!(report.indexed, FILES + 1, "the logs and MEMORY.md");

    let started = Instant::now();
    let stored = store_vectors(&root);
    println!(
        "vectors: {stored} x {DIMS} stored in {:.1?}",
        started.elapsed()
    );

    let addr = runtime.block_on(embeddings_server());
    let embedder = Embedder::local(&format!("http://{addr}"), EMBED_MODEL);
    let with_vectors = || {
        Arc::new(Memory::with_embedder(
            &root,
            MemoryConfig::default(),
            Some(embedder.clone()),
        ))
    };
    let (hybrid, unwatched) = (with_vectors(), with_vectors());
    // As the agent runs them (`[memory] watch`, the default): a running
    // watcher spares a search the stat of every file.
    let watchers = {
        let _runtime = runtime.enter();
        [&hybrid, &fts].map(|m| egirl::memory::watch::spawn(m.clone()).expect("watcher"))
    };
    let started = Instant::now();
    let first = runtime
        .block_on(hybrid.search("first search", None, None))
        .expect("search");
    assert_eq!(first.fallback, None, "hybrid");
    println!(
        "first hybrid search (reads {} MB of f32 vectors, keeps them as 8-bit codes): {:.1?}",
        (chunks as usize * DIMS * 4) >> 20,
        started.elapsed()
    );
    runtime
        .block_on(unwatched.search("first search", None, None))
        .expect("search");
    let conn = rusqlite::Connection::open(egirl::memory::db_path(&root)).expect("index");
    let vectors = LoadedVectors::load(&conn).expect("vectors");
    assert_eq!(vectors.len(), chunks as usize);
    let (ids, data) = load_f32(&conn);
    println!(
        "loaded vectors resident: {:.1} MB as 8-bit codes (codes, scales, ids) against {:.1} MB as f32 (rows, ids)",
        vectors.bytes() as f64 / 1e6,
        (data.len() * 4 + ids.len() * 8) as f64 / 1e6
    );
    Setup {
        _watchers: watchers.into(),
        _dir: dir,
        hybrid,
        unwatched,
        fts,
        vectors,
        conn,
        ids,
        data,
        embedder,
        runtime,
    }
}

fn percentiles(name: &str, mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    println!(
        "| {name} | {:.2?} | {:.2?} | {:.2?} | {:.2?} |",
        at(0.5),
        at(0.9),
        at(0.99),
        samples[samples.len() - 1]
    );
    at(0.5)
}

fn benches(c: &mut Criterion) {
    let s = setup();
    let queries = queries();
    let query_vectors: Vec<Vec<f32>> = queries.iter().map(|q| vector_for(text_seed(q))).collect();
    let mut group = c.benchmark_group("memory_100k_chunks_768d");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(10));
    let mut i = 0;
    group.bench_function("hybrid_search", |b| {
        b.iter(|| {
            i += 1;
            let q = &queries[i % queries.len()];
            black_box(
                s.runtime
                    .block_on(s.hybrid.search(q, None, None))
                    .expect("search"),
            )
        })
    });
    group.bench_function("hybrid_search_no_watcher", |b| {
        b.iter(|| {
            i += 1;
            let q = &queries[i % queries.len()];
            black_box(
                s.runtime
                    .block_on(s.unwatched.search(q, None, None))
                    .expect("search"),
            )
        })
    });
    group.bench_function("fts_only_search", |b| {
        b.iter(|| {
            i += 1;
            let q = &queries[i % queries.len()];
            black_box(
                s.runtime
                    .block_on(s.fts.search(q, None, None))
                    .expect("search"),
            )
        })
    });
    group.bench_function("bare_cosine_scan", |b| {
        b.iter(|| {
            i += 1;
            black_box(bare_scan(&s.data, &query_vectors[i % query_vectors.len()]))
        })
    });
    group.bench_function("quantized_scan_and_rescoring", |b| {
        b.iter(|| {
            i += 1;
            let q = &query_vectors[i % query_vectors.len()];
            black_box(s.vectors.top_k(&s.conn, q, 24).expect("top k"))
        })
    });
    group.bench_function("bare_cosine_scan_2_threads", |b| {
        b.iter(|| {
            i += 1;
            black_box(bare_scan_2_threads(
                &s.data,
                &query_vectors[i % query_vectors.len()],
            ))
        })
    });
    group.bench_function("no_change_reindex_1001_files", |b| {
        b.iter(|| black_box(s.runtime.block_on(s.fts.sync(None)).expect("sync")))
    });
    group.finish();

    let calls: usize = std::env::var("EGIRL_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let time = |f: &mut dyn FnMut(usize)| -> Vec<Duration> {
        (0..calls)
            .map(|n| {
                let started = Instant::now();
                f(n);
                started.elapsed()
            })
            .collect()
    };
    let hybrid = time(&mut |n| {
        let r = s
            .runtime
            .block_on(s.hybrid.search(&queries[n % queries.len()], None, None));
        black_box(r.expect("search"));
    });
    let unwatched = time(&mut |n| {
        let r = s
            .runtime
            .block_on(s.unwatched.search(&queries[n % queries.len()], None, None));
        black_box(r.expect("search"));
    });
    let fts = time(&mut |n| {
        let r = s
            .runtime
            .block_on(s.fts.search(&queries[n % queries.len()], None, None));
        black_box(r.expect("search"));
    });
    let scan = time(&mut |n| {
        black_box(bare_scan(&s.data, &query_vectors[n % query_vectors.len()]));
    });
    let scan2 = time(&mut |n| {
        black_box(bare_scan_2_threads(
            &s.data,
            &query_vectors[n % query_vectors.len()],
        ));
    });
    let codes_only = time(&mut |n| {
        let q = &query_vectors[n % query_vectors.len()];
        black_box(s.vectors.candidates(q, 96));
    });
    let quantized = time(&mut |n| {
        let q = &query_vectors[n % query_vectors.len()];
        black_box(s.vectors.top_k(&s.conn, q, 24).expect("top k"));
    });
    let embed = time(&mut |n| {
        let r = s
            .runtime
            .block_on(s.embedder.embed(&[&queries[n % queries.len()]]));
        black_box(r.expect("embed"));
    });
    let reindex = time(&mut |_| {
        black_box(s.runtime.block_on(s.fts.sync(None)).expect("sync"));
    });
    println!("\nsingle calls ({calls} each):\n");
    println!("| case | p50 | p90 | p99 | max |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    let hybrid_p50 = percentiles("hybrid search (100k x 768), watcher running", hybrid);
    percentiles("hybrid search, no watcher (stat of every file)", unwatched);
    percentiles("full-text-only search, watcher running", fts);
    let scan_p50 = percentiles("bare cosine scan, 1 thread", scan);
    let scan2_p50 = percentiles("bare cosine scan, 2 threads", scan2);
    let quantized_p50 = percentiles(
        "search's vector side: code scan + f32 rescoring (top 24)",
        quantized,
    );
    percentiles("code scan alone (top 96)", codes_only);
    percentiles("query embedding round trip (part of hybrid)", embed);
    percentiles("no-change re-index, 1,001 files", reindex);
    println!(
        "\nhybrid p50 / bare f32 scan p50 = {:.2} (1 thread), {:.2} (2 threads) (target <= 0.33 of 1 thread); hybrid p50 {:.1?} (target < 50 ms)",
        hybrid_p50.as_secs_f64() / scan_p50.as_secs_f64(),
        hybrid_p50.as_secs_f64() / scan2_p50.as_secs_f64(),
        hybrid_p50
    );
    println!(
        "vector side p50 / bare f32 scan p50 = {:.2} (1 thread); recall@10 against the exact scan over {} queries = {:.4} (target >= 0.99)",
        quantized_p50.as_secs_f64() / scan_p50.as_secs_f64(),
        query_vectors.len(),
        recall_at_10(&s, &query_vectors)
    );
}

criterion_group!(memory_benches, benches);

/// Only under `cargo bench`: the setup writes and indexes 100,000 chunks,
/// which `cargo test --benches` (no `--bench` flag) should not pay for.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--list") {
        println!("skipped: run with `cargo bench --bench memory`");
        return;
    }
    memory_benches();
    Criterion::default().configure_from_args().final_summary();
}
