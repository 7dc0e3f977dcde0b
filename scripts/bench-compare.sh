#!/usr/bin/env bash
# Two builds side by side, in one run (figures in docs/benchmarks.md):
# agent overhead per turn (benches/agent_overhead.rs), the TUI's cold first
# frame (benches/tui_render.rs), the idle daemon (scripts/bench-serve-idle.sh)
# and the binary's size, each measured A, B, A, B so both see the same load.
#
# BEFORE and AFTER are folders holding `agent_overhead` and `tui_render`
# (the bench executables `cargo bench --no-run` prints) and `egirl` (the
# release binary) of each build. Two checkouts of this repo share one
# target dir only if built one after the other: cargo names a workspace
# member's outputs without its path, so copy each build's files out first.
#
#   scripts/bench-compare.sh BEFORE AFTER [ROUNDS]      (default 2)
set -euo pipefail
before="$1" after="$2" rounds="${3:-2}"
cd "$(dirname "$0")/.."
size() { stat -c %s "$1"; }
for d in "$before" "$after"; do
  printf '%s: egirl %d bytes (%.1f MB)\n' "$d" "$(size "$d/egirl")" \
    "$(echo "$(size "$d/egirl") / 1000000" | bc -l)"
done
for r in $(seq 1 "$rounds"); do
  for d in "$before" "$after"; do
    echo "== round $r: $d"
    # criterion's own figures for a turn and for the cold first frame; the
    # interleaved pairs after criterion are the agent_overhead verdict.
    EGIRL_BENCH_PAIRS="${EGIRL_BENCH_PAIRS:-300}" "$d/agent_overhead" --bench \
      --warm-up-time 1 --measurement-time 4 turn 2>&1 |
      grep -E '^turn/|time:|overhead =' || true
    "$d/tui_render" --bench --warm-up-time 1 --measurement-time 4 \
      'tui_render/cold_first_frame' 2>&1 | grep -iE 'first.frame|time:' || true
    EGIRL_BIN="$d/egirl" bash scripts/bench-serve-idle.sh "${IDLE_SECONDS:-20}" | grep -E 'RSS|CPU'
  done
done
