#!/usr/bin/env bash
# Start-up to first frame and resident memory of the TUI, side by side with
# codex and opencode (figures in docs/benchmarks.md): installs both from npm
# into ~/.cache/egirl/bench-tui (once), builds the release binary and the
# measurement harness (tests/tui/startup.rs, dev profile: it only drives a
# pseudo-terminal), then starts each subject in a 200x50 pseudo-terminal N
# times (default 20), taking turns run by run, and prints p50/p90.
#
#   scripts/bench-tui-startup.sh [N]
#   EGIRL_STARTUP_BASELINE=path/to/egirl scripts/bench-tui-startup.sh
#     (another build measured in the same run)
#   EGIRL_BIN=path/to/egirl ...   (measure that build instead of this tree's)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/egirl/target}"
export EGIRL_STARTUP_RUNS="${1:-${EGIRL_STARTUP_RUNS:-20}}"
tools="${EGIRL_CACHE:-$HOME/.cache/egirl}/bench-tui"
if [[ ! -x "$tools/node_modules/.bin/codex" || ! -x "$tools/node_modules/.bin/opencode" ]]; then
  mkdir -p "$tools"
  (cd "$tools" && npm install --no-audit --no-fund --silent @openai/codex opencode-ai >/dev/null)
fi
export EGIRL_STARTUP_CODEX="${EGIRL_STARTUP_CODEX:-$tools/node_modules/.bin/codex}"
export EGIRL_STARTUP_OPENCODE="${EGIRL_STARTUP_OPENCODE:-$tools/node_modules/.bin/opencode}"
echo "codex: $("$EGIRL_STARTUP_CODEX" --version 2>/dev/null || echo unknown version)"
echo "opencode: $("$EGIRL_STARTUP_OPENCODE" --version 2>/dev/null || echo unknown version)"
if [[ -n "${EGIRL_BIN:-}" ]]; then
  export EGIRL_STARTUP_BIN="$EGIRL_BIN"
else
  cargo build --release --locked --bin egirl
  export EGIRL_STARTUP_BIN="$CARGO_TARGET_DIR/release/egirl"
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
cargo test --locked --test all tui::startup:: -- --ignored --nocapture --test-threads=1
