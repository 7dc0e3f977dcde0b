//! Logs go to a daily-rotated file, never to the terminal the UI draws on.
//! Every line passes through a filter that masks the values of the secret
//! environment variables, so a key that slips into an error body or a URL
//! never reaches the disk.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use secrecy::ExposeSecret;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::fmt::writer::MakeWriterExt;

use crate::config::Secrets;

#[derive(Clone)]
struct Redacting<W> {
    inner: W,
    secrets: Arc<Vec<String>>,
}

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        if self.secrets.iter().any(|s| text.contains(s.as_str())) {
            let mut masked = text.into_owned();
            for s in self.secrets.iter() {
                masked = masked.replace(s.as_str(), "[redacted]");
            }
            self.inner.write_all(masked.as_bytes())?;
        } else {
            self.inner.write_all(buf)?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Values shorter than this are not masked: they would garble ordinary text
/// and are not real keys anyway.
const MIN_SECRET_LEN: usize = 8;

pub fn secret_values(secrets: &Secrets) -> Vec<String> {
    [
        &secrets.anthropic_api_key,
        &secrets.openai_api_key,
        &secrets.azure_openai_api_key,
        &secrets.discord_token,
        &secrets.webhook_secret,
    ]
    .into_iter()
    .flatten()
    .map(|s| s.expose_secret().to_string())
    .filter(|s| s.len() >= MIN_SECRET_LEN)
    .collect()
}

/// Starts file logging (and, for `egirl serve`, the same lines on stderr,
/// masked alike); keep the guard alive for the life of the process.
pub fn init(
    dir: &Path,
    level: &str,
    secrets: &Secrets,
    also_stderr: bool,
) -> anyhow::Result<WorkerGuard> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create log dir {}: {e}", dir.display()))?;
    let appender = tracing_appender::rolling::daily(dir, "egirl.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let secrets = Arc::new(secret_values(secrets));
    let redacting = Redacting {
        inner: writer,
        secrets: secrets.clone(),
    };
    let to_stderr = move || Redacting {
        inner: std::io::stderr(),
        secrets: secrets.clone(),
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
                secrets: Arc::new(vec!["sk-ant-abcdef123".into()]),
            };
            w.write_all(b"calling with key sk-ant-abcdef123 now")
                .unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "calling with key [redacted] now"
        );
    }
}
