//! One thread that lives as long as egirl, which forks the stdio MCP
//! servers: a child's parent-death signal (`PR_SET_PDEATHSIG`) fires when
//! the thread that forked it ends, not the process, so the servers must
//! not be forked from a pool thread that may retire.

use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

/// Runs `job` on the lasting thread, inside the caller's tokio runtime;
/// Err when that thread is gone or the job panicked.
pub async fn on_lasting_thread<T: Send + 'static>(
    job: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    static QUEUE: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    let queue = QUEUE.get_or_init(|| {
        let (send, receive) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("egirl-mcp-spawner".into())
            .spawn(move || {
                while let Ok(job) = receive.recv() {
                    job();
                }
            });
        if let Err(e) = started {
            tracing::warn!("cannot start the MCP spawner thread: {e}");
        }
        Mutex::new(send)
    });
    let (done, result) = tokio::sync::oneshot::channel();
    // tokio's child handles register with the runtime that spawns them.
    let runtime = tokio::runtime::Handle::current();
    let sent = queue
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(Box::new(move || {
            let _entered = runtime.enter();
            // A panicking job must not end the thread (and its children).
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            if let Ok(value) = outcome {
                let _ = done.send(value);
            }
        }));
    sent.map_err(|_| "the MCP spawner thread is gone".to_string())?;
    result
        .await
        .map_err(|_| "the MCP spawner thread is gone".to_string())
}
