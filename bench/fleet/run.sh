#!/usr/bin/env bash
# The fleet simulation (BENCHMARKS.md "Fleet simulation"), bounded in time (about 13
# minutes with the defaults on a 2-core machine):
#   1. metrics     one node's /metrics (50 pods, 8 GPUs) by the daemon's code: series,
#                  bytes, render time (eacgm_bench_fleet_metrics measure).
#   2. prometheus  Debian's Prometheus scraping N simulated nodes, all served by one
#                  eacgm_bench_fleet_metrics process on one port (/metrics?node=I, one
#                  static target per node), for each N of $PROM_NODES at $PROM_INTERVAL:
#                  after $PROM_SETTLE s, over $PROM_WINDOW s, from Prometheus's own
#                  /metrics: samples appended per second, its CPU, RSS and head series.
#   3. store       a throwaway PostgreSQL (Debian's, initdb in a temporary directory, as
#                  nobody when run as root; default settings, Unix socket only) and
#                  eacgm_bench_fleet_store: writers' rows/s, the month's bytes, the
#                  history and efficiency dashboards' query times, and `eacgm report` over the month
#                  (needs BUILD/eacgm).
#   4. ship        the same server and eacgm_bench_fleet_ship: the write load per node on
#                  PostgreSQL when every interval goes there (direct) and when the node
#                  keeps its intervals in SQLite and ships rollups and facts ([store]
#                  fleet_url): rows/s, bytes/s, the server's CPU, nodes per core, bytes a
#                  node-day; SHIP_NODES writers × SHIP_MINUTES simulated minutes each.
# Usage: bench/fleet/run.sh [BUILD] [all|metrics|prometheus|store|ship]
# Settings (environment): PROM_NODES="100 200 400" PROM_INTERVAL=10 PROM_SETTLE=30
#   PROM_WINDOW=60 WRITERS=8 WRITE_SECONDS=60 FLEET_NODES=4 DAYS=30 REPEAT=5 SHIP_NODES=4
#   SHIP_MINUTES=80 EXPLAIN=0 DETAIL=1 (0: no reports from the hour rows without the job rollups)
set -euo pipefail
B=${1:-build}
WHAT=${2:-all}
PROM_NODES=${PROM_NODES:-"100 200 400"}
PROM_INTERVAL=${PROM_INTERVAL:-10}
PROM_SETTLE=${PROM_SETTLE:-30}
PROM_WINDOW=${PROM_WINDOW:-60}
WRITERS=${WRITERS:-8}
WRITE_SECONDS=${WRITE_SECONDS:-60}
FLEET_NODES=${FLEET_NODES:-4}
DAYS=${DAYS:-30}
REPEAT=${REPEAT:-5}
SHIP_NODES=${SHIP_NODES:-4}
SHIP_MINUTES=${SHIP_MINUTES:-80}
here=$(cd "$(dirname "$0")/../.." && pwd)
metrics_bin=$B/bench/eacgm_bench_fleet_metrics
store_bin=$B/bench/eacgm_bench_fleet_store
ship_bin=$B/bench/eacgm_bench_fleet_ship
case "$WHAT" in
  metrics | prometheus) needed=("$metrics_bin") ;;
  store) needed=("$store_bin") ;;
  ship) needed=("$ship_bin") ;;
  *) needed=("$metrics_bin" "$store_bin" "$ship_bin") ;;
esac
for b in "${needed[@]}"; do
  [ -x "$b" ] || { echo "fleet: no $b (cmake --build $B --target $(basename "$b"))" >&2; exit 2; }
done
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
work=$(mktemp -d /tmp/eacgm-fleet-XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "${pg_bin:-}" ]; then "${as[@]}" "$pg_bin/pg_ctl" -D "$work/pg/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
echo "fleet simulation at $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%FT%TZ)," \
  "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "$WHAT" = all ] || [ "$WHAT" = metrics ]; then
  echo; echo "== one node's /metrics (server::write_metrics, text 0.0.4)"
  "$metrics_bin" measure --renders 40
fi

# The value of a counter or gauge (summed over its series) in a Prometheus text body.
metric() { awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $NF } END { printf "%.6f", s }' "$2"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

if [ "$WHAT" = all ] || [ "$WHAT" = prometheus ]; then
  echo; echo "== Prometheus $(/usr/bin/prometheus --version 2>&1 | head -1 | cut -d' ' -f3) scraping simulated nodes every ${PROM_INTERVAL}s"
  max_nodes=$(echo "$PROM_NODES" | tr ' ' '\n' | sort -n | tail -1)
  eport=$(free_port)
  "$metrics_bin" serve --port "$eport" --nodes "$max_nodes" >"$work/exporter.log" 2>&1 &
  exporter=$!
  pids+=("$exporter")
  pport=$(free_port)
  mkdir -p "$work/prom"
  write_config() {
    {
      printf 'global:\n  scrape_interval: %ss\n  scrape_timeout: %ss\n' "$PROM_INTERVAL" "$PROM_INTERVAL"
      printf 'scrape_configs:\n  - job_name: eacgm\n    metrics_path: /metrics\n    static_configs:\n'
      for ((i = 0; i < $1; i++)); do
        printf "      - targets: ['127.0.0.1:%s']\n        labels: {node: 'gpu-node-%04d', __param_node: '%d'}\n" "$eport" "$i" "$i"
      done
      printf '    relabel_configs:\n      - source_labels: [node]\n        target_label: instance\n'
    } >"$work/prom/prometheus.yml"
  }
  write_config "$(echo "$PROM_NODES" | cut -d' ' -f1)"
  /usr/bin/prometheus --config.file="$work/prom/prometheus.yml" --storage.tsdb.path="$work/prom/data" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$work/prom/log" 2>&1 &
  prom=$!
  pids+=("$prom")
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$pport/-/ready" >/dev/null && break; sleep 0.2; done
  printf '| nodes | interval | head series | series per node | samples/s | Prometheus CPU (cores) | samples/s per core | RSS MiB | RSS KiB per series | exporter CPU (cores) | targets up | scrape ms p50 / max |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n'
  for n in $PROM_NODES; do
    write_config "$n"
    kill -HUP "$prom"
    sleep "$PROM_SETTLE"
    curl -sf "http://127.0.0.1:$pport/metrics" >"$work/m0"
    e0=$(cpu_ticks "$exporter"); t0=$(date +%s.%N)
    sleep "$PROM_WINDOW"
    curl -sf "http://127.0.0.1:$pport/metrics" >"$work/m1"
    e1=$(cpu_ticks "$exporter"); t1=$(date +%s.%N)
    q() { curl -sfG "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" |
      python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)'; }
    up=$(q 'sum(up)')
    scrape="$(q 'quantile(0.5, scrape_duration_seconds)') $(q 'max(max_over_time(scrape_duration_seconds[1m]))')"
    python3 - "$n" "$PROM_INTERVAL" "$t0" "$t1" "$e0" "$e1" "$(getconf CLK_TCK)" "$up" \
      "$(metric prometheus_tsdb_head_series "$work/m1")" \
      "$(metric prometheus_tsdb_head_samples_appended_total "$work/m0")" "$(metric prometheus_tsdb_head_samples_appended_total "$work/m1")" \
      "$(metric process_cpu_seconds_total "$work/m0")" "$(metric process_cpu_seconds_total "$work/m1")" \
      "$(metric process_resident_memory_bytes "$work/m1")" $scrape <<'EOF'
import sys
n, interval, t0, t1, e0, e1, hz, up, series, s0, s1, c0, c1, rss, sp50, smax = sys.argv[1:]
dt = float(t1) - float(t0)
rate = (float(s1) - float(s0)) / dt
cores = (float(c1) - float(c0)) / dt
exp = (float(e1) - float(e0)) / float(hz) / dt
print(f"| {n} | {interval} s | {int(float(series)):,} | {float(series)/int(n):,.0f} | {rate:,.0f} | {cores:.2f} | "
      f"{rate/cores if cores else 0:,.0f} | {float(rss)/2**20:,.0f} | {float(rss)/1024/float(series):.1f} | {exp:.2f} | {up} | {float(sp50)*1000:.0f} / {float(smax)*1000:.0f} |")
EOF
  done
  kill "$exporter"; wait "$exporter" 2>/dev/null || true
  grep -h "scrapes served" "$work/exporter.log" || true
  kill "$prom"; wait "$prom" 2>/dev/null || true
  grep -i "level=error" "$work/prom/log" | head -3 || true
fi

# A throwaway PostgreSQL server (default settings, Unix socket only) for store and ship.
start_postgres() {
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -x "$pg_bin/initdb" ] || { echo "fleet: no PostgreSQL server under /usr/lib/postgresql (make setup)" >&2; exit 2; }
  mkdir -p "$work/pg"
  as=()
  if [ "$(id -u)" -eq 0 ]; then
    chown "$(id -u nobody):$(id -g nobody)" "$work/pg"
    as=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
  fi
  port=$(free_port)
  (cd "$work/pg" && "${as[@]}" "$pg_bin/initdb" -D "$work/pg/data" -U postgres -A trust --locale=C --encoding=UTF8 >/dev/null)
  (cd "$work/pg" && "${as[@]}" "$pg_bin/pg_ctl" -D "$work/pg/data" -l "$work/pg/server.log" -w \
    -o "-k $work/pg -p $port -c listen_addresses=''" start >/dev/null)
  echo; echo "== $("$pg_bin/postgres" --version), default settings: $("$pg_bin/psql" -X -At -h "$work/pg" -p "$port" -U postgres -d postgres -c \
    "SELECT string_agg(name || '=' || setting || coalesce(unit, ''), ' ') FROM pg_settings WHERE name IN
     ('shared_buffers', 'work_mem', 'max_parallel_workers_per_gather', 'synchronous_commit')")"
}

if [ "$WHAT" = all ] || [ "$WHAT" = store ]; then
  start_postgres
  "$store_bin" --url "host=$work/pg port=$port dbname=postgres user=postgres" --writers "$WRITERS" \
    --write-seconds "$WRITE_SECONDS" --fleet-nodes "$FLEET_NODES" --days "$DAYS" --repeat "$REPEAT" \
    --dashboard "$here/deploy/grafana/dashboards/history.json" --dashboard "$here/deploy/grafana/dashboards/efficiency.json"
  # The job report over the same month, as a user asks it: `eacgm report` against the
  # store, one namespace and then every job, REPEAT runs each (wall time of the command);
  # then again with the job rollups deleted (the hour rows in detail, as before them).
  # EXPLAIN=1: the plans of the statements over 100 ms (auto_explain, ANALYZE) of one
  # more report, untimed, from the server's log.
  if [ -x "$B/eacgm" ]; then
    url="host=$work/pg port=$port dbname=postgres user=postgres"
    psql_do() { "$pg_bin/psql" -X -q -At -h "$work/pg" -p "$port" -U postgres -d postgres -c "$1"; }
    echo; echo "the job report over the last $DAYS days, $FLEET_NODES nodes, $REPEAT runs each: p50 / p95 s (rows)"
    echo "| report | p50 / p95 s (rows) |"; echo "|---|---|"
    time_reports() {
      for sel in "--namespace ml" ""; do
        : >"$work/times"
        for _ in $(seq "$REPEAT"); do
          start=$(date +%s.%N)
          # shellcheck disable=SC2086
          "$B/eacgm" report --store "$url" $sel --since "${DAYS}d" --json >"$work/report.json"
          awk -v end="$(date +%s.%N)" -v start="$start" 'BEGIN {print end - start}' >>"$work/times"
        done
        rows=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["jobs"]))' "$work/report.json")
        echo "| ${sel:-every job}$1 | $(sort -n "$work/times" | awk '{a[NR]=$1} END {printf "%.2f / %.2f", a[int((NR+1)/2)], a[NR]}') ($rows) |"
      done
    }
    time_reports ""
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d["jobs"], sort_keys=True))' \
      "$work/report.json" >"$work/rolled.json"
    if [ "${EXPLAIN:-0}" = 1 ]; then
      # The module's settings are known to the session that loaded it.
      "$pg_bin/psql" -X -q -h "$work/pg" -p "$port" -U postgres -d postgres -c "LOAD 'auto_explain'" \
        -c "ALTER SYSTEM SET session_preload_libraries = 'auto_explain'" \
        -c "ALTER SYSTEM SET auto_explain.log_min_duration = 100" \
        -c "ALTER SYSTEM SET auto_explain.log_analyze = on" -c "ALTER SYSTEM SET auto_explain.log_buffers = on" \
        -c "SELECT pg_reload_conf()" >/dev/null
      log_from=$(wc -l <"$work/pg/server.log")
      "$B/eacgm" report --store "$url" --namespace ml --since "${DAYS}d" --json >/dev/null
      echo; echo "plans of the statements over 100 ms of one more --namespace ml report (untimed):"
      tail -n +"$((log_from + 1))" "$work/pg/server.log" | grep -v "^\s*$" | head -400 || true
      psql_do "ALTER SYSTEM RESET ALL"
      psql_do "SELECT pg_reload_conf()" >/dev/null
    fi
    if [ "${DETAIL:-1}" = 1 ]; then
      psql_do "DELETE FROM job_gpus; DELETE FROM job_calls; DELETE FROM meta WHERE key LIKE 'rolled_jobs:%'"
      psql_do "VACUUM ANALYZE job_gpus, job_calls"
      time_reports " (hour rows, no job rollups)"
      python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d["jobs"], sort_keys=True))' \
        "$work/report.json" >"$work/detail.json"
      if cmp -s "$work/rolled.json" "$work/detail.json"; then
        echo "every job's report: the same from the job rollups and from the hour rows"
      else
        echo "every job's report: DIFFERS between the job rollups and the hour rows"
      fi
    fi
  fi
fi

if [ "$WHAT" = all ] || [ "$WHAT" = ship ]; then
  [ -n "${pg_bin:-}" ] || start_postgres
  echo; echo "== the write load per node on PostgreSQL: every interval (direct) or the node's rollups and facts (ship), $SHIP_NODES nodes × $SHIP_MINUTES simulated minutes"
  mkdir -p "$work/local"
  "$ship_bin" --url "host=$work/pg port=$port dbname=postgres user=postgres" --dir "$work/local" \
    --nodes "$SHIP_NODES" --minutes "$SHIP_MINUTES"
fi
