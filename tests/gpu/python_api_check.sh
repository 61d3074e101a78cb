#!/usr/bin/env bash
# Device check for the Python API (docs/python.md) on a real GPU with PyTorch: the
# original API's samplers (GPUSampler, NVMLSampler; eBPFSampler with BPF text on
# PyTorch's CUDA runtime and libtorch_python) and eacgm.trace() agree with NVML,
# nvidia-smi, what the workload did and the report; then bench/python_api.py's rates.
# Prints a table and PASS/FAIL per check.
#
# The extension is built for Debian's Python 3.11 (the build machine's /usr/bin/python3):
# the check runs under a python3.11 when there is one (PY311, else /usr/bin/python3.11,
# else python3.11 on PATH), tracing the workload, which runs under PyTorch's own Python
# (TORCH_PY, 3.12). Without a 3.11 it runs under TORCH_PY with the package's command-line
# fallback (python/eacgm/_cli.py over BIN_DIR/eacgm; the report check is then n/a) and
# says so.
#
# Usage: tests/gpu/python_api_check.sh BIN_DIR [WORK_DIR]
#   BIN_DIR: the build's eacgm, python/ (build/python) and lib/ with libbpf.so.1 and
#   libelf.so.1 (the module links them; Debian's libbpf1 and libelf1).
# Exit status: 0 all checks pass, 1 one fails, 77 no GPU/driver/PyTorch/Python 3.11.
set -uo pipefail

BIN="$(cd "${1:?usage: python_api_check.sh BIN_DIR [WORK_DIR]}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/eacgm-python.XXXXXX)}"
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
TORCH_PY="${TORCH_PY:-/opt/torch/.venv/bin/python}"
mkdir -p "$WORK"
[ -d "$BIN/lib" ] && export LD_LIBRARY_PATH="$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
skip() { echo "SKIP: $*" >&2; exit 77; }
command -v nvidia-smi >/dev/null || skip "nvidia-smi not found"
nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi cannot see a GPU"
[[ -x "$TORCH_PY" ]] || skip "$TORCH_PY not found"
PY311="${PY311:-}"
if [[ -z "$PY311" ]]; then
  for c in /usr/bin/python3.11 "$(command -v python3.11 2>/dev/null)"; do
    [[ -n "$c" && -x "$c" ]] && { PY311="$c"; break; }
  done
fi
if [[ -z "$PY311" ]]; then
  echo "no Python 3.11 here: running under $TORCH_PY with the command-line fallback"
  PY311="$TORCH_PY"
fi
export PYTHONPATH="$BIN/python"
"$PY311" -c 'import eacgm' 2>"$WORK/import.err" || skip "the package does not import: $(tail -1 "$WORK/import.err")"
echo "backend: $("$PY311" -c 'import eacgm._backend as b; print(b.native.__name__)')"

TORCH_LIB="$("$TORCH_PY" -c 'import os, torch; print(os.path.dirname(torch.__file__) + "/lib")')"
cat >"$WORK/workload.py" <<'PY'
import sys, time, torch
rounds = int(sys.argv[1])
time.sleep(float(sys.argv[2]))  # the samplers attach meanwhile
x = torch.randn(512, 512, device="cuda")
for _ in range(rounds):
    y = torch.add(x, x)
    y = torch.relu(y)
    y = torch.sigmoid(y)
    y = torch.matmul(y, x)
torch.cuda.synchronize()
print("done", rounds)
PY

cat >"$WORK/check.py" <<'PY'
import json, os, subprocess, sys, time
from collections import Counter
import eacgm
import eacgm._backend
from eacgm.bpf import BccBPF
from eacgm.collector import to_perfetto
from eacgm.sampler import GPUSampler, NVMLSampler, eBPFSampler

work, torch_py, torch_lib, eacgm_bin = sys.argv[1:5]
results = []

def check(name, ok, detail):
    results.append((name, bool(ok), detail))

# 1. GPUSampler against nvidia-smi.
smi = subprocess.run(["nvidia-smi", "--query-gpu=index,name,memory.total,power.limit", "--format=csv,noheader,nounits"],
                     capture_output=True, text=True).stdout.strip().splitlines()
gpus = GPUSampler().sample()
rows = [[f.strip() for f in line.split(",")] for line in smi]
ok = len(gpus) == len(rows) and all(
    g.gpu == int(r[0]) and g.name == r[1] and abs(g.totMem / 2**20 - float(r[2])) < 0.01 * float(r[2])
    and g.usedPower > 0 and abs(g.totPower - float(r[3])) < 5 for g, r in zip(gpus, rows))
check("GPUSampler = nvidia-smi", ok, f"{len(gpus)} GPUs; {gpus[0]!r}")

# 2. The compatible layer on PyTorch's CUDA runtime and libtorch_python, and eacgm.trace()
#    on the same run: the launches agree, the ops are the workload's.
text = """
int cudaLaunchKernelEntry(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    u32 g_x = PT_REGS_PARM2(ctx) & 0xFFFFFFFF;
    bpf_trace_printk("%ld@start@cudaLaunchKernel@%u\\n", ts, g_x);
    return 0;
};
int cudaLaunchKernelExit(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@end@cudaLaunchKernel@%d\\n", ts, PT_REGS_RC(ctx));
    return 0;
};
"""
# Bindings whose local symbol is unique in libtorch_python.so: THPVariable_add, _matmul and
# _mul are each defined twice (torch.add's and Tensor.add's translation units), and a
# symbol name, as BCC's attach_uprobe(sym=...), names the first.
ops = {"TorchReLU": "_ZN5torch8autogradL16THPVariable_reluEP7_objectS2_S2_",
       "TorchSigmoid": "_ZN5torch8autogradL19THPVariable_sigmoidEP7_objectS2_S2_"}
for name, sym in ops.items():
    text += (f"int {sym}Entry(struct pt_regs *ctx){{ bpf_trace_printk(\"%ld@start@{name}\\n\", bpf_ktime_get_ns()); return 0; }}\n"
             f"int {sym}Exit(struct pt_regs *ctx){{ bpf_trace_printk(\"%ld@end@{name}\\n\", bpf_ktime_get_ns()); return 0; }}\n")
sampler = eBPFSampler(BccBPF("TorchCUDA", text))
# The runtime's path as the original's demos wrote it (a conda env's): found by its name.
sampler.run([{"name": "CUDA", "exe_path": ["/home/user/miniconda3/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"],
              "exe_sym": ["cudaLaunchKernel"]},
             {"name": "Torch", "exe_path": [torch_lib + "/libtorch_python.so"], "exe_sym": list(ops.values())}])
rounds = 200
states = []
calls = Counter()
try:
    import numpy  # noqa: F401
    as_numpy = True
except ImportError:
    as_numpy = False
with eacgm.trace(command=[torch_py, os.path.join(work, "workload.py"), str(rounds), "3"], catalogs=["cuda"],
                 as_numpy=as_numpy) as t:
    for batch in t:
        calls.update(t.function_names(batch) if as_numpy else [c["function"] for c in batch])
        states += sampler.sample(0.0)
states += sampler.sample(2.0)
sampler.close()
pid = t.command_pid
mine = [s for s in states if s.pid == pid]
pairs = Counter(e["name"] for e in to_perfetto(mine) if e["ph"] == "B")
check("compat: torch ops = workload", all(pairs[n] == rounds for n in ops), dict(pairs))
check("compat launches = trace()'s", pairs["cudaLaunchKernel"] == calls["cudaLaunchKernel"] > 0,
      f"compat {pairs['cudaLaunchKernel']}, trace {calls['cudaLaunchKernel']}")
if eacgm._backend.native.version != "cli":
    report = {f["function"]: f["calls"] for f in t.report()["functions"] if f["domain"] == "cuda"}
    check("trace() batches = report", all(report.get(k) == v for k, v in calls.items()) and calls,
          f"{sum(calls.values())} calls in batches; report {sum(report.values())}")
else:
    print("trace() batches = report: n/a (the command-line fallback has no report)")
check("states carry the real tid", all(s.tid > 0 for s in mine) and len({s.tid for s in mine}) >= 1,
      f"{len({s.tid for s in mine})} threads")

# 3. NVMLSampler sees a busy process.
busy = subprocess.Popen([torch_py, "-c", "import torch, time\nx = torch.randn(4096, 4096, device='cuda')\n"
                         "end = time.time() + 6\nwhile time.time() < end: x = x @ x; x = x / x.norm()\n"
                         "torch.cuda.synchronize()"])
time.sleep(3)
nv = NVMLSampler()
seen = []
for _ in range(3):
    time.sleep(1)
    seen += [s for s in nv.sample(1) if s.pid == busy.pid]
busy.wait()
# Per-process utilization is not reported by every GPU and driver: the process itself must be there.
check("NVMLSampler sees the busy process", len(seen) > 0 and all(s.gpu is not None for s in seen),
      f"{len(seen)} samples, sm {[s.sm for s in seen]}")

width = max(len(n) for n, _, _ in results)
for name, ok, detail in results:
    print(f"{name:<{width}}  {'PASS' if ok else 'FAIL'}  {detail}")
sys.exit(0 if all(ok for _, ok, _ in results) else 1)
PY

"$PY311" "$WORK/check.py" "$WORK" "$TORCH_PY" "$TORCH_LIB" "$BIN/eacgm" 2>"$WORK/check.err"
rc=$?
[[ $rc -ne 0 ]] && tail -20 "$WORK/check.err" >&2
if [[ -x "$BIN/churn_calls" && -f "$BIN/libeacgm_churn.so" ]] &&
  "$PY311" -c 'import numpy, eacgm._backend as b; assert b.native.version != "cli"' 2>/dev/null; then
  echo "bench (bench/python_api.py):"
  "$PY311" "$SRC/bench/python_api.py" "$BIN" 2000000 2>>"$WORK/bench.err" | sed 's/^/  /'
fi
echo "python_api_check: $([[ $rc -eq 0 ]] && echo PASS || echo FAIL) (work dir $WORK)"
exit $rc
