#!/usr/bin/env bash
# Cost of Python stack sampling (root): a busy single-threaded Python loop runs SECONDS
# alone, then again while `eacgm run --pid` samples it at HZ (GPU sampling off); prints
# the loop's work rate both times and the agent's CPU time while it sampled.
# Usage: [PY=python3.X] bench/py_sample_cost.sh [BUILD_DIR] [SECONDS] [HZ]
set -euo pipefail
B=${1:-build}
SECS=${2:-10}
HZ=${3:-99}
PY=${PY:-/root/.pyenv/versions/3.12.1/bin/python3.12}
LOOP='import sys, time
def work():
    s = 0
    for i in range(1000):
        s += i * i
    return s
time.sleep(float(sys.argv[2]))  # the agent attaches meanwhile
n = 0
end = time.perf_counter() + float(sys.argv[1])
while time.perf_counter() < end:
    work()
    n += 1
print(n / float(sys.argv[1]))'
alone=$("$PY" -c "$LOOP" "$SECS" 0)
"$PY" -c "$LOOP" "$SECS" 2 > /tmp/eacgm-py-cost.$$ &
py=$!
"$B/eacgm" run --no-gpu --python-hz "$HZ" --pid "$py" > /tmp/eacgm-py-cost-report.$$ 2>&1 &
agent=$!
sleep 2
read -r -a start < "/proc/$agent/stat"
sleep "$SECS"
read -r -a stat < "/proc/$agent/stat"
wait "$py"
wait "$agent" || true
sampled=$(cat /tmp/eacgm-py-cost.$$)
samples=$(grep -o 'py_samples=[0-9]*' /tmp/eacgm-py-cost-report.$$ | tail -1)
rm -f /tmp/eacgm-py-cost.$$ /tmp/eacgm-py-cost-report.$$
ticks=$(getconf CLK_TCK)
awk -v a="$alone" -v s="$sampled" -v u="$((stat[13] - start[13]))" -v k="$((stat[14] - start[14]))" \
    -v t="$ticks" -v secs="$SECS" -v hz="$HZ" -v n="$samples" 'BEGIN {
  cpu = (u + k) / t
  printf "python loop: %.0f/s alone, %.0f/s sampled at %d Hz (%+.2f%%); agent CPU %.3f s in %d s (%.2f%% of one core); %s\n",
         a, s, hz, 100 * (s - a) / a, cpu, secs, 100 * cpu / secs, n
}'
