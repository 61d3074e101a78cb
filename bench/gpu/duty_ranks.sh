#!/usr/bin/env bash
# The duty cycle on a node of several ranks: N copies of train_step.py (one GPU shared,
# each its own process and address space) under one `eacgm run`, once with the budget
# off (every call counted, exact) and once with `duty_cycle = true` and the default 1%
# budget. The copies are deterministic and alike, so both runs make the same calls.
# Prints the duty run's launches, copies and memsets against the exact run's (all ranks
# together, and per rank from the GPU-work table), the share of the time the cycled
# probes were attached, the switches and what they took (the kernel registers or
# removes each probe in every address space that maps the library), the median step of
# each run, and, for rank 1, its steps inside the windows and inside the detaches against
# those between (bench/gpu/window_cost.py). Logs are copied to $OUT/ranksN when OUT is set.
# Usage: bench/gpu/duty_ranks.sh EACGM [N] [SIZE] [STEPS]   (PY: the torch interpreter)
set -uo pipefail
EACGM=$1 N=${2:-8} SIZE=${3:-cpu} STEPS=${4:-1500}
PY=${PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/rounds_common.sh"
printf '[trace]\nbudget = 0\n' >"$TMP/exact.toml"
printf '[trace]\nduty_cycle = true\n' >"$TMP/duty.toml"
ranks() {  # NAME
  local cmd="" i
  for i in $(seq "$N"); do
    cmd+="'$PY' '$HERE/train_step.py' --size $SIZE --steps $STEPS --step-log '$TMP/$1.$i.steps' >'$TMP/$1.$i.train' 2>&1 & "
  done
  echo "${cmd}wait"
}
"$EACGM" run --json --no-gpu --config "$TMP/exact.toml" -- bash -c "$(ranks exact)" \
  >"$TMP/exact.json" 2>"$TMP/exact.err" || { echo "exact run failed:"; tail -5 "$TMP/exact.err"; }
EACGM_DUTY_LOG="$TMP/duty.log" EACGM_DUTY_SWITCHES="$TMP/duty.switches" \
  "$EACGM" run --json --no-gpu --config "$TMP/duty.toml" -- bash -c "$(ranks duty)" \
  >"$TMP/duty.json" 2>"$TMP/duty.err" || { echo "duty run failed:"; tail -5 "$TMP/duty.err"; }
[ -n "${OUT:-}" ] && mkdir -p "$OUT/ranks$N" &&
  cp "$TMP"/*.json "$TMP"/*.err "$TMP"/duty.log "$TMP"/duty.switches "$TMP"/duty.1.steps "$OUT/ranks$N"/ 2>/dev/null
for run in exact duty; do
  echo "$run: median step $(grep -ho 'step_ms=[0-9.]*' "$TMP"/$run.*.train | cut -d= -f2 | median) ms over $N ranks"
done
python3 - "$TMP" "$N" <<'PYEOF'
import json, sys
tmp, n = sys.argv[1], int(sys.argv[2])
def load(path):
    text = open(path).read()
    try:
        return json.loads(text)
    except ValueError:
        sys.exit(f"{path}: not JSON: {text[:300]!r}")
d, e = load(f"{tmp}/duty.json"), load(f"{tmp}/exact.json")
def kind(name):
    return "launch" if name.startswith("cuLaunch") else "copy" if name.startswith("cuMemcpy") else "memset" if name.startswith("cuMemset") else None
def totals(doc):
    out = {}
    for f in doc["functions"]:
        k = kind(f["function"])
        if k:
            c = out.setdefault(k, [0, 0.0])
            c[0] += f["calls"]
            c[1] += (f.get("calls_error") or 0) ** 2
    return out
def kernels_per_rank(doc):
    per = {}
    for r in doc["gpu_work"]["rows"]:
        if r["kind"] == "kernel":
            per[r["pid"]] = per.get(r["pid"], 0) + r["count"]
    return sorted(per.values())
td, te = totals(d), totals(e)
o, a = d["overhead"], d["accounting"]
print(f"duty run: cycled probes attached {o.get('attached_share', 1)*100:.1f}% of the time (duty now {o.get('duty_fraction', 1)*100:.1f}%),"
      f" {a.get('duty_switches', 0)} switches, {a.get('duty_failures', 0)} failures, {a.get('duty_switch_traps', 0)} traps while switching")
for k in ("launch", "copy", "memset"):
    exact = te.get(k, [0, 0])[0]
    est, err = td.get(k, [0, 0])[0], td.get(k, [0, 0.0])[1] ** 0.5
    rel = (est - exact) / exact * 100 if exact else 0.0
    print(f"  {k}, {n} ranks: estimate {est} vs exact {exact}: {rel:+.2f}% (reported error {err/exact*100 if exact else 0:.2f}%)")
print(f"  kernels per rank, exact: {kernels_per_rank(e)}")
print(f"  kernels per rank, duty:  {kernels_per_rank(d)}")
att, det = [], []
for line in open(f"{tmp}/duty.log"):
    f = dict(kv.split("=", 1) for kv in line.split())
    att.append(float(f["attach_ms"]))
    det.append(float(f["detach_ms"]))
if att:
    print(f"  switch times (mean so far, last logged): attach {att[-1]:.1f} ms, detach {det[-1]:.1f} ms")
for p in o.get("processes", []):
    s = p.get("measured_slowdown")
    print(f"  pid {p['pid']}: measured slowdown {s if s is None else f'{s*100:.2f}%'}, recent ratio {p['recent_ratio']*100:.2f}%")
PYEOF
echo "rank 1, steps inside windows and detaches against steps between:"
python3 "$HERE/window_cost.py" "$TMP/duty.switches" "$TMP/duty.1.steps"
