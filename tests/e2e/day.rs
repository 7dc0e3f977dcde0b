//! A long session on the real server, one `egirl -m --session` run per
//! turn: shared by the 40-turn e2e test (tests/e2e/compaction.rs) and the
//! simulated day benchmark (benches/compaction_day.rs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Short, varied requests, cycled; the answers stay short (`max_tokens`).
const ASKS: [&str; 10] = [
    "Name one fruit that is red.",
    "What is 7 times 6?",
    "Give me a word that rhymes with cat.",
    "Which planet is the largest?",
    "Say hello in French.",
    "What color is the sky on a clear day?",
    "Name a city in Japan.",
    "How many legs does a spider have?",
    "Suggest a name for a goldfish.",
    "What is the opposite of cold?",
];

/// One turn's outcome and the usage of each of its requests.
pub struct TurnReport {
    pub ok: bool,
    pub compacted: bool,
    pub fell_back: bool,
    /// Per request: (prompt tokens, cached tokens, generated tokens).
    pub usage: Vec<(u64, u64, u64)>,
    pub detail: String,
}

pub struct Day {
    root: PathBuf,
    config: PathBuf,
    binary: PathBuf,
}

impl Day {
    /// A workspace and config in `root` for the server at `url`, a
    /// `context`-token window and answers of `max_tokens`.
    pub fn new(root: &Path, binary: PathBuf, url: &str, context: u64, max_tokens: u64) -> Self {
        let config = root.join("egirl.toml");
        let text = format!(
            "[workspace]\npath = \"{ws}\"\n\n[log]\ndir = \"{logs}\"\n\n[agent]\nmax_turns = 3\n\n\
             [local]\nendpoint = \"{url}\"\nmodel = \"SmolLM2-135M-Instruct\"\n\
             context_length = {context}\nmax_tokens = {max_tokens}\n",
            ws = root.join("ws").display(),
            logs = root.join("logs").display(),
        );
        std::fs::write(&config, text).expect("write config");
        Self {
            root: root.to_path_buf(),
            config,
            binary,
        }
    }

    /// Turn `n` (from 0) of session `session`.
    pub fn turn(&self, session: &str, n: usize) -> TurnReport {
        let ask = format!("({}) {}", n + 1, ASKS[n % ASKS.len()]);
        let out = self.egirl(&["-m", &ask, "--json", "--session", session]);
        let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let has = |kind: &str| events.iter().any(|e| e["type"] == kind);
        let fell_back = events.iter().any(|e| {
            e["type"] == "notice"
                && e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("compaction failed"))
        });
        let usage = events
            .iter()
            .filter(|e| e["type"] == "usage")
            .map(|e| {
                let n = |k: &str| e[k].as_u64().unwrap_or(0);
                (n("input_tokens"), n("cached_tokens"), n("output_tokens"))
            })
            .collect();
        TurnReport {
            ok: out.status.success() && has("final") && !has("error"),
            compacted: has("compaction"),
            fell_back,
            usage,
            detail: format!(
                "exit {:?}\nstdout:\n{}\nstderr:\n{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }

    fn egirl(&self, args: &[&str]) -> Output {
        Command::new(&self.binary)
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .env_remove("EGIRL_CONFIG")
            .env("HOME", &self.root)
            .output()
            .expect("run egirl")
    }
}

/// Evaluated prefill over new tokens, summed over the turns that did not
/// compact (the first, cold, turn left out). New tokens of a request: its
/// prompt minus the previous request's prompt and reply (what the server
/// has cached at best), at least 1.
pub fn prefill_ratio(turns: &[TurnReport]) -> (u64, u64) {
    let (mut evaluated, mut new) = (0u64, 0u64);
    let mut previous: Option<(u64, u64)> = None;
    for (i, turn) in turns.iter().enumerate() {
        for &(prompt, cached, generated) in &turn.usage {
            if i > 0 && !turn.compacted && turn.ok {
                evaluated += prompt.saturating_sub(cached);
                let before = previous.map_or(0, |(p, g)| p + g);
                new += prompt.saturating_sub(before).max(1);
            }
            previous = Some((prompt, generated));
        }
    }
    (evaluated, new)
}
