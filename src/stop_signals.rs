//! The signals that stop `egirl -m` and `egirl serve`: Ctrl+C (SIGINT),
//! SIGTERM and SIGHUP, watched together so either surface interrupts its
//! turn (killing a running command's process group) before it exits.

/// SIGINT, SIGTERM and SIGHUP. Without a handler SIGTERM and SIGHUP would
/// end the process at once and leave an approved command running.
pub struct StopSignals {
    term: Option<tokio::signal::unix::Signal>,
    hup: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    /// Starts watching (SIGINT is watched as each wait begins).
    pub fn watch() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        let one = |kind: SignalKind, name: &str| {
            signal(kind)
                .map_err(|e| tracing::warn!("cannot watch {name}: {e}"))
                .ok()
        };
        Self {
            term: one(SignalKind::terminate(), "SIGTERM"),
            hup: one(SignalKind::hangup(), "SIGHUP"),
        }
    }

    /// The next of the three signals to arrive.
    pub async fn next(&mut self) {
        async fn recv(signal: &mut Option<tokio::signal::unix::Signal>) {
            match signal {
                Some(signal) => {
                    signal.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = recv(&mut self.term) => {}
            () = recv(&mut self.hup) => {}
        }
    }
}
