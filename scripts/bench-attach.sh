#!/usr/bin/env bash
# The attached TUI against the in-process one (figures in
# docs/benchmarks.md): builds the release binary, then runs the ignored
# measurement in tests/gateway/measure.rs (the harness itself may be a
# debug build: it only reads the terminal), which starts `egirl` in a
# pseudo-terminal N times each way (default 10), alternately, and prints
# the first frame and key-to-output percentiles.
#
#   scripts/bench-attach.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/egirl/target}"
export EGIRL_MEASURE_RUNS="${1:-${EGIRL_MEASURE_RUNS:-10}}"
if [[ -z "${EGIRL_MEASURE_BIN:-}" ]]; then
  cargo build --release --locked --bin egirl
  export EGIRL_MEASURE_BIN="$CARGO_TARGET_DIR/release/egirl"
fi
cargo test --locked --test all gateway::measure:: -- --ignored --nocapture --test-threads=1
