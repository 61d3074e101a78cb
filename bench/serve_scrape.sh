#!/usr/bin/env bash
# Cost of serving (root): `eacgm serve` tracing every process, CPU time of the daemon
# (utime + stime of /proc/PID/stat, all its threads) over SECONDS idle with no request,
# then over SECONDS with one /metrics scrape a second on one keep-alive connection (as
# Prometheus scrapes), then over SECONDS with one scrape a second on a new connection
# each; resident memory after each.
# GPU=none (default) passes --no-gpu; GPU=fake samples the fake NVML of the build (two
# GPUs, every field: EACGM_FAKE_NVML_SCENARIO=full); GPU=real the machine's NVML.
# Usage: [GPU=none|fake|real] [PORT=19977] [EACGM_ARGS="--config F"] bench/serve_scrape.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
B=${1:-build}
SECS=${2:-30}
PORT=${PORT:-19977}
GPU=${GPU:-none}
. "$(cd "$(dirname "$0")" && pwd)/serve_common.sh"

args=(serve --listen "127.0.0.1:$PORT" ${EACGM_ARGS:-})
case "$GPU" in
  none) args+=(--no-gpu) ;;
  fake)
    export EACGM_NVML_LIBRARY="$B/fake_nvml/libnvidia-ml.so.1" EACGM_FAKE_NVML_SCENARIO=full ;;
  real) ;;
  *) echo "GPU=$GPU: none, fake or real" >&2; exit 2 ;;
esac
"$B/eacgm" "${args[@]}" 2> "$TMP/serve.err" &
pid=$!
client wait "$PORT" /readyz 30 || { cat "$TMP/serve.err" >&2; exit 1; }
sleep 3  # start-up (attaching, the first passes) is not the steady state

ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat"; }  # fields 14, 15
mem() { awk '/^VmRSS/ {r = $2} /^VmHWM/ {h = $2} END {printf "RSS %.1f MiB, peak RSS %.1f MiB", r / 1024, h / 1024}' "/proc/$pid/status"; }

# Traced calls of other processes on the machine make a phase less than idle: the
# events counter is read between the phases (outside the timed windows) and reported.
events() { client get "$PORT" /metrics | awk '$1 == "eacgm_events_total" {printf "%d\n", $2}'; }
e0=$(events)
c0=$(cpu_ticks)
sleep "$SECS"
c1=$(cpu_ticks)
mem_idle=$(mem)
e1=$(events)
client scrape "$PORT" /metrics "$SECS" > "$TMP/scrape.out"
c2=$(cpu_ticks)
mem_scraped=$(mem)
e2=$(events)
client scrape-close "$PORT" /metrics "$SECS" > "$TMP/scrape-close.out"
c3=$(cpu_ticks)
mem_closed=$(mem)
client get "$PORT" /metrics > "$TMP/metrics.txt"
e3=$(awk '$1 == "eacgm_events_total" {printf "%d\n", $2}' "$TMP/metrics.txt")

awk -v i="$((c1 - c0))" -v s="$((c2 - c1))" -v n="$((c3 - c2))" -v t="$ticks" -v secs="$SECS" -v gpu="$GPU" \
    -v mi="$mem_idle" -v ms="$mem_scraped" -v mc="$mem_closed" -v en="$((e3 - e2))" \
    -v sc="$(cat "$TMP/scrape.out")" -v scc="$(cat "$TMP/scrape-close.out")" \
    -v ei="$((e1 - e0))" -v es="$((e2 - e1))" -v size="$(wc -c < "$TMP/metrics.txt")" -v series="$(grep -vc '^#' "$TMP/metrics.txt")" 'BEGIN {
  pi = 100 * i / t / secs; ps = 100 * s / t / secs; pn = 100 * n / t / secs
  printf "eacgm serve, GPU=%s, %d s per phase (CPU resolution %.2f%% of a core)\n", gpu, secs, 100 / t / secs
  printf "idle, no requests:        CPU %.2f s (%.2f%% of one core), %s; %d calls traced\n", i / t, pi, mi, ei
  printf "one /metrics scrape a s:  CPU %.2f s (%.2f%% of one core), %s; %d calls traced\n", s / t, ps, ms, es
  printf "same, new connection each: CPU %.2f s (%.2f%% of one core), %s; %d calls traced\n", n / t, pn, mc, en
  printf "scraping adds %.2f%% of one core (keep-alive), %.2f%% (new connections) (target <= 1%%); idle target <= 0.5%%, RSS <= 64 MiB\n", ps - pi, pn - pi
  printf "%s\n%s; last /metrics: %d bytes, %d samples\n", sc, scc, size, series
}'
