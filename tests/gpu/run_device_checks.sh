#!/usr/bin/env bash
# All device checks in one call (GPU machine, root): a PyTorch training loop traced by
# eacgm against PyTorch's profiler, `eacgm run` on it, NVML against nvidia-smi, the
# overhead/capture/idle benchmarks and start-up time. Binaries come prebuilt in
# BIN (copied from a build dir: eacgm, cuda_loop, eacgm-bench-bare, bench/*).
# Usage: tests/gpu/run_device_checks.sh BIN OUT_DIR
set -uo pipefail
BIN=$(readlink -f "$1")
OUT=$2
PY=${TORCH_PY:-/opt/torch/.venv/bin/python}
mkdir -p "$OUT"
echo "== machine"; nvidia-smi -L; uname -r; "$PY" -c 'import torch; print("torch", torch.__version__)'
CU13=$("$PY" -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))')

echo "== start-up: probes attached and time to ready (a torch process running)"
"$PY" -c 'import torch, time; torch.zeros(1, device="cuda"); time.sleep(30)' & TORCH_IDLE=$!
sleep 12
for probes in ${PROBE_SETS:-cuda}; do
  s=$(date +%s%N)
  "$BIN/eacgm" trace --probes "$probes" --duration 0.01 -o /dev/null 2> "$OUT/startup.err"
  e=$(date +%s%N)
  echo "$probes: $(( (e - s) / 1000000 )) ms start+stop; $(grep -o 'tracing.*' "$OUT/startup.err")"
done
kill $TORCH_IDLE; wait $TORCH_IDLE 2>/dev/null

echo "== Python calls: USDT where the interpreter has python:function__entry (else frame reading)"
cat > "$OUT/pycalls.py" <<'PY'
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
for _ in range(3):
    fib(10)
PY
"$BIN/eacgm" trace --probes python -o "$OUT/py.jsonl" -- "$PY" "$OUT/pycalls.py" 2> "$OUT/py.err"
echo "fib calls seen: $(grep -c '"name":"fib"' "$OUT/py.jsonl") (expected 3 x 177 = 531); with duration: $(grep '"name":"fib"' "$OUT/py.jsonl" | grep -vc '"dur_ns":null')"
tail -1 "$OUT/py.err"

echo "== Python calls through frame reading at _PyEval_EvalFrameDefault (interpreter without USDT)"
# $PY is /usr/bin/python3.12, statically linked, no USDT notes: the python catalog reads
# frames at the executable's own _PyEval_EvalFrameDefault. 3.12 runs Python-to-Python calls
# inside one eval loop, so only frames entered from C are seen: the module body once, no
# fib of the same script; fib called through map() (from C) is seen once per call.
cat > "$OUT/pyframes.py" <<'PY'
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
for _ in range(3):
    fib(10)
print(sum(map(fib, [10, 10, 10])))
PY
seen() { grep -F "$2" "$1" | grep -cF "\"name\":\"$3\""; }
"$BIN/eacgm" trace --probes python -o "$OUT/pyframes_same.jsonl" -- "$PY" "$OUT/pycalls.py" 2> "$OUT/pyframes_same.err"
grep -o 'attached .*' "$OUT/pyframes_same.err"
echo "same fib script: <module> $(seen "$OUT/pyframes_same.jsonl" pycalls.py '<module>') (expected 1), fib $(seen "$OUT/pyframes_same.jsonl" pycalls.py fib) (expected 0 on 3.12); events without duration: $(grep -c '"dur_ns":null' "$OUT/pyframes_same.jsonl") (expected 0)"
tail -1 "$OUT/pyframes_same.err"
"$BIN/eacgm" trace --probes python -o "$OUT/pyframes_map.jsonl" -- "$PY" "$OUT/pyframes.py" > /dev/null 2> "$OUT/pyframes_map.err"
echo "fib through map(): <module> $(seen "$OUT/pyframes_map.jsonl" pyframes.py '<module>') (expected 1), fib $(seen "$OUT/pyframes_map.jsonl" pyframes.py fib) (expected 3, each spanning a whole fib(10)); first fib event:"
grep -F pyframes.py "$OUT/pyframes_map.jsonl" | grep -F '"name":"fib"' | head -1
tail -1 "$OUT/pyframes_map.err"

echo "== PyTorch training loop traced (catalogs: ${TRACE_PROBES:-cuda})"
"$BIN/eacgm" trace --probes "${TRACE_PROBES:-cuda}" -o "$OUT/torch.jsonl" -- \
  "$PY" tests/gpu/torch_train.py "$OUT/prof.json" 10 2> "$OUT/trace.err"
echo "exit=$? $(tail -1 "$OUT/trace.err")"
grep 'attached' "$OUT/trace.err" | head -5
"$PY" tests/gpu/compare_counts.py "$OUT/torch.jsonl" "$OUT/prof.json"
"$PY" tests/gpu/kernels_without_launch.py "$OUT/prof.json.trace.json"
echo "-- sample events"
grep -m1 '"cudaLaunchKernel"' "$OUT/torch.jsonl"; grep -m1 '"cudaMalloc"' "$OUT/torch.jsonl"

echo "== eacgm run summary"
"$BIN/eacgm" run --probes "${TRACE_PROBES:-cuda}" -- "$PY" tests/gpu/torch_train.py "$OUT/prof2.json" 10 \
  2> "$OUT/run.err" | head -14

if [ -z "${SKIP_NVML:-}" ]; then
  echo "== NVML vs nvidia-smi"
  LD_LIBRARY_PATH="$BIN/lib" tests/gpu/nvml_compare.sh "$BIN" 2>&1 | tail -30
fi

echo "== overhead and capture (cudaFree(NULL) loop on the GPU)"
LD_LIBRARY_PATH="$CU13" REPS=5 bench/overhead.sh "$BIN" 200000 free_null 2>&1
echo "== idle"
bench/idle.sh "$BIN" 10
echo "== replay decode"
LD_LIBRARY_PATH="$BIN/lib" "$BIN/bench/eacgm_bench_ingest" --benchmark_min_time=1 2>&1 | tail -4
