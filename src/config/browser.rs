//! `[tools.browser]`: the `browser` tool's managed headless Chromium. Its
//! requests go through `[tools.web]`'s guards (`allow_private`, `fetch`,
//! `allow_domains`); these keys say only how the browser itself runs.

use serde::Deserialize;

use super::ConfigDuration;

/// Names looked up on PATH when `executable` is not set, in this order.
pub const CHROMIUM_NAMES: [&str; 4] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BrowserConfig {
    /// Offered only when this is true and a Chromium is found.
    pub enabled: bool,
    /// The Chromium to run: a path or a name on PATH ("": the first of
    /// `CHROMIUM_NAMES` found).
    pub executable: String,
    /// A session's browser unused this long is closed (its next use starts
    /// a fresh one).
    pub idle_timeout: ConfigDuration,
    /// Characters of a page snapshot at most (the rest is cut, and said so).
    pub snapshot_chars: usize,
}

impl Default for BrowserConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            executable: String::new(),
            idle_timeout: ConfigDuration::from_secs(10 * 60),
            snapshot_chars: 8000,
        }
    }
}

impl BrowserConfig {
    /// The values that would make every call fail: (key, why).
    pub fn check(&self) -> Result<(), (String, String)> {
        if self.snapshot_chars < 200 {
            return Err((
                "tools.browser.snapshot_chars".into(),
                "must be at least 200".into(),
            ));
        }
        if self.idle_timeout.is_zero() {
            return Err((
                "tools.browser.idle_timeout".into(),
                "must be more than 0".into(),
            ));
        }
        Ok(())
    }

    /// The Chromium executable: `executable` as a path or a name on PATH,
    /// else the first of `CHROMIUM_NAMES` on PATH; Err says what was looked for.
    pub fn chromium(&self) -> Result<std::path::PathBuf, String> {
        let wanted: Vec<&str> = if self.executable.trim().is_empty() {
            CHROMIUM_NAMES.to_vec()
        } else {
            vec![self.executable.trim()]
        };
        for name in &wanted {
            if name.contains('/') {
                let path = std::path::PathBuf::from(name);
                if path.is_file() {
                    return Ok(path);
                }
                continue;
            }
            let path = std::env::var_os("PATH").unwrap_or_default();
            for dir in std::env::split_paths(&path) {
                let candidate = dir.join(name);
                if candidate.is_file() {
                    return Ok(candidate);
                }
            }
        }
        Err(format!(
            "no Chromium found (looked for {}; set [tools.browser] executable)",
            wanted.join(", ")
        ))
    }
}
