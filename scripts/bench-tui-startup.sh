#!/usr/bin/env bash
# Start-up to first frame and resident memory of the TUI (figures
# in docs/benchmarks.md): builds the release binary and the integration tests in
# release, then runs the ignored measurement in tests/tui/startup.rs, which
# starts `egirl` in a pseudo-terminal N times (default 20) with a new
# session and with a 2,000-message `--session`, and prints p50/p90.
# Measures codex's TUI the same way when `codex` is on PATH (or
# EGIRL_STARTUP_CODEX names it); `npm install -g @openai/codex` installs it.
#
#   scripts/bench-tui-startup.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/egirl/target}"
export EGIRL_STARTUP_RUNS="${1:-${EGIRL_STARTUP_RUNS:-20}}"
if [[ -z "${EGIRL_STARTUP_CODEX:-}" ]] && command -v codex >/dev/null; then
  EGIRL_STARTUP_CODEX="$(command -v codex)"
fi
if [[ -n "${EGIRL_STARTUP_CODEX:-}" ]]; then
  export EGIRL_STARTUP_CODEX
  echo "codex: $("$EGIRL_STARTUP_CODEX" --version 2>/dev/null || echo unknown version)"
fi
cargo build --release --locked --bin egirl
cargo test --release --locked --test all tui::startup:: -- --ignored --nocapture --test-threads=1
