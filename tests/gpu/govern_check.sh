#!/usr/bin/env bash
# Governance on a real GPU (about 4 minutes): two PyTorch tenants under libeacgm_hook.so
# and eacgm-sched with GPU-time requests 30% / 70% for 60 s, their memory limits (a clean
# torch.cuda.OutOfMemoryError, torch and NVML inside the tenant reporting the limit), and
# the hook's cost for a single tenant without limits.
#
#   bash tests/gpu/govern_check.sh            # binaries in build/
#   EACGM_BIN_DIR=/path/to/bin bash tests/gpu/govern_check.sh
#
# Environment: PY (default /opt/torch/.venv/bin/python3), EACGM_BIN_DIR (default build),
# GOVERN_SECONDS (shared run, default 60), GOVERN_SOLO_SECONDS (default 15),
# GOVERN_UNMANAGED_SECONDS (the same two tenants without hook or scheduler, default 30).
# Exit status 0 when every check passes; the table goes to stdout.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${EACGM_BIN_DIR:-$root/build}
bin=$(cd "$bin" && pwd)
py=${PY:-/opt/torch/.venv/bin/python3}
shared_s=${GOVERN_SECONDS:-60}
solo_s=${GOVERN_SOLO_SECONDS:-15}
unmanaged_s=${GOVERN_UNMANAGED_SECONDS:-30}
hook=$bin/libeacgm_hook.so
sched=$bin/eacgm-sched
tenant=$here/govern_tenant.py
for f in "$hook" "$sched" "$py"; do
  [ -e "$f" ] || { echo "govern_check: missing $f (build libeacgm_hook.so and eacgm-sched, or set EACGM_BIN_DIR / PY)"; exit 2; }
done
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=$(mktemp -d /tmp/govern_check.XXXXXX)
sched_pid=
cleanup() { [ -n "$sched_pid" ] && kill "$sched_pid" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
val() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" "$2" | tail -1; }
# runs the tenant script: hooked (1) or not (0), then env assignments, then its arguments
tenant_run() {
  local hooked=$1; shift
  local envs=()
  while [ $# -gt 0 ] && [[ $1 == *=* ]]; do envs+=("$1"); shift; done
  if [ "$hooked" = 1 ]; then envs+=("LD_PRELOAD=$hook"); fi
  env "${envs[@]}" "$py" "$tenant" "$@"
}

echo "== govern_check: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1)"
echo "   hook $hook, python $py, shared run ${shared_s}s"

# 1. The hook's cost, one tenant, no limits, no scheduler.
tenant_run 0 work "$solo_s" > "$work/solo_plain" 2>&1 || fail "solo run without the hook: $(tail -3 "$work/solo_plain")"
tenant_run 1 work "$solo_s" > "$work/solo_hook" 2>&1 || fail "solo run with the hook: $(tail -3 "$work/solo_hook")"
tenant_run 0 launches 200000 > "$work/launch_plain" 2>&1
tenant_run 1 launches 200000 > "$work/launch_hook" 2>&1
rate_plain=$(val rate "$work/solo_plain"); rate_hook=$(val rate "$work/solo_hook")
launch_plain=$(val per_launch_us "$work/launch_plain"); launch_hook=$(val per_launch_us "$work/launch_hook")

# 2. Memory limits from the environment (no scheduler): default allocator and
#    expandable segments (cuMemCreate/cuMemMap), and the in-tenant view.
tenant_run 1 EACGM_MEMORY_LIMIT=2GiB oom > "$work/oom_env" 2>&1
tenant_run 1 EACGM_MEMORY_LIMIT=2GiB PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True oom > "$work/oom_vmm" 2>&1
tenant_run 1 CUDA_DEVICE_MEMORY_LIMIT=3g view > "$work/view_env" 2>&1

# 3. The same two tenants unmanaged (no hook, no scheduler): what sharing gives without us.
tenant_run 0 work "$unmanaged_s" > "$work/free_a" 2>&1 &
pa=$!
tenant_run 0 work "$unmanaged_s" > "$work/free_b" 2>&1 &
pb=$!
wait $pa $pb
free_a=$(val rate "$work/free_a"); free_b=$(val rate "$work/free_b")

# 4. The scheduler with two tenants.
cat > "$work/sched.toml" <<TOML
[scheduler]
gpus = 1
socket = "$work/sched.sock"
metrics = "127.0.0.1:19477"
window_seconds = 10
max_slice_ms = 30

[[tenant]]
name = "a"
request = 0.3
memory_limit = "4GiB"

[[tenant]]
name = "b"
request = 0.7
memory_limit = "8GiB"
TOML
"$sched" --config "$work/sched.toml" 2> "$work/sched.log" &
sched_pid=$!
sleep 1
kill -0 "$sched_pid" 2>/dev/null || { fail "eacgm-sched did not start: $(cat "$work/sched.log")"; exit 1; }
S="EACGM_SCHED_SOCKET=$work/sched.sock"
tenant_run 1 "$S" EACGM_TENANT=a view > "$work/view_sched" 2>&1
tenant_run 1 "$S" EACGM_TENANT=a oom > "$work/oom_sched" 2>&1
metric() { "$py" - "$1" <<'PYEOF'
import sys, urllib.request
body = urllib.request.urlopen("http://127.0.0.1:19477/metrics", timeout=5).read().decode()
for line in body.splitlines():
    if line.startswith(sys.argv[1] + " "):
        print(line.split()[-1])
PYEOF
}
ga0=$(metric 'eacgm_govern_tenant_gpu_time_seconds_total{tenant="a",gpu="0"}')
gb0=$(metric 'eacgm_govern_tenant_gpu_time_seconds_total{tenant="b",gpu="0"}')
tenant_run 1 "$S" EACGM_TENANT=a work "$shared_s" > "$work/shared_a" 2>&1 &
pa=$!
tenant_run 1 "$S" EACGM_TENANT=b work "$shared_s" > "$work/shared_b" 2>&1 &
pb=$!
wait $pa || fail "tenant a: $(tail -3 "$work/shared_a")"
wait $pb || fail "tenant b: $(tail -3 "$work/shared_b")"
ga=$(metric 'eacgm_govern_tenant_gpu_time_seconds_total{tenant="a",gpu="0"}')
gb=$(metric 'eacgm_govern_tenant_gpu_time_seconds_total{tenant="b",gpu="0"}')
"$py" - <<PYEOF > "$work/metrics.txt" 2>/dev/null
import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:19477/metrics", timeout=5).read().decode(), end="")
PYEOF
if command -v promtool >/dev/null; then promtool check metrics < "$work/metrics.txt" > "$work/promtool" 2>&1 || fail "promtool: $(cat "$work/promtool")"; fi
rate_a=$(val rate "$work/shared_a"); rate_b=$(val rate "$work/shared_b")

# 5. The table and the checks.
"$py" - "$work" <<PYEOF
import sys
def f(x):
    try: return float(x)
    except (TypeError, ValueError): return float("nan")
rp, rh = f("$rate_plain"), f("$rate_hook")
lp, lh = f("$launch_plain"), f("$launch_hook")
ra, rb = f("$rate_a"), f("$rate_b")
ga, gb = f("$ga") - f("${ga0:-0}"), f("$gb") - f("${gb0:-0}")
def ratio(x, y):
    return x / y if y and y == y else float("nan")
sa, sb = ratio(ra, rh), ratio(rb, rh)  # achieved share of the GPU: work done / work a lone tenant does
tot = sa + sb
print()
print(f"{'measure':44} {'value':>12}")
print(f"{'solo matmul rate, no hook (it/s)':44} {rp:12.2f}")
print(f"{'solo matmul rate, hook, no limits (it/s)':44} {rh:12.2f}")
print(f"{'single-tenant slowdown with the hook':44} {100 * ratio(rp - rh, rp):11.2f}%")
print(f"{'host time per tiny launch, no hook (us)':44} {lp:12.3f}")
print(f"{'host time per tiny launch, hook (us)':44} {lh:12.3f}")
print(f"{'tenant a (request 30%) achieved share':44} {100 * sa:11.1f}%")
print(f"{'tenant b (request 70%) achieved share':44} {100 * sb:11.1f}%")
print(f"{'a : b of the GPU time used (target 30 : 70)':44} {100 * ratio(sa, tot):6.1f} : {100 * ratio(sb, tot):4.1f}")
print(f"{'scheduler-billed a : b':44} {100 * ratio(ga, ga + gb):6.1f} : {100 * ratio(gb, ga + gb):4.1f}")
fa, fb = ratio(f("$free_a"), rp), ratio(f("$free_b"), rp)
print(f"{'unmanaged a : b of the GPU time used':44} {100 * ratio(fa, fa + fb):6.1f} : {100 * ratio(fb, fa + fb):4.1f}")
print(f"{'total throughput, unmanaged (of a lone one)':44} {100 * (fa + fb):11.1f}%")
print(f"{'total throughput, managed (of a lone one)':44} {100 * tot:11.1f}%")
with open(sys.argv[1] + "/shares", "w") as out:
    out.write(f"{100 * ratio(sa, tot):.2f} {100 * ratio(ga, ga + gb):.2f}\n")
PYEOF
echo
for f in oom_env oom_vmm view_env view_sched oom_sched; do printf '%-12s %s\n' "$f" "$(tail -1 "$work/$f")"; done
echo

share_a=nan billed_a=nan
[ -s "$work/shares" ] && read -r share_a billed_a < "$work/shares"
awk -v s="$share_a" 'BEGIN { exit !(s >= 25 && s <= 35) }' || fail "tenant a got ${share_a}% of the used GPU time, not 30 ± 5"
for f in oom_env oom_vmm; do
  [ "$(val oom "$work/$f")" = 1 ] || fail "$f: no clean torch.cuda.OutOfMemoryError: $(tail -2 "$work/$f")"
  m=$(val allocated_mib "$work/$f"); [ "${m:-99999}" -le 2048 ] || fail "$f: $m MiB allocated under a 2 GiB limit"
done
[ "$(val oom "$work/oom_sched")" = 1 ] || fail "oom_sched: no clean OutOfMemoryError: $(tail -2 "$work/oom_sched")"
m=$(val allocated_mib "$work/oom_sched"); [ "${m:-99999}" -le 4096 ] || fail "oom_sched: $m MiB under a 4 GiB tenant limit"
[ "$(val torch_total_mib "$work/view_env")" = 3072 ] || fail "torch.cuda.mem_get_info total is not the 3 GiB limit"
[ "$(val nvml_total_mib "$work/view_env")" = 3072 ] || fail "NVML total is not the 3 GiB limit"
[ "$(val torch_total_mib "$work/view_sched")" = 4096 ] || fail "torch total under the scheduler is not the tenant's 4 GiB"
[ "$(val nvml_total_mib "$work/view_sched")" = 4096 ] || fail "NVML total under the scheduler is not the tenant's 4 GiB"
echo "logs: $work"
if [ "$failures" -eq 0 ]; then echo "govern_check: PASS"; else echo "govern_check: $failures check(s) FAILED"; fi
[ "$failures" -eq 0 ]
