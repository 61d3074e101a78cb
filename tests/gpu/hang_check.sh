#!/usr/bin/env bash
# Device check for the hang diagnosis under `eacgm serve` ([hangs] min_age_s = 5):
#
# A. (2 GPUs or more) a torchrun job of two NCCL ranks, one per GPU, runs 20 all-reduces;
#    then rank 1 sleeps HANG_S (120) seconds before its next all-reduce while rank 0
#    enters it and waits in a synchronisation. Within 10 s of min_age_s, /api/v1/inflight
#    names rank 1 as never entered and rank 0 as waiting (verdict, communicator hang), and
#    /metrics has eacgm_hangs{rule="communicator"} 1, and its progress series have rank 1
#    behind rank 0 while rank 0 waits (what the alert EacgmNcclRankMissing compares across
#    nodes); once rank 1 arrives and the job goes
#    on, the hang is over: /api/v1/anomalies lists it with over=true, and the history
#    store has an anomaly row of kind hang. Rank 0's waiting thread (off the CPU, so never
#    sampled) has its Python stack read: communicators[].in[] and the hang's python_stacks
#    name sync_gradients, the job's function that called all_reduce (tests/gpu/hang_check.sh
#    is also the device check of the stuck threads' stacks). NCCL refuses two ranks on one
#    GPU, so with one GPU this part says SKIP.
# B. (any GPU) the age rule ([hangs] hang_after_s = 8): one process waits 15-25 s in a
#    device synchronisation behind a sleeping kernel: listed in flight with its pid and a
#    growing age, a hang of rule "age" within 10 s of hang_after_s, over after it returns.
#
# Prints what it saw and PASS/FAIL per check.
# Usage: tests/gpu/hang_check.sh BIN_DIR [WORK_DIR]   (BIN_DIR/lib: extra libraries)
# Exit status: 0 all checks pass, 1 one fails, 77 no GPU/PyTorch.
set -uo pipefail
. "$(dirname "$0")/check_common.sh"

BIN="$(cd "${1:?usage: hang_check.sh BIN_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-hang.XXXXXX)}"
PORT=${PORT:-9979}
HANG_S=${HANG_S:-120}
mkdir -p "$WORK"
carry_libs "$BIN"
command -v nvidia-smi >/dev/null || skip "nvidia-smi not found"
need_torch_gpu
GPUS=$(nvidia-smi -L | grep -c '^GPU')

printf '[hangs]\nmin_age_s = 5\nhang_after_s = 8\n[store]\ninterval_s = 2\n' >"$WORK/eacgm.toml"

cat >"$WORK/hang_job.py" <<'PY'
# Two NCCL ranks; rank 1 sleeps before the 21st all-reduce.
import json, os, sys, time, torch
import torch.distributed as dist
hang_s, out = float(sys.argv[1]), sys.argv[2]
dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(rank)
x = torch.ones(1 << 20, device="cuda")
def sync_gradients(x):
    dist.all_reduce(x)        # rank 0: queued at once, then it waits below
    torch.cuda.synchronize()
for _ in range(20):
    dist.all_reduce(x)
torch.cuda.synchronize()
with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
    json.dump({"rank": rank, "pid": os.getpid(), "hang_start": time.time()}, f)
if rank == 1:
    time.sleep(hang_s)
sync_gradients(x)
for _ in range(5):
    dist.all_reduce(x)
torch.cuda.synchronize()
dist.destroy_process_group()
PY

cat >"$WORK/sync_wait.py" <<'PY'
# One device synchronisation of 15 to 25 s (a sleeping kernel), then a short one.
import json, os, sys, time, torch
out = sys.argv[1]
torch.cuda.synchronize()
rate = torch.cuda.get_device_properties(0).clock_rate if hasattr(torch.cuda.get_device_properties(0), "clock_rate") else 1_500_000
with open(os.path.join(out, "sync.json"), "w") as f:
    json.dump({"pid": os.getpid(), "start": time.time()}, f)
torch.cuda._sleep(int(25 * rate * 1000))   # clock_rate is in kHz
torch.cuda.synchronize()
with open(os.path.join(out, "sync_done.json"), "w") as f:
    json.dump({"end": time.time()}, f)
PY

"$BIN/eacgm" serve --config "$WORK/eacgm.toml" --listen "127.0.0.1:$PORT" --store "sqlite:$WORK/eacgm.db" \
  2>"$WORK/serve.err" &
SERVE=$!
trap 'kill -TERM $SERVE 2>/dev/null; wait $SERVE 2>/dev/null' EXIT
get() { "$PY" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$PORT$1"; }
for _ in $(seq 150); do get /readyz >/dev/null 2>&1 && break; sleep 0.2; done
get /readyz >/dev/null 2>&1 || { echo "FAIL: eacgm serve did not start"; cat "$WORK/serve.err"; exit 1; }

# Polls /api/v1/inflight and /metrics once a second into $WORK/$1.jsonl until $2 exits.
poll() {
  local name=$1 pid=$2
  : >"$WORK/$name.jsonl"
  while kill -0 "$pid" 2>/dev/null; do
    { get /api/v1/inflight | "$PY" -c 'import json,sys,time; d=json.load(sys.stdin); d["poll_time"]=time.time(); print(json.dumps(d))'; } \
      >>"$WORK/$name.jsonl" 2>/dev/null
    get /metrics 2>/dev/null | grep -E '^eacgm_(hangs|nccl_rank_collective_entered|nccl_rank_waiting_seconds)\{' \
      | sed "s/^/$(date +%s.%N) /" >>"$WORK/$name.metrics"
    sleep 1
  done
}

status=0
# ---- A: two ranks, one never arrives
if [ "$GPUS" -ge 2 ]; then
  "$(dirname "$PY")/torchrun" --nproc_per_node 2 "$WORK/hang_job.py" "$HANG_S" "$WORK" >"$WORK/job.out" 2>&1 &
  JOB=$!
  poll ranks $JOB
  wait $JOB; echo "job exit: $?"
  sleep 3  # a scan after the end, and a history interval
  get /api/v1/anomalies >"$WORK/anomalies.json"
  get /api/v1/inflight >"$WORK/inflight_a_after.json"  # after the job: the last poll may precede the scan that ends the hang
  get '/api/v1/history/anomalies?since=1h' >"$WORK/history_anomalies.json" 2>/dev/null || echo '{}' >"$WORK/history_anomalies.json"
  "$PY" - "$WORK" <<'PY' || status=1
import json, sys
work = sys.argv[1]
r0 = json.load(open(f"{work}/rank0.json")); r1 = json.load(open(f"{work}/rank1.json"))
start = min(r0["hang_start"], r1["hang_start"])
polls = [json.loads(l) for l in open(f"{work}/ranks.jsonl") if l.strip()]
first = None
for p in polls:
    for c in p.get("communicators", []):
        missing = [m["pid"] for m in c["missing"]]
        waiting = [i["pid"] for i in c["in"] if i.get("in_call")]
        if c["hang"] and missing == [r1["pid"]] and r0["pid"] in waiting:
            first = first or (p["poll_time"] - start, c["verdict"], c["in"], c["missing"])
print(f"rank 0 pid {r0['pid']}, rank 1 pid {r1['pid']} (sleeps); polls: {len(polls)}")
ok = True
if first:
    t, verdict, ins, miss = first
    print(f"{'seen after':>12} {t:6.1f} s   verdict: {verdict}")
    print(f"{'rank 0 in':>12} {ins[0].get('in_call')} for {ins[0].get('in_call_ns', 0) / 1e9:.1f} s")
    print(f"{'rank 1 last':>12} {miss[0].get('last_entered')} #{miss[0].get('last_instance')}")
    good = t <= 5 + 10
    print(("PASS" if good else "FAIL") + f": rank 1 named as never entered and rank 0 as waiting within 15 s ({t:.1f} s)")
    ok = ok and good
else:
    print("FAIL: no poll named rank 1 as never entered with rank 0 waiting")
    for p in polls[len(polls) // 2: len(polls) // 2 + 3]:
        print(json.dumps({k: p.get(k) for k in ("calls", "communicators", "hangs")})[:2000])
    ok = False
metrics = [l.split() for l in open(f"{work}/ranks.metrics")] if __import__("os").path.exists(f"{work}/ranks.metrics") else []
hung = any('rule="communicator"' in m[1] and float(m[2]) >= 1 for m in metrics)
print(("PASS" if hung else "FAIL") + ': /metrics eacgm_hangs{rule="communicator"} was 1 during the hang')
ok = ok and hung
# The progress series at one poll: per communicator, each rank's number and wait.
import re
polled = {}
for ts, series, value in (m for m in metrics if len(m) == 3):
    g = re.match(r'eacgm_nccl_rank_(collective_entered|waiting_seconds)\{comm_id="([^"]+)",nccl_rank="(\d+)"', series)
    if g:
        polled.setdefault((ts, g[2]), {}).setdefault(int(g[3]), {})[g[1]] = float(value)
behind = [(ts, ranks) for (ts, _), ranks in sorted(polled.items())
          if {0, 1} <= ranks.keys() and ranks[1].get("collective_entered", 0) < ranks[0].get("collective_entered", 0)
          and ranks[0].get("waiting_seconds", 0) >= 5]
if behind:
    ts, ranks = behind[0]
    print(f"{'progress':>12} at {float(ts) - start:.1f} s: " + ", ".join(
        f"rank {r} #{v.get('collective_entered', 0):.0f} waiting {v.get('waiting_seconds', 0):.1f} s" for r, v in sorted(ranks.items())))
print(("PASS" if behind else "FAIL") + ": the progress series had rank 1 behind rank 0 while rank 0 waited 5 s or more")
ok = ok and bool(behind)
anoms = json.load(open(f"{work}/anomalies.json")).get("hangs", [])
over = [h for h in anoms if h["rule"] == "communicator" and h["over"] and h["missing_ranks"] == [1]]
print(("PASS" if over else "FAIL") + f": /api/v1/anomalies has the hang, over ({len(anoms)} hangs: "
      + "; ".join(f"{h['verdict']} over={h['over']} age={h['age_ns'] / 1e9:.0f}s" for h in anoms) + ")")
ok = ok and bool(over)
last = json.load(open(f"{work}/inflight_a_after.json"))
cleared = not any(c["hang"] for c in last.get("communicators", [])) and not any(not h["over"] for h in last.get("hangs", []))
print(("PASS" if cleared else "FAIL") + ": no communicator hangs once the job went on")
ok = ok and cleared
# Rank 0's waiting thread: its Python stack, read from its memory, names sync_gradients.
stack = next((i["python_stack"] for p in polls for c in p.get("communicators", []) for i in c["in"]
              if i["pid"] == r0["pid"] and i.get("python_stack")), None)
hang_stack = next((s["python_stack"] for p in polls for h in p.get("hangs", []) for s in h.get("python_stacks", [])
                   if s["pid"] == r0["pid"] and s.get("python_stack")), None)
print(f"{'rank 0 stack':>12} " + ("\n" + " " * 13).join(stack or ["(none)"]))
named = bool(stack) and any(f.startswith("sync_gradients (") and "hang_job.py:" in f for f in stack) \
    and bool(hang_stack) and any(f.startswith("sync_gradients (") for f in hang_stack)
print(("PASS" if named else "FAIL") + ": rank 0's waiting thread has a Python stack naming sync_gradients "
      "(in communicators[].in[] and the hang's python_stacks)")
ok = ok and named
hist = [a for a in json.load(open(f"{work}/history_anomalies.json")).get("anomalies", []) if a.get("kind") == "hang"]
print(("PASS" if hist else "FAIL") + f": the history store has {len(hist)} anomaly row(s) of kind hang "
      + "; ".join(f"{a['function']} #{a['score']:.0f} pid {a.get('pid')} {a.get('dur_ns', 0) / 1e9:.0f} s" for a in hist))
ok = ok and bool(hist)
sys.exit(0 if ok else 1)
PY
else
  echo "SKIP (part A): $GPUS GPU; NCCL refuses two ranks on one device"
fi

# ---- B: the age rule, one process
"$PY" "$WORK/sync_wait.py" "$WORK" >"$WORK/sync.out" 2>&1 &
SYNC=$!
poll sync $SYNC
wait $SYNC; echo "sync_wait exit: $?"
sleep 2
get /api/v1/anomalies >"$WORK/anomalies_b.json"
get /api/v1/inflight >"$WORK/inflight_after.json"
"$PY" - "$WORK" <<'PY' || status=1
import json, sys
work = sys.argv[1]
s = json.load(open(f"{work}/sync.json")); done = json.load(open(f"{work}/sync_done.json"))
polls = [json.loads(l) for l in open(f"{work}/sync.jsonl") if l.strip()]
ages = [(p["poll_time"] - s["start"], c["name"], c["age_ns"] / 1e9) for p in polls for c in p["calls"] if c["pid"] == s["pid"]]
print(f"sync_wait pid {s['pid']}: waited {done['end'] - s['start']:.1f} s; listed in {len(ages)} polls")
for t, name, age in ages[:: max(1, len(ages) // 5)]:
    print(f"{t:8.1f} s  {name:<24} age {age:6.1f} s")
# Two polls may read the same scan (once a second): the age never goes back, and grows.
ok = len(ages) >= 3 and all(b[2] >= a[2] for a, b in zip(ages, ages[1:])) and ages[-1][2] > ages[0][2] + 2 \
    and ages[0][0] <= 5 + 2
print(("PASS" if ok else "FAIL") + ": listed in flight with its pid within ~1 s of min_age_s, age growing")
hang_at = next((p["poll_time"] - s["start"] for p in polls for h in p.get("hangs", [])
                if h["rule"] == "age" and h["pid"] == s["pid"]), None)
good = hang_at is not None and hang_at <= 8 + 10
print(("PASS" if good else "FAIL") + f": an age-rule hang after {hang_at} s (hang_after_s 8)")
after = json.load(open(f"{work}/inflight_after.json"))
gone = not any(c["pid"] == s["pid"] for c in after["calls"])
print(("PASS" if gone else "FAIL") + ": gone from /api/v1/inflight after its return")
over = [h for h in json.load(open(f"{work}/anomalies_b.json")).get("hangs", []) if h["rule"] == "age" and h["pid"] == s["pid"] and h["over"]]
print(("PASS" if over else "FAIL") + ": /api/v1/anomalies has the age-rule hang, over" + (f": {over[0]['verdict']}" if over else ""))
sys.exit(0 if ok and good and gone and over else 1)
PY
[ $status -eq 0 ] && echo "ALL PASS" || echo "SOME FAILED"
exit $status
