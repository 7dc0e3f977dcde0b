//! Logs go to a daily-rotated file, never to the terminal the UI draws on.
//! Every line passes through the same `Redactor` as everything else egirl
//! writes, so a key that slips into an error body or a URL reaches the
//! disk as `[redacted:NAME]`.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::fmt::writer::MakeWriterExt;

use crate::redact::Redactor;

#[derive(Clone)]
struct Redacting<W> {
    inner: W,
    redactor: Arc<Redactor>,
}

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.redactor.is_empty() {
            self.inner.write_all(buf)?;
            return Ok(buf.len());
        }
        let text = String::from_utf8_lossy(buf);
        self.inner
            .write_all(self.redactor.redact(&text).as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Lines the log queue holds before the file writer catches up.
const QUEUED_LINES: usize = 1024;

/// Starts file logging (and, for `egirl serve`, the same lines on stderr,
/// masked alike); keep the guard alive for the life of the process.
pub fn init(
    dir: &Path,
    level: &str,
    redactor: &Arc<Redactor>,
    also_stderr: bool,
) -> anyhow::Result<WorkerGuard> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create log dir {}: {e}", dir.display()))?;
    let appender = tracing_appender::rolling::daily(dir, "egirl.log");
    // The default queue holds 128,000 lines, allocated and touched up front:
    // about 5 MiB of every process's resident memory and a millisecond
    // before the first frame, for a log that writes a few lines a turn. The
    // writer thread drains a line in microseconds; a burst that outruns
    // it drops lines (counted by the appender) rather than stall a turn.
    let (writer, guard) = NonBlockingBuilder::default()
        .buffered_lines_limit(QUEUED_LINES)
        .lossy(true)
        .finish(appender);
    let redacting = Redacting {
        inner: writer,
        redactor: redactor.clone(),
    };
    let redactor = redactor.clone();
    let to_stderr = move || Redacting {
        inner: std::io::stderr(),
        redactor: redactor.clone(),
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("EGIRL_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_new(level))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer((move || redacting.clone()).and(to_stderr.with_filter(move |_| also_stderr)))
        .try_init();
    Ok(guard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_secret_values() {
        let mut out = Vec::new();
        {
            let mut w = Redacting {
                inner: &mut out,
                redactor: Arc::new(Redactor::new([(
                    "ANTHROPIC_API_KEY".to_string(),
                    "sk-ant-abcdef123".to_string(),
                )])),
            };
            w.write_all(b"calling with key sk-ant-abcdef123 now")
                .unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "calling with key [redacted:ANTHROPIC_API_KEY] now"
        );
    }
}
