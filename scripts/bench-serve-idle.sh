#!/usr/bin/env bash
# Idle `egirl serve`: resident memory and CPU over a quiet minute
# (figures in docs/benchmarks.md). Builds the release binary, makes a throwaway
# workspace with the heartbeat on (template checklist: ticks skip without a
# model call), 20 cron jobs due hours from now and the webhook listening,
# and, when this build has `egirl memory reindex`, a memory index of about
# 1,000 chunks. Then starts `egirl serve`, lets it settle, and samples
# /proc/<pid>/status (VmRSS) every second and /proc/<pid>/stat (utime +
# stime) at the start and end of the window. An idle daemon sends nothing
# to the model, so `[local] endpoint` need not answer.
#
#   scripts/bench-serve-idle.sh [SECONDS]      (default 60)
#   EGIRL_BIN=path/to/egirl scripts/bench-serve-idle.sh [SECONDS]
#   EGIRL_IDLE_AGENTS=2 scripts/bench-serve-idle.sh    (that many more
#   [agents.NAME] beside `default`, each with its heartbeat and scheduler)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/egirl/target}"
window="${1:-60}"
# EGIRL_BIN names a binary built elsewhere (to compare two builds side by
# side); else this tree's release binary is built.
if [[ -n "${EGIRL_BIN:-}" ]]; then
  bin="$EGIRL_BIN"
else
  cargo build --release --locked --bin egirl
  bin="$CARGO_TARGET_DIR/release/egirl"
fi

dir="$(mktemp -d)"
pid=""
cleanup() {
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    wait "$pid" || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

cat > "$dir/egirl.toml" <<TOML
[workspace]
path = "ws"
[log]
dir = "$dir/logs"
[local]
endpoint = "http://127.0.0.1:9"
[heartbeat]
every = "30m"
[webhook]
listen = "127.0.0.1:0"
TOML
for i in $(seq 1 "${EGIRL_IDLE_AGENTS:-0}"); do
  printf '[agents.a%d]\n' "$i" >> "$dir/egirl.toml"
done

# The workspace and 20 jobs, due in 1..20 hours.
"$bin" --config "$dir/egirl.toml" stats >/dev/null
mkdir -p "$dir/ws/.egirl"
python3 - "$dir/ws/.egirl/cron.json" <<'PY'
import datetime, json, sys
now = datetime.datetime.now(datetime.timezone.utc)
jobs = [{
    "id": f"job-{i}", "kind": "every", "every": "24h",
    "message": f"daily check number {i}", "deliver": "tui", "enabled": True,
    "created_at": now.isoformat(),
    "next_run": (now + datetime.timedelta(hours=i + 1)).isoformat(),
} for i in range(20)]
json.dump({"jobs": jobs}, open(sys.argv[1], "w"), indent=2)
PY

memory="not built (this build has no \`egirl memory\`)"
if "$bin" memory --help >/dev/null 2>&1; then
  # About 1,000 chunks: 100 notes of 10 paragraphs each.
  mkdir -p "$dir/ws/memory"
  for n in $(seq 1 100); do
    for p in $(seq 1 10); do
      printf '## Note %d.%d\n\nThe owner mentioned project %d, part %d: %s\n\n' \
        "$n" "$p" "$n" "$p" "$(head -c 600 /dev/urandom | base64 -w0 | tr -d '+/=' | fold -w 8 | head -40 | tr '\n' ' ')"
    done > "$dir/ws/memory/note-$n.md"
  done
  "$bin" --config "$dir/egirl.toml" memory reindex
  memory="built ($(ls "$dir/ws/memory" | wc -l) files)"
fi

EGIRL_WEBHOOK_SECRET="bench-secret-$$-0123456789" HOME="$dir" \
  "$bin" --config "$dir/egirl.toml" serve 2> "$dir/serve.err" &
pid=$!
sleep 5
kill -0 "$pid" || { cat "$dir/serve.err"; exit 1; }

ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }
hz="$(getconf CLK_TCK)"
start_ticks="$(ticks)"
max=0 sum=0 n=0
for _ in $(seq 1 "$window"); do
  kb="$(rss_kb)"
  (( kb > max )) && max=$kb
  sum=$(( sum + kb )); n=$(( n + 1 ))
  sleep 1
done
end_ticks="$(ticks)"
threads="$(awk '/^Threads:/ {print $2}' "/proc/$pid/status")"
hwm_kb="$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")"

echo "egirl serve, idle ${window}s: $(grep -o 'serving .*' "$dir/serve.err" | head -1)"
echo "memory index: $memory"
awk -v max="$max" -v sum="$sum" -v n="$n" -v t0="$start_ticks" -v t1="$end_ticks" \
    -v hz="$hz" -v w="$window" -v th="$threads" -v hwm="$hwm_kb" 'BEGIN {
  printf "RSS max %.1f MiB, mean %.1f MiB; threads %d\n", max / 1024, sum / n / 1024, th
  printf "peak since start (VmHWM, start-up included) %.1f MiB\n", hwm / 1024
  printf "CPU %.3f%% of one core (%d ticks at %d Hz over %d s)\n", (t1 - t0) / hz / w * 100, t1 - t0, hz, w
}'
# Which memory: the process's own (anonymous) or pages of the binary and
# libraries it touched (file-backed).
awk '/^Anonymous:/ {a = $2} /^Rss:/ {r = $2} END {
  printf "smaps: anonymous %.1f MiB, file-backed %.1f MiB\n", a / 1024, (r - a) / 1024
}' "/proc/$pid/smaps_rollup"
