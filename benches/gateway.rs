//! The gateway under load, on the real Unix socket with the real client
//! (`link::client`), the core faked by a bus this bench feeds
//! (`cargo bench --bench gateway`, about 60 s; figures in
//! docs/benchmarks.md). Not criterion: each figure is one timed run.
//!
//! - **throughput**: 200,000 events that cannot merge (notices of
//!   alternating sessions) as fast as the bus takes them; events per
//!   second received by a raw socket client (frames parsed) and by the
//!   attached client's bus (what the TUI reads).
//! - **slow client**: a turn streams 5,000 deltas/s (4 bytes each) for 10
//!   s, with a probe event every 10 ms carrying the time it was emitted.
//!   A reading client reports each probe's latency (emit → its bus), and
//!   the emitting side reports what `emit` cost (p50/p99 per call). Run
//!   without and with a second client that says `hello` and then reads
//!   nothing for the 10 s, alternately (A, B, A, B); then the slow client
//!   reads what it is sent (a `resync` once it fell out of the ring) and
//!   the process's resident memory is read, to show the bound.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use egirl::bus::EventBus;
use egirl::link::CoreLink;
use egirl::link::client::connect_unix;
use egirl::protocol::wire::{ClientFrame, ClientHello, CoreStatus, WIRE_VERSION};
use egirl::protocol::{AnswerDelta, Event, EventKind, Notice, Origin};
use egirl::surfaces::gateway::unix::{self, UnixServer};
use egirl::surfaces::gateway::{Bounds, Gateway, HelloFacts};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::watch;

/// The gateway token the bench's socket asks for.
const TOKEN: &str = "egt_bench";
const STREAM_SECONDS: u64 = 10;
const TOKENS_PER_SECOND: u64 = 5_000;
const THROUGHPUT_EVENTS: usize = 200_000;

struct Core {
    bus: EventBus,
    server: UnixServer,
    _status: watch::Sender<CoreStatus>,
    _dir: tempfile::TempDir,
}

fn start_core() -> Core {
    let dir = tempfile::tempdir().expect("temp dir");
    let bus = EventBus::new();
    let (status_tx, status) = watch::channel(CoreStatus::default());
    let link = CoreLink::new(
        Arc::new(|_| true),
        bus.clone(),
        status,
        Arc::new(|| {}),
        None,
    );
    let facts = HelloFacts {
        server: "egirl bench".into(),
        mode: "serve".into(),
        ..HelloFacts::default()
    };
    let gateway = Gateway::start(link, facts, Bounds::default());
    let path = dir.path().join("egirl.sock");
    let server = unix::listen(gateway, &path, TOKEN.into()).expect("listen");
    Core {
        bus,
        server,
        _status: status_tx,
        _dir: dir,
    }
}

fn event(session: &str, kind: EventKind) -> Event {
    Event {
        agent: None,
        submission: None,
        session: session.into(),
        origin: Origin::Tui,
        kind,
    }
}

fn notice(session: &str, text: String) -> Event {
    event(session, EventKind::Notice(Notice { message: text }))
}

/// A raw client: says hello and returns the reader, unread.
async fn raw_client(core: &Core) -> BufReader<UnixStream> {
    let mut stream = UnixStream::connect(core.server.path())
        .await
        .expect("connect");
    let hello = ClientFrame::Hello(ClientHello {
        version: WIRE_VERSION,
        client: "bench".into(),
        token: Some(TOKEN.into()),
        ..ClientHello::default()
    });
    let line = serde_json::to_string(&hello).expect("hello") + "\n";
    stream.write_all(line.as_bytes()).await.expect("write");
    BufReader::new(stream)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Events per second through the socket, closed loop: the emitter keeps
/// at most `WINDOW` events ahead of the slower reader (well inside the
/// ring, so nobody is resynced and every event is counted).
async fn throughput() {
    const WINDOW: usize = 8192;
    let core = start_core();
    let mut raw = raw_client(&core).await;
    let attached = connect_unix(core.server.path(), "bench", TOKEN)
        .await
        .expect("attach");
    let mut events = attached.subscribe();
    let raw_count = Arc::new(AtomicUsize::new(0));
    let bus_count = Arc::new(AtomicUsize::new(0));
    let counted = raw_count.clone();
    let raw_reader = tokio::spawn(async move {
        let mut line = String::new();
        loop {
            line.clear();
            if raw.read_line(&mut line).await.unwrap_or(0) == 0 {
                break;
            }
            let frame: serde_json::Value = serde_json::from_str(&line).expect("a frame");
            if frame["frame"] == "event"
                && counted.fetch_add(1, Ordering::Relaxed) + 1 == THROUGHPUT_EVENTS
            {
                break;
            }
        }
    });
    let counted = bus_count.clone();
    let bus_reader = tokio::spawn(async move {
        while let Some(_event) = events.recv().await {
            if counted.fetch_add(1, Ordering::Relaxed) + 1 == THROUGHPUT_EVENTS {
                break;
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let text = "x".repeat(40);
    let started = Instant::now();
    for i in 0..THROUGHPUT_EVENTS {
        let session = if i % 2 == 0 { "a" } else { "b" };
        core.bus.send(notice(session, text.clone()));
        while i >= WINDOW
            && raw_count
                .load(Ordering::Relaxed)
                .min(bus_count.load(Ordering::Relaxed))
                < i - WINDOW
        {
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
    }
    let deadline = Duration::from_secs(120);
    tokio::time::timeout(deadline, raw_reader)
        .await
        .expect("raw client done")
        .expect("joined");
    tokio::time::timeout(deadline, bus_reader)
        .await
        .expect("attached client done")
        .expect("joined");
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "throughput: {THROUGHPUT_EVENTS} events (notices of 40 bytes, two sessions) to a raw socket client and an attached client's bus in {:.0} ms: {:.0} events/s each",
        elapsed * 1e3,
        THROUGHPUT_EVENTS as f64 / elapsed,
    );
    core.server.stop().await;
}

struct StreamRun {
    probe_ms: Vec<f64>,
    emit_us: Vec<f64>,
    rss_before: f64,
    rss_after: f64,
    slow_frames: Option<(usize, usize)>,
}

async fn stream(with_slow: bool) -> StreamRun {
    let core = start_core();
    let attached = connect_unix(core.server.path(), "bench", TOKEN)
        .await
        .expect("attach");
    let mut events = attached.subscribe();
    let slow = if with_slow {
        Some(raw_client(&core).await)
    } else {
        None
    };
    let epoch = Instant::now();
    let reader = tokio::spawn(async move {
        let mut latencies = Vec::new();
        while let Some(e) = events.recv().await {
            if let EventKind::Notice(Notice { message }) = &e.kind {
                if message == "end" {
                    break;
                }
                if let Ok(at) = message.parse::<u64>() {
                    let now = epoch.elapsed().as_micros() as u64;
                    latencies.push(now.saturating_sub(at) as f64 / 1e3);
                }
            }
        }
        latencies
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rss_before = rss_mib();
    let mut emit_us = Vec::new();
    // 5 deltas a millisecond, a probe every 10 ms.
    let per_ms = TOKENS_PER_SECOND / 1000;
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    for ms in 0..STREAM_SECONDS * 1000 {
        tick.tick().await;
        for _ in 0..per_ms {
            let e = event(
                "turn",
                EventKind::Delta(AnswerDelta {
                    text: "tok ".into(),
                }),
            );
            let t = Instant::now();
            core.bus.send(e);
            emit_us.push(t.elapsed().as_secs_f64() * 1e6);
        }
        if ms % 10 == 0 {
            let at = epoch.elapsed().as_micros() as u64;
            core.bus.send(notice("probe", at.to_string()));
        }
    }
    core.bus.send(notice("probe", "end".into()));
    let probe_ms = tokio::time::timeout(Duration::from_secs(60), reader)
        .await
        .expect("reader done")
        .expect("joined");
    let rss_after = rss_mib();
    let slow_frames = match slow {
        None => None,
        Some(mut slow) => {
            // Now it reads: what was it sent?
            let (mut frames, mut resyncs) = (0, 0);
            let mut line = String::new();
            let read_all = async {
                loop {
                    line.clear();
                    match slow.read_line(&mut line).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            frames += 1;
                            if line.contains("\"frame\":\"resync\"") {
                                resyncs += 1;
                            }
                            if line.contains("\"end\"") {
                                break;
                            }
                        }
                    }
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(30), read_all).await;
            Some((frames, resyncs))
        }
    };
    core.server.stop().await;
    StreamRun {
        probe_ms: sorted(probe_ms),
        emit_us: sorted(emit_us),
        rss_before,
        rss_after,
        slow_frames,
    }
}

fn report(label: &str, run: &StreamRun) {
    println!(
        "{label:>18}: probe latency p50 {:.3} ms p99 {:.3} ms max {:.3} ms ({} probes); emit p50 {:.2} µs p99 {:.2} µs; RSS {:.1} → {:.1} MiB{}",
        percentile(&run.probe_ms, 0.5),
        percentile(&run.probe_ms, 0.99),
        run.probe_ms.last().copied().unwrap_or(f64::NAN),
        run.probe_ms.len(),
        percentile(&run.emit_us, 0.5),
        percentile(&run.emit_us, 0.99),
        run.rss_before,
        run.rss_after,
        match run.slow_frames {
            Some((frames, resyncs)) =>
                format!("; the slow client then read {frames} frames, {resyncs} resync"),
            None => String::new(),
        }
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        throughput().await;
        let mut pairs = Vec::new();
        for round in 1..=2 {
            let alone = stream(false).await;
            report(&format!("round {round} alone"), &alone);
            let slowed = stream(true).await;
            report(&format!("round {round} + slow"), &slowed);
            pairs.push((alone, slowed));
        }
        for (i, (alone, slowed)) in pairs.iter().enumerate() {
            println!(
                "round {}: with a slow client / without: probe p50 ×{:.2}, p99 ×{:.2}; emit p99 ×{:.2}",
                i + 1,
                percentile(&slowed.probe_ms, 0.5) / percentile(&alone.probe_ms, 0.5),
                percentile(&slowed.probe_ms, 0.99) / percentile(&alone.probe_ms, 0.99),
                percentile(&slowed.emit_us, 0.99) / percentile(&alone.emit_us, 0.99),
            );
        }
    });
}
