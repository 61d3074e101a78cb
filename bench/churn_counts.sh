#!/usr/bin/env bash
# Counts under process churn in `serve` (always-on): N short CUDA processes back to back
# (tests/programs/cuda_calls run as "churn_cuda", REPEAT rounds each: 2 cudaMalloc, 2
# cudaFree, 3 launches, ... per round; without a GPU its calls fail but enter libcudart,
# so the probes fire), PAR at a time. Reports the processes per second, the cudaMalloc
# calls `serve` counted (/api/v1/functions) against the calls made, every function's
# calls against one process traced alone times N, the ring buffer's drops, and serve's
# RSS after each third of the processes: as read at the end of the settle after it, and its
# floor (the lowest read each second of the settle: what serve keeps once the allocator's
# free pages went back, without the transient of the moment of reading). PASS when the
# counts are exact and the floor grew at most LIMIT_KIB over the last third.
# Usage: bench/churn_counts.sh BUILD [N] [REPEAT]
#   BUILD: the build folder (eacgm, cuda_calls); N default 6000, REPEAT default 150.
#   Environment: PAR (processes at once, default 4); PIN (a CPU list: serve and the
#   processes are pinned to it with taskset, so the reader competes with them for it);
#   LIMIT_KIB (default 512); SETTLE (seconds after each third before RSS is read, default
#   32: serve hands the allocator's free pages back every 30 s, src/node/memory_trim.h);
#   EACGM_ARGS (more arguments for serve, e.g. --config FILE); METRICS_OUT (a file that gets
#   serve's /metrics as they were at the end).
# The probes are the CUDA runtime's only (--probes cuda): a libcuda loaded by another
# process would otherwise move the counting of launches, copies and synchronisations to
# the driver, which these calls never reach without a GPU. Needs root (eBPF). Other CUDA
# processes on the machine are counted too: their calls are shown, and the counts are
# then not comparable.
set -uo pipefail
B=$(readlink -f "$1")
N=${2:-6000} REPEAT=${3:-150}
PAR=${PAR:-4} PIN=${PIN:-} LIMIT_KIB=${LIMIT_KIB:-512} SETTLE=${SETTLE:-32} EACGM_ARGS=${EACGM_ARGS:-}
. "$(dirname "$0")/common.sh"
ln -s "$B/cuda_calls" "$TMP/churn_cuda"
PINNED=()
[ -n "$PIN" ] && PINNED=(taskset -c "$PIN")

# Calls per function of one process traced alone, always-on.
# shellcheck disable=SC2086
"$B/eacgm" run --probes cuda $EACGM_ARGS --json -- "$TMP/churn_cuda" --repeat "$REPEAT" 2>/dev/null |
  python3 -c 'import json,sys
for f in json.load(sys.stdin)["functions"]: print(f["function"], f["calls"])' | sort >"$TMP/alone"
functions() {
  curl -s "http://127.0.0.1:$PORT/api/v1/functions" |
    python3 -c 'import json,sys
for f in json.load(sys.stdin).get("functions", []): print(f["function"], f["calls"])' 2>/dev/null | sort
}
metric() { curl -s "http://127.0.0.1:$PORT/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
rss_of() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

PORT=${PORT:-19978}
# shellcheck disable=SC2086
"${PINNED[@]}" "$B/eacgm" serve --probes cuda $EACGM_ARGS --no-gpu --listen "127.0.0.1:$PORT" --store "sqlite:$TMP/store.db" \
  2>"$TMP/agent.err" &
AGENT=$!
for _ in $(seq 600); do grep -q tracing "$TMP/agent.err" && break; sleep 0.1; done
sleep 2
functions >"$TMP/before"

third=$((N / 3))
busy=0  # seconds spent churning, settles left out
rows=()
for part in 1 2 3; do
  n=$third
  [ "$part" = 3 ] && n=$((N - 2 * third))
  t0=$(date +%s.%N)
  seq "$n" | "${PINNED[@]}" xargs -P "$PAR" -I{} "$TMP/churn_cuda" --repeat "$REPEAT" >/dev/null 2>&1
  busy=$(awk -v b="$busy" -v t="$t0" -v now="$(date +%s.%N)" 'BEGIN {print b + now - t}')
  floor=
  read -r floor _ < <(rss_floor "$AGENT" "$SETTLE")
  if ! kill -0 "$AGENT" 2>/dev/null; then
    echo "FAIL: serve exited during the churn; its last lines:"
    tail -20 "$TMP/agent.err"
    wait "$AGENT"
    echo "exit status $?"
    exit 1
  fi
  rows+=("$((part == 3 ? N : part * third)) $(rss_of "$AGENT") $floor")
done
functions >"$TMP/after"
foreign=$(curl -s "http://127.0.0.1:$PORT/api/v1/processes" | python3 -c 'import json,sys
print(sum(p.get("calls", 0) for p in json.load(sys.stdin).get("processes", []) if p.get("comm") != "churn_cuda"))' 2>/dev/null)
drops=$(metric eacgm_ring_buffer_drops_total)
[ -z "${METRICS_OUT:-}" ] || curl -s "http://127.0.0.1:$PORT/metrics" >"$METRICS_OUT"
# Where a counted call can be lost in the kernel, and whether the duty cycle scaled any.
lost_in_kernel=$(curl -s "http://127.0.0.1:$PORT/metrics" |
  awk '$1 ~ /^eacgm_(count_map_full|count_spilled|duration_map_full|probe_duty_switches|probe_duty_switch_traps)_total$/ && $2 != 0 {printf "%s %s  ", $1, $2}')
kill -TERM "$AGENT"
wait "$AGENT"

rate=$(awk -v n="$N" -v b="$busy" 'BEGIN {printf "%.0f", n / b}')
echo "$N processes, $REPEAT rounds each, PAR=$PAR${PIN:+, pinned to CPUs $PIN}: $rate processes/s"
echo "ring buffer drops: ${drops:-0}"
[ -z "$lost_in_kernel" ] || echo "kernel-side counters: $lost_in_kernel"
[ "${foreign:-0}" = 0 ] || echo "WARNING: other processes made ${foreign} CUDA calls meanwhile: the counts include them"
printf '%-10s %10s %10s %10s %10s\n' processes "VmRSS KiB" growth "floor KiB" growth
last= last_floor=
for r in "${rows[@]}"; do
  read -r p rss fl <<<"$r"
  printf '%-10s %10s %10s %10s %10s\n' "$p" "$rss" "${last:+$((rss - last))}" "$fl" "${last_floor:+$((fl - last_floor))}"
  grow=$((fl - ${last_floor:-$fl}))
  last=$rss last_floor=$fl
done
fail=0
[ "$grow" -le "$LIMIT_KIB" ] || { echo "FAIL: RSS's floor grew $grow KiB over the last third (limit $LIMIT_KIB)"; fail=1; }
printf '%-28s %12s %12s\n' function expected counted
while read -r fn calls; do
  before=$(awk -v f="$fn" '$1 == f {print $2}' "$TMP/before")
  after=$(awk -v f="$fn" '$1 == f {print $2}' "$TMP/after")
  want=$((calls * N))
  got=$((${after:-0} - ${before:-0}))
  mark=
  [ "$got" = "$want" ] || { mark=" <- lost $((want - got))"; fail=1; }
  printf '%-28s %12s %12s%s\n' "$fn" "$want" "$got" "$mark"
done <"$TMP/alone"
[ "$fail" = 0 ] && echo PASS || echo FAIL
exit "$fail"
