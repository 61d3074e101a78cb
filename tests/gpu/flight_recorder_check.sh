#!/usr/bin/env bash
# Device check of the NCCL flight recorder under `eacgm serve` (2 GPUs or more): a torchrun
# job of two NCCL ranks runs 20 all-reduces, then rank 1 sleeps HANG_S (60) seconds before
# all-reduce #21 (collective_seq_id 20 counted from 0) while rank 0 enters it. During the
# sleep:
#   - GET /api/v1/nccl/flight_recorder lists both ranks of the communicator, rank 0's last
#     entry one collective ahead of rank 1's;
#   - `eacgm flight-recorder --dump DIR` writes nccl_trace_rank_0 and nccl_trace_rank_1;
#   - PyTorch's analyzer, `python -m torch.distributed.flight_recorder.fr_trace DIR` (where
#     the device's torch ships it, 2.5 and later), reads them and names rank 1 as the rank
#     missing from that collective.
# Prints what it saw and PASS/FAIL per check.
# Usage: tests/gpu/flight_recorder_check.sh BIN_DIR [WORK_DIR]   (BIN_DIR/lib: extra libraries)
# Exit status: 0 all checks pass, 1 one fails, 77 no GPU/PyTorch or one GPU.
set -uo pipefail
. "$(dirname "$0")/check_common.sh"

BIN="$(cd "${1:?usage: flight_recorder_check.sh BIN_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-fr.XXXXXX)}" PORT=${PORT:-9981} HANG_S=${HANG_S:-60}
need_torch_gpu
[ "$(nvidia-smi -L | grep -c '^GPU')" -ge 2 ] || skip "one GPU: NCCL refuses two ranks on one GPU"
mkdir -p "$WORK" && carry_libs "$BIN"

printf '[hangs]\nmin_age_s = 5\n[nccl]\nflight_recorder_entries = 16\n' >"$WORK/eacgm.toml"
cat >"$WORK/fr_job.py" <<'PY'
# Two NCCL ranks: 20 all-reduces, then rank 1 sleeps HANG_S seconds before the 21st.
import os, sys, time, torch, torch.distributed as dist
dist.init_process_group("nccl")
me = dist.get_rank()
torch.cuda.set_device(me)
grads = torch.ones(1 << 20, device="cuda")
def steps(n):
    for _ in range(n):
        dist.all_reduce(grads)
    torch.cuda.synchronize()
steps(20)
open(os.path.join(sys.argv[2], f"rank{me}.pid"), "w").write(str(os.getpid()))
time.sleep(float(sys.argv[1]) if me == 1 else 0)
steps(1)
dist.destroy_process_group()
PY

"$BIN/eacgm" serve --config "$WORK/eacgm.toml" --listen "127.0.0.1:$PORT" 2>"$WORK/serve.err" &
SERVE=$!
trap 'kill -TERM $SERVE 2>/dev/null; wait $SERVE 2>/dev/null' EXIT
# The agent answers once its first snapshot is out.
recorder() { "$BIN/eacgm" flight-recorder --server "http://127.0.0.1:$PORT" "$@"; }
for _ in $(seq 150); do recorder >/dev/null 2>&1 && break; sleep 0.2; done
recorder >/dev/null || { echo "FAIL: eacgm serve did not start"; cat "$WORK/serve.err"; exit 1; }

"$(dirname "$PY")/torchrun" --nproc_per_node 2 "$WORK/fr_job.py" "$HANG_S" "$WORK" >"$WORK/job.out" 2>&1 &
JOB=$!
for _ in $(seq 120); do [ -f "$WORK/rank0.pid" ] && [ -f "$WORK/rank1.pid" ] && break; sleep 0.5; done
sleep 10  # rank 0 is in all-reduce #21 (host-side it returned), rank 1 asleep
recorder >"$WORK/flight_recorder.json"
rm -rf "$WORK/dump"
recorder --dump "$WORK/dump" 2>"$WORK/dump.err"
echo "flight-recorder --dump exit: $?"; cat "$WORK/dump.err"; ls -l "$WORK/dump"
(cd "$WORK" && "$PY" -m torch.distributed.flight_recorder.fr_trace "$WORK/dump" >"$WORK/fr_trace.out" 2>&1)
echo "fr_trace exit: $?"
wait $JOB; echo "job exit: $?"

"$PY" - "$WORK" <<'PY'
import json, os, pickle, re, sys
work = sys.argv[1]
pids = {int(open(f"{work}/rank{r}.pid").read()) for r in (0, 1)}
doc = json.load(open(f"{work}/flight_recorder.json"))
ok = True
comm = next((c for c in doc["communicators"] if {r["pid"] for r in c["ranks"]} >= pids), None)
if comm is None:
    print("FAIL: /api/v1/nccl/flight_recorder has no communicator with both ranks")
    print(json.dumps(doc)[:3000]); sys.exit(1)
last = {r["rank"]: r["entries"][-1] for r in comm["ranks"] if r["entries"]}
for rank, e in sorted(last.items()):
    print(f"rank {rank}: last {e['name']} seq {e['collective_seq_id']} {e['state']} count {e['count']} {e['datatype']}")
ahead = 0 in last and 1 in last and last[0]["collective_seq_id"] == last[1]["collective_seq_id"] + 1
print(("PASS" if ahead else "FAIL") + ": the API lists both ranks, rank 0 one collective ahead of rank 1")
ok = ok and ahead
files = sorted(os.listdir(f"{work}/dump")) if os.path.isdir(f"{work}/dump") else []
dumps = {f: pickle.load(open(f"{work}/dump/{f}", "rb")) for f in files}
good = files == ["nccl_trace_rank_0", "nccl_trace_rank_1"] and all(
    d["version"] and d["pg_config"] and d["entries"][-1]["profiling_name"] == "nccl:all_reduce" for d in dumps.values())
print(("PASS" if good else "FAIL") + f": the dump has one pickle per rank ({files})")
ok = ok and good
out = open(f"{work}/fr_trace.out").read()
if "No module named" in out and "flight_recorder" in out:
    print("SKIP: this torch has no torch.distributed.flight_recorder (it ships from 2.5)")
else:
    print(out[-3000:])
    named = re.search(r"missing ranks: \{1\}", out) is not None
    print(("PASS" if named else "FAIL") + ": PyTorch's fr_trace names rank 1 as missing from the collective")
    ok = ok and named
sys.exit(0 if ok else 1)
PY
