#!/usr/bin/env bash
# Device check of the job report (docs/job-report.md): `eacgm serve` keeps its history in
# SQLite while tests/gpu/job_duty.py, a Slurm-style job (SLURM_JOB_ID), computes for
# COMPUTE_S and sleeps for IDLE_S seconds in turns, holding GPU 0 throughout; then
# `eacgm report --job` must give an idle share of 50% +- 5 points and the job's energy
# within 2% of the GPU's energy counter difference over its life (read by the job itself).
# Then two jobs share the GPU (JOB_SHARED_CYCLES, 3; 0 leaves it out): their energy divided
# by a documented basis and, together, within 2% of the counter over their lives.
# Usage: tests/gpu/job_report_check.sh CARRY_DIR [WORK_DIR]   (exit 0 pass, 1 FAIL, 77 skip)
#   (JOB_CYCLES=6 JOB_COMPUTE_S=10 JOB_IDLE_S=10: two minutes)
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
source "$HERE/check_common.sh"
BIN="$(cd "${1:?usage: job_report_check.sh CARRY_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-job-report.XXXXXX)}"
mkdir -p "$WORK"
carry_libs "$BIN"
need_torch_gpu
JOB="eacgm-check-$$"
PORT=$((20000 + RANDOM % 20000))
"$BIN/eacgm" serve --listen "127.0.0.1:$PORT" --store "sqlite:$WORK/history.db" 2>"$WORK/serve.err" &
SERVE=$!
sleep 5
SLURM_JOB_ID="$JOB" "$PY" "$HERE/job_duty.py" "${JOB_CYCLES:-6}" "${JOB_COMPUTE_S:-10}" "${JOB_IDLE_S:-10}" \
  >"$WORK/job.json" 2>"$WORK/job.err"
JOB_RC=$?
sleep 22  # the last intervals written (every 10 s) and the process gone from the GPU
"$BIN/eacgm" report --job "$JOB" --since 1h --store "sqlite:$WORK/history.db" --json >"$WORK/report.json" 2>"$WORK/report.err"
"$BIN/eacgm" report --job "$JOB" --since 1h --store "sqlite:$WORK/history.db" 2>&1 | tail -n 8
# Two jobs sharing GPU 0: A computes and sleeps in turns (JOB_SHARED_CYCLES rounds), B
# computes without pause for two of A's rounds, from 3 s into A's life: each gets the part
# of the GPU's energy its share says (docs/job-report.md "Energy"), and together the
# counter's difference over A's life.
SHARED_RC=0
if [ "${JOB_SHARED_CYCLES:-3}" -gt 0 ]; then
  SLURM_JOB_ID="$JOB-a" "$PY" "$HERE/job_duty.py" "${JOB_SHARED_CYCLES:-3}" "${JOB_COMPUTE_S:-10}" \
    "${JOB_IDLE_S:-10}" >"$WORK/job_a.json" 2>"$WORK/job_a.err" &
  A=$!
  sleep 3
  SLURM_JOB_ID="$JOB-b" "$PY" "$HERE/job_duty.py" 1 "$(( 2 * ${JOB_COMPUTE_S:-10} ))" 0 \
    >"$WORK/job_b.json" 2>"$WORK/job_b.err" || SHARED_RC=1
  wait $A || SHARED_RC=1
  sleep 22
  "$BIN/eacgm" report --since 1h --store "sqlite:$WORK/history.db" --json >"$WORK/shared.json" 2>>"$WORK/report.err"
  "$BIN/eacgm" report --since 1h --store "sqlite:$WORK/history.db" 2>&1 | tail -n 10
fi
kill -TERM $SERVE; wait $SERVE
"$PY" - "$WORK" "$JOB_RC" "$JOB" "$SHARED_RC" "${JOB_SHARED_CYCLES:-3}" <<'PY'
import json, sys
work, job_rc, job, shared_rc, shared = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
fails = 0
def check(name, ok, detail):
    global fails
    print(f"{'PASS' if ok else 'FAIL'}: {name}: {detail}")
    fails += 0 if ok else 1
try:
    duty = json.loads(open(f"{work}/job.json").read())  # the job's own figures
    rows = json.load(open(f"{work}/report.json"))["jobs"]
except (OSError, ValueError, KeyError) as e:
    print(f"FAIL: no job figures or no report: {e}"); sys.exit(1)
check("the job ran", job_rc == 0, job_rc)
check("one report row", len(rows) == 1, [r.get("job") for r in rows])
if rows:
    r = rows[0]
    life = duty["end"] - duty["start"]
    print(f"| held GPU-h | active GPU-h | idle share | longest idle s | energy kWh | basis | job's life s |")
    print(f"| {r['gpu_hours']:.5f} | {r['active_gpu_hours']:.5f} | {r['idle_share']:.3f} | {r['longest_idle_s']} | "
          f"{r['energy_kwh']:.6f} | {r['activity_basis']}, {r['energy_basis']}, {r['share_basis']} | {life:.1f} |")
    check("idle share 50% +- 5 points", abs(r["idle_share"] - 0.5) <= 0.05, r["idle_share"])
    e0, e1 = duty["energy_mj"]
    if e0 is not None and e1 is not None:
        counter_kwh = (e1 - e0) / 1e3 / 3.6e6
        check("energy within 2% of the counter's difference over the job's life",
              abs(r["energy_kwh"] - counter_kwh) <= 0.02 * counter_kwh,
              f"report {r['energy_kwh']:.6f} kWh, counter {counter_kwh:.6f} kWh")
    else:
        check("the GPU has an energy counter", False, "nvmlDeviceGetTotalEnergyConsumption failed")
if shared:
    try:
        a_job = json.loads(open(f"{work}/job_a.json").read())
        by_job = {r["job"]: r for r in json.load(open(f"{work}/shared.json"))["jobs"]}
    except (OSError, ValueError, KeyError) as e:
        print(f"FAIL: no shared jobs' figures or report: {e}"); sys.exit(1)
    check("the shared jobs ran", shared_rc == 0, shared_rc)
    a, b = by_job.get(job + "-a"), by_job.get(job + "-b")
    check("a report row for each shared job", a is not None and b is not None, sorted(by_job))
    if a and b:
        print("| job | held GPU-h | energy kWh | share basis |")
        for name, r in (("A", a), ("B", b)):
            print(f"| {name} | {r['gpu_hours']:.5f} | {r['energy_kwh']:.6f} | {r['share_basis']} |")
        bases = set(a["share_basis"].split("+")) | set(b["share_basis"].split("+"))
        check("the shared intervals divided by a documented basis", bases <= {"sole", "sm", "equal"} and
              ("sm" in bases or "equal" in bases), f"A {a['share_basis']}, B {b['share_basis']}")
        e0, e1 = a_job["energy_mj"]
        if e0 is not None and e1 is not None:
            counter_kwh = (e1 - e0) / 1e3 / 3.6e6
            both = a["energy_kwh"] + b["energy_kwh"]
            check("A and B together within 2% of the counter's difference over A's life",
                  abs(both - counter_kwh) <= 0.02 * counter_kwh,
                  f"A {a['energy_kwh']:.6f} + B {b['energy_kwh']:.6f} = {both:.6f} kWh, counter {counter_kwh:.6f} kWh")
            # Per held hour: B computes all its life, A half of it (its total is larger:
            # it holds the GPU three times as long and computes alone for most of it).
            rate = lambda r: r["energy_kwh"] / r["gpu_hours"] if r["gpu_hours"] else 0.0
            check("B, computing throughout, draws more per held hour than A, idle half its life",
                  rate(b) > rate(a), f"A {rate(a) * 1e3:.0f} W, B {rate(b) * 1e3:.0f} W")
            # The raw intervals of GPU 0 over A's life, with each process's row, to read a
            # difference from: the GPU's energy, passes and SM sum against the processes'.
            import sqlite3
            db = sqlite3.connect(f"{work}/history.db")
            t0, t1 = int(a_job["start"] * 1e9) - 10**10, int(a_job["end"] * 1e9) + 10**10
            print("| t s | span s | energy J | passes | power W | processes (pid: passes, sm, power sum W, idle) |")
            for t, span, mj, n, w in db.execute(
                    "SELECT t_ns, span_ns, energy_mj, samples, power_mean_w FROM gpus WHERE tier = 0 AND gpu = 0 "
                    "AND t_ns BETWEEN ? AND ? ORDER BY t_ns", (t0, t1)):
                procs = db.execute("SELECT pid, samples, sm_mean, power_sum_w, idle_samples FROM gpu_processes "
                                   "WHERE tier = 0 AND gpu = 0 AND t_ns = ?", (t,)).fetchall()
                print(f"| {(t - t0) / 1e9:.1f} | {span / 1e9:.1f} | {(mj or 0) / 1e3:.0f} | {n} | {w or 0:.0f} | "
                      + "; ".join(f"{p}: {s_}, {sm if sm is None else round(sm, 1)}, {pw if pw is None else round(pw)}, {idl}"
                                  for p, s_, sm, pw, idl in procs) + " |")
sys.exit(1 if fails else 0)
PY
