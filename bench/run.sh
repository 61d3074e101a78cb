#!/usr/bin/env bash
# `make bench`: every benchmark, in the order BENCHMARKS.md reports them (root).
set -euo pipefail
B=${1:-build}
echo "== replay: records through decode, summary, JSONL (one core)"
"$B/bench/eacgm_bench_ingest" --benchmark_min_time=1
echo "== analysis: sketch and summary updates"
"$B/bench/eacgm_bench_analysis" --benchmark_min_time=0.5
echo "== analysis: the Python profile read out at its default caps"
"$B/bench/eacgm_bench_python_profile"
echo "== analysis: NCCL kernels joined to their calls, and the join's heap at its bounds"
"$B/bench/eacgm_bench_nccl_gpu_join"
echo "== probe: symbol table of a large library"
"$B/bench/eacgm_bench_probe" --benchmark_min_time=0.5
echo "== NVML sampling pass (fake NVML unless EACGM_BENCH_REAL_NVML=1)"
"$B/bench/eacgm_bench_sample" --benchmark_min_time=0.5
echo "== eacgm serve: /metrics render, /api/v1 documents, snapshot publication"
"$B/bench/eacgm_bench_serve" --benchmark_min_time=0.5
echo "== overhead per traced call and capture"
bench/overhead.sh "$B" "${ITERS:-200000}" "${CALL:-malloc}"
echo "== idle cost"
bench/idle.sh "$B" 10
echo "== eacgm serve: idle and with one scrape a second (no NVML, then the fake NVML)"
bench/serve_scrape.sh "$B" 30
GPU=fake bench/serve_scrape.sh "$B" 30
echo "== eacgm serve under the tight loop, with and without an HTTP client"
bench/serve_load.sh "$B" "${SERVE_ITERS:-10000000}"
echo "== eacgm serve: /metrics alone and while 64 slow, idle and half-sent connections are held open"
bench/serve_slow_clients.sh "$B" 400 64
echo "== governance hook: per launch and per allocation (fake libcuda)"
"$B/bench/eacgm_bench_hook" --benchmark_min_time=0.3 --benchmark_repetitions=5 --benchmark_report_aggregates_only
echo "== history: a fleet of nodes into one PostgreSQL server (a throwaway one)"
bench/history_fleet.sh "$B" --sweep 1,2,4,8 --nodes 8 --hours 1.25 --repeat 10
echo "== fleet simulation: simulated nodes into one Prometheus and one PostgreSQL (about 13 minutes)"
bench/fleet/run.sh "$B"
