#!/usr/bin/env bash
# The history's cost in the agent on the device: `eacgm serve` (always-on, GPU sampling)
# under the same PyTorch training run, with the store off and with the default SQLite
# store (interval 10 s), alternated REPS times; prints the agent's CPU seconds per phase
# and the calls/s the run made.
# Usage: bench/gpu/history_cost.sh BIN_DIR [SECONDS] [REPS]
set -uo pipefail
BIN="$(cd "${1:?usage: history_cost.sh BIN_DIR [SECONDS] [REPS]}" && pwd)"
SECS=${2:-30}
REPS=${3:-2}
PY="${TORCH_PY:-/opt/torch/.venv/bin/python}"
PORT=${PORT:-9979}
WORK=$(mktemp -d /tmp/eacgm-hcost.XXXXXX)
[ -d "$BIN/lib" ] && export LD_LIBRARY_PATH="$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cat >"$WORK/train.py" <<'PY'
import sys, time, torch
dev = torch.device("cuda:0")
model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(8)]).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(64, 1024, device=dev)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    opt.zero_grad(); model(x).square().mean().backward(); opt.step()
torch.cuda.synchronize()
PY
scrape() { "$PY" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$PORT$1"; }
ticks=$(getconf CLK_TCK)
phase() {  # $1: off | sqlite
  local store=off
  [ "$1" = sqlite ] && store="sqlite:$WORK/h.db"
  "$BIN/eacgm" serve --listen "127.0.0.1:$PORT" --store "$store" 2>"$WORK/serve.$1.err" &
  local pid=$!
  for _ in $(seq 150); do scrape /readyz >/dev/null 2>&1 && break; sleep 0.2; done
  local c0 c1
  c0=$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' /proc/$pid/stat)
  "$PY" "$WORK/train.py" "$SECS"
  sleep 1
  c1=$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' /proc/$pid/stat)
  local calls
  calls=$(scrape /metrics | awk '$1 ~ /^eacgm_calls_total/ {s += $2} END {printf "%d", s}')
  kill -TERM $pid; wait $pid
  awk -v p="$1" -v c="$((c1 - c0))" -v t="$ticks" -v s="$SECS" -v n="$calls" 'BEGIN {
    printf "%-7s agent CPU %6.2f s over %s s (%.2f%% of a core), %d calls (%d/s)\n", p, c / t, s, c / t / s * 100, n, n / s }' 
}
for _ in $(seq "$REPS"); do phase off; phase sqlite; done
ls -la "$WORK/h.db" 2>/dev/null
