#!/usr/bin/env bash
# The agent's memory under process churn: many short CUDA processes (tests/programs/
# cuda_calls, run as "churn_cuda": without a GPU its calls fail but enter libcudart, so
# the probes fire) started and ended while the agent runs, in each mode:
# - trace: a whole-machine `eacgm trace` (per call) writing JSON Lines;
# - serve: `eacgm serve` (always-on) with a SQLite store in a scratch folder;
# - run:   `eacgm run --json` (always-on) of a launcher that forks the processes.
# WARMUP processes first, then BATCHES batches of BATCH. After the warm-up and after each
# batch the agent's resident memory (VmRSS, and the anonymous part RssAnon, from
# /proc/PID/status) is read once the agent has seen the batch's calls, once a second for
# SETTLE seconds, and its floor kept (the lowest reading: one moment's reading moves by
# megabytes with what the agent has in flight). At the end the counts are checked against the calls one
# churn_cuda process shows when it is traced alone in the same mode (measured first):
# for trace the JSON lines of comm churn_cuda, for serve the store's processes and their
# calls, for run the report's calls. Prints one table row per sample and a
# PASS/FAIL line per mode against the limit (growth <= 256 KiB per 2,000 processes after
# the warm-up).
# Usage: bench/churn_memory.sh BUILD [MODES] [WARMUP] [BATCH] [BATCHES]
#   BUILD: the build folder (eacgm, cuda_calls); MODES: comma-separated, default
#   trace,serve,run; WARMUP default 1000, BATCH default 2000, BATCHES default 2.
#   Environment: PAR (processes at once, default 4), REPEAT (cuda_calls --repeat, default 1),
#   SETTLE (seconds RSS is read for, default 12: jemalloc gives a freed page back after
#   about 10), EACGM_ARGS (more arguments for each mode, e.g. --no-gpu),
#   CALLS_ARGS (more arguments for churn_cuda: --gpu on a machine with a GPU).
# Needs root (eBPF). Other CUDA processes on the machine are traced too (whole-machine
# modes) but not counted.
set -uo pipefail
B=$(readlink -f "$1")
MODES=${2:-trace,serve,run} WARMUP=${3:-1000} BATCH=${4:-2000} BATCHES=${5:-2}
PAR=${PAR:-4} REPEAT=${REPEAT:-1} SETTLE=${SETTLE:-12} EACGM_ARGS=${EACGM_ARGS:-} CALLS_ARGS=${CALLS_ARGS:-}
LIMIT_KIB=$((256 * BATCH / 2000))
. "$(dirname "$0")/common.sh"
ln -s "$B/cuda_calls" "$TMP/churn_cuda"
# The calls one process shows traced alone: per call (trace) and always-on (serve, run).
# shellcheck disable=SC2086
PER_CALL=$("$B/eacgm" trace $EACGM_ARGS -- "$TMP/churn_cuda" --repeat "$REPEAT" $CALLS_ARGS 2>/dev/null | grep -c '"comm":"churn_cuda"')
# shellcheck disable=SC2086
ALWAYS_ON=$("$B/eacgm" run $EACGM_ARGS --json -- "$TMP/churn_cuda" --repeat "$REPEAT" $CALLS_ARGS 2>/dev/null |
  python3 -c 'import json,sys; print(sum(f["calls"] for f in json.load(sys.stdin)["functions"]))')
echo "one process traced alone: $PER_CALL calls per call, $ALWAYS_ON always-on"

# Runs N churn_cuda processes, PAR at a time (each exits 7); fails if one was killed,
# which also stops xargs.
# shellcheck disable=SC2086
churn() {
  seq "$1" | xargs -P "$PAR" -I{} "$TMP/churn_cuda" --repeat "$REPEAT" $CALLS_ARGS >/dev/null
  local rc=$?
  [ "$rc" -lt 124 ] || { echo "a churn_cuda process was killed (xargs exit $rc)" >&2; return 1; }
}
# Waits up to 60 s until the command prints a number >= $1 (while the agent, AGENT, runs).
wait_count() {
  local want=$1
  shift
  for _ in $(seq 600); do
    [ "$("$@")" -ge "$want" ] 2>/dev/null && return 0
    if ! kill -0 "$AGENT" 2>/dev/null; then
      echo "the agent exited:" >&2
      cat "$TMP/agent.err" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "timed out waiting for $want calls (have $("$@"))" >&2
  return 1
}
wait_line() {
  for _ in $(seq 600); do
    grep -q "$1" "$2" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "the agent did not print '$1':" >&2
  cat "$2" >&2
  return 1
}
# A sample row: mode, processes so far, VmRSS's floor over the settle and RssAnon then
# (KiB), growth since the last row.
sample() {
  local mode=$1 procs=$2 pid=$3
  read -r rss anon < <(rss_floor "$pid" "$SETTLE")
  local grow=-
  [ -n "${LAST_RSS:-}" ] && grow=$((rss - LAST_RSS))
  printf '%-6s %9s %10s %10s %10s\n' "$mode" "$procs" "$rss" "$anon" "$grow" | tee -a "$TMP/rows"
  [ -n "${LAST_RSS:-}" ] && echo "$mode $grow" >>"$TMP/growth"
  LAST_RSS=$rss
}

trace_count() { grep -c '"comm":"churn_cuda"' "$TMP/trace.jsonl" || true; }
mode_trace() {
  # shellcheck disable=SC2086
  "$B/eacgm" trace $EACGM_ARGS -o "$TMP/trace.jsonl" --max-size 0 2>"$TMP/agent.err" &
  local agent=$!
  AGENT=$agent
  wait_line "tracing" "$TMP/agent.err" || return 1
  local done=0
  churn "$WARMUP" || return 1
  done=$WARMUP
  wait_count $((done * PER_CALL)) trace_count || return 1
  sample trace "$done" "$agent"
  for _ in $(seq "$BATCHES"); do
    churn "$BATCH" || return 1
    done=$((done + BATCH))
    wait_count $((done * PER_CALL)) trace_count || return 1
    sample trace "$done" "$agent"
  done
  kill -INT "$agent"
  wait "$agent"
  echo "trace $((done * PER_CALL)) $(trace_count)" >>"$TMP/counts"
}

serve_count() {
  sqlite3 "$TMP/store.db" "SELECT count(DISTINCT p.pid || ':' || p.start_ns) || ' ' || coalesce(sum(f.calls), 0)
    FROM processes p JOIN functions f ON f.pid = p.pid AND f.start_ns = p.start_ns AND f.node = p.node
    WHERE p.comm = 'churn_cuda' AND f.tier = 0"
}
serve_metric_calls() {
  curl -s "http://127.0.0.1:$PORT/api/v1/functions" |
    python3 -c 'import json,sys; print(sum(f["calls"] for f in json.load(sys.stdin).get("functions", [])))' 2>/dev/null
}
mode_serve() {
  PORT=${PORT:-19977}
  # shellcheck disable=SC2086
  "$B/eacgm" serve $EACGM_ARGS --listen "127.0.0.1:$PORT" --store "sqlite:$TMP/store.db" 2>"$TMP/agent.err" &
  local agent=$!
  AGENT=$agent
  wait_line "tracing" "$TMP/agent.err" || return 1
  local base done
  sleep 1
  base=$(serve_metric_calls)
  churn "$WARMUP" || return 1
  done=$WARMUP
  wait_count $((base + done * ALWAYS_ON)) serve_metric_calls || return 1
  sample serve "$done" "$agent"
  for _ in $(seq "$BATCHES"); do
    churn "$BATCH" || return 1
    done=$((done + BATCH))
    wait_count $((base + done * ALWAYS_ON)) serve_metric_calls || return 1
    sample serve "$done" "$agent"
  done
  kill -TERM "$agent"
  wait "$agent"
  echo "serve $done $((done * ALWAYS_ON)) $(serve_count)" >>"$TMP/counts"
}

mode_run() {
  # The launcher runs each phase when its go file appears and says when it is done.
  cat >"$TMP/launcher.sh" <<EOF
#!/usr/bin/env bash
phase=0
for n in $WARMUP $(printf "$BATCH %.0s" $(seq "$BATCHES")); do
  while [ ! -e "$TMP/go.\$phase" ]; do sleep 0.05; done
  seq "\$n" | xargs -P "$PAR" -I{} "$TMP/churn_cuda" --repeat "$REPEAT" $CALLS_ARGS >/dev/null
  echo "phase \$phase done" >>"$TMP/phases"
  phase=\$((phase + 1))
done
while [ ! -e "$TMP/go.end" ]; do sleep 0.05; done
EOF
  chmod +x "$TMP/launcher.sh"
  # shellcheck disable=SC2086
  "$B/eacgm" run $EACGM_ARGS --json -- "$TMP/launcher.sh" >"$TMP/report.json" 2>"$TMP/agent.err" &
  local agent=$!
  AGENT=$agent
  wait_line "tracing" "$TMP/agent.err" || return 1
  local done=0 phase=0
  for n in $WARMUP $(printf "$BATCH %.0s" $(seq "$BATCHES")); do
    touch "$TMP/go.$phase"
    wait_line "phase $phase done" "$TMP/phases" || return 1
    done=$((done + n))
    sample run "$done" "$agent"
    phase=$((phase + 1))
  done
  touch "$TMP/go.end"
  wait "$agent"
  echo "run $((done * ALWAYS_ON)) $(python3 -c 'import json,sys; print(sum(f["calls"] for f in json.load(open(sys.argv[1]))["functions"]))' "$TMP/report.json")" >>"$TMP/counts"
}

printf '%-6s %9s %10s %10s %10s\n' mode processes "VmRSS KiB" "anon KiB" "growth" | tee "$TMP/rows"
touch "$TMP/counts" "$TMP/growth"
fail=0
for m in ${MODES//,/ }; do
  LAST_RSS=
  if ! "mode_$m"; then
    echo "$m: FAIL (the run did not complete; agent's stderr above)"
    fail=1
    continue
  fi
done
echo
echo "counts (expected, seen):"
cat "$TMP/counts"
while read -r m grow; do
  if [ "$grow" -gt "$LIMIT_KIB" ]; then
    echo "$m: FAIL growth $grow KiB over $BATCH processes (limit $LIMIT_KIB KiB)"
    fail=1
  fi
done <"$TMP/growth"
while read -r m a b c d; do
  case $m in
    trace | run) [ "$a" = "$b" ] || { echo "$m: FAIL count $b, expected $a"; fail=1; } ;;
    serve) [ "$c $d" = "$a $b" ] || { echo "$m: FAIL store has $c processes, $d calls; expected $a, $b"; fail=1; } ;;
  esac
done <"$TMP/counts"
[ "$fail" = 0 ] && echo PASS || echo FAIL
exit "$fail"
