#!/usr/bin/env bash
# The Python stack sampler's own run time (kernel.bpf_stats_enabled), in milliseconds of
# program time per second, while `eacgm run --python-hz 999` samples a CPython loop whose
# stacks are DEPTH frames deep (default 22). Per second, not per run: the program also runs
# for every other task on the sampled CPUs and leaves at once, so runs are not samples.
# Usage: [PY=python3.X] bench/py_prog_cost.sh [BUILD_DIR] [DEPTH]
set -euo pipefail
B=${1:-build}
DEPTH=${2:-22}
PY=${PY:-/root/.pyenv/versions/3.12.1/bin/python3.12}
old=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled=$old' EXIT
"$B/eacgm" run --no-gpu --python-hz 999 -- "$PY" -c "
import time
def f(d):
    if d: return f(d - 1)
    s = 0
    for i in range(3000000): s += i * i
    return s
end = time.time() + 6
while time.time() < end: f($((DEPTH - 2)))
" > /dev/null 2>&1 &
sleep 2
agent=$(pgrep -n -x eacgm)
snapshot() {  # the perf_event program (prog_type 7): its run time and count
  for f in /proc/"$agent"/fdinfo/*; do
    awk '/^prog_type:/ {t=$2} /^run_time_ns:/ {r=$2} /^run_cnt:/ {c=$2} END {if (c > 0 && t == 7) print r, c}' "$f"
  done
}
a=$(snapshot)
sleep 3
b=$(snapshot)
wait
echo "$a $b" | awk '{printf "%.2f ms/s of program time, %d runs/s\n", ($3 - $1) / 3e6, ($4 - $2) / 3}'
