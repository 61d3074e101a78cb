"""The examples (examples/sampler_*.py, written as the original eACGM's demos) run
unchanged except for their paths, on the test programs: each is started, the program
runs, Ctrl-C ends the example, and what it wrote is checked against what the program did."""
import ast
import collections
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import pytest

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"


def linked_library(program, name):
    out = subprocess.run(["ldd", str(program)], capture_output=True, text=True).stdout
    m = re.search(rf"{re.escape(name)}\S* => (\S+)", out)
    return m.group(1) if m else None


class Example:
    """An example copied into tmp_path with its path constants replaced, run with the
    module on PYTHONPATH; stop() sends Ctrl-C."""

    def __init__(self, name, tmp_path, bin_dir, paths, env=None):
        text = (EXAMPLES / name).read_text()
        for const, value in paths.items():
            text, n = re.subn(rf'^{const} = ".*"$', f'{const} = "{value}"', text, flags=re.M)
            assert n == 1, const
        script = tmp_path / name
        script.write_text(text)
        full_env = dict(os.environ, PYTHONPATH=str(bin_dir / "python"), **(env or {}))
        self.proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=full_env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("sampling"), line + self.proc.stderr.read()
        self.tmp_path = tmp_path

    def stop(self, timeout=30):
        self.proc.send_signal(signal.SIGINT)
        out, err = self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, err
        return out

    def json(self, name):
        return json.loads((self.tmp_path / name).read_text())


def spans(events, pid):
    """name -> number of B/E pairs of `pid`, the pairs checked to nest."""
    count = collections.Counter()
    stack = []
    for e in events:
        if e["pid"] != pid:
            continue
        if e["ph"] == "B":
            stack.append(e)
        else:
            b = stack.pop()
            assert b["name"] == e["name"] and b["tid"] == e["tid"]
            count[e["name"]] += 1
    assert not stack
    return count


def test_sampler_cuda(bin_dir, tmp_path, gated):
    prog = gated(str(bin_dir / "cuda_calls"))
    ex = Example("sampler_cuda.py", tmp_path, bin_dir, {"CUDART": linked_library(bin_dir / "cuda_calls", "libcudart")})
    prog.go()
    assert prog.finish()[0] == 7
    time.sleep(1.5)
    ex.stop()
    events = ex.json("cuda.json")
    assert spans(events, prog.pid) == {"cudaLaunchKernel": 3, "cudaMalloc": 2, "cudaFree": 2, "cudaMemcpy": 1}
    launches = [e for e in events if e["name"] == "cudaLaunchKernel" and e["ph"] == "B"]
    assert all(e["message"] == ["3072"] and e["cat"] == "cuda" for e in launches)  # (2*3*4) * (32*4*1)
    mallocs = [e for e in events if e["name"] == "cudaMalloc" and e["ph"] == "B"]
    assert sorted(int(e["message"][1]) for e in mallocs) == [4096, 1 << 20]
    copy = next(e for e in events if e["name"] == "cudaMemcpy" and e["ph"] == "B")
    assert copy["message"] == ["65536", "1"]  # bytes, cudaMemcpyHostToDevice


def test_sampler_eacg(bin_dir, tmp_path, gated):
    """The combined demo: the calls of the program, the GPUs and the processes on them
    (the fake NVML's), in one timeline."""
    prog = gated(str(bin_dir / "cuda_calls"))
    env = {"EACGM_NVML_LIBRARY": str(bin_dir / "fake_nvml" / "libnvidia-ml.so.1")}
    ex = Example("sampler_eacg.py", tmp_path, bin_dir,
                 {"CUDART": linked_library(bin_dir / "cuda_calls", "libcudart")}, env)
    prog.go()
    assert prog.finish()[0] == 7
    for _ in range(2):
        assert ex.proc.stdout.readline().strip() == "---"
    ex.stop()
    events = ex.json("eacg.json")
    slices = [e for e in events if e["ph"] in ("B", "E")]
    assert spans(slices, prog.pid) == {"cudaLaunchKernel": 3, "cudaMalloc": 2, "cudaFree": 2}
    launches = [e for e in slices if e["name"] == "cudaLaunchKernel" and e["ph"] == "B"]
    assert all(e["message"] == ["2", "32"] for e in launches)  # grid.x, block.x of cuda_calls
    counters = [e for e in events if e["ph"] == "C"]
    names = {e["name"] for e in counters}
    assert {"GPU 0 utilization (%)", "GPU 1 utilization (%)", "GPU 0 memory used (MiB)"} <= names, names
    assert any(e["pid"] == 5000001 and e["name"] == "GPU 0 SM (%)" for e in counters), counters[:4]
    first_call = min(e["ts"] for e in slices)
    last_counter = max(e["ts"] for e in counters)
    assert abs(last_counter - first_call) < 600e6, "one clock for slices and counters (us)"


def test_sampler_torch(bin_dir, tmp_path):
    ex = Example("sampler_torch.py", tmp_path, bin_dir,
                 {"TORCH_PYTHON": str(bin_dir / "fake_torch" / "libtorch_python.so")})
    prog = subprocess.Popen([str(bin_dir / "torch_ops")], stdout=subprocess.PIPE, text=True)
    out, _ = prog.communicate(timeout=60)
    assert prog.returncode == 0
    made = dict(line.split() for line in out.splitlines())
    time.sleep(1.5)
    ex.stop()
    got = spans(ex.json("torch.json"), prog.pid)
    want = {"TorchAdd": "add", "TorchSub": "sub", "TorchMul": "mul", "TorchMatmul": "matmul", "TorchDiv": "div",
            "TorchReLU": "relu", "TorchSigmoid": "sigmoid", "TorchTanh": "tanh", "TorchSoftmax": "softmax",
            "TorchGeLU": "gelu"}
    assert got == {name: int(made[op]) for name, op in want.items()}


def test_sampler_nccl(bin_dir, tmp_path):
    lib = linked_library(bin_dir / "nccl_calls", "libnccl")
    if lib is None:
        pytest.skip("nccl_calls is not built against a libnccl here")
    ex = Example("sampler_nccl.py", tmp_path, bin_dir, {"NCCL": lib})
    prog = subprocess.Popen([str(bin_dir / "nccl_calls")], stdout=subprocess.PIPE, text=True)
    out, _ = prog.communicate(timeout=60)
    time.sleep(1.5)
    ex.stop()
    made = collections.Counter(line.split()[0] for line in out.splitlines() if " ret=" in line)
    made["ncclBroadcast"] += made["ncclBcast"]  # ncclBcast calls ncclBroadcast inside libnccl
    got = spans(ex.json("nccl.json"), prog.pid)
    assert got == {name: made[name] for name in ("ncclAllReduce", "ncclReduce", "ncclBroadcast", "ncclAllGather",
                                                  "ncclSend", "ncclRecv") if made[name]}
    sends = [e for e in ex.json("nccl.json") if e["name"] == "ncclSend" and e["ph"] == "B"]
    assert sends and all(e["message"] == [str(256 * 8)] for e in sends)


def test_sampler_python(bin_dir, tmp_path):
    ex = Example("sampler_python.py", tmp_path, bin_dir, {"PYTHON": "/usr/bin/python3"})
    pids = {}
    for calls in (0, 50):  # the interpreter makes calls of its own: compare two runs
        caller = subprocess.run(["/usr/bin/python3", "-c",
                                 "import ctypes, os\n"
                                 "f = ctypes.py_object(lambda: None)\n"
                                 f"for _ in range({calls}): ctypes.pythonapi.PyObject_CallFunction(f, None)\n"
                                 "print(os.getpid())"], capture_output=True, text=True, timeout=60)
        pids[calls] = int(caller.stdout)
    time.sleep(1.5)
    out = ex.stop()
    seen = {}
    for calls, pid in pids.items():
        mine = [line for line in out.splitlines() if line.startswith(f"eBPFSamplerState python3 {pid} ")]
        starts = [line for line in mine if "'start', 'PyObject_CallFunction'" in line]
        ends = [line for line in mine if "'end', 'PyObject_CallFunction'" in line]
        assert len(starts) == len(ends), out
        seen[calls] = len(starts)
    assert seen[50] - seen[0] == 50, seen


@pytest.mark.parametrize("name,output", [("sampler_gpu.py", "gpu.json"), ("sampler_nvml.py", "nvml.json")])
def test_nvml_examples(bin_dir, tmp_path, name, output):
    env = {"EACGM_NVML_LIBRARY": str(bin_dir / "fake_nvml" / "libnvidia-ml.so.1")}
    ex = Example(name, tmp_path, bin_dir, {}, env)
    for _ in range(2):
        assert ex.proc.stdout.readline().strip() == "---"
    ex.stop()
    samples = ex.json(output)
    if name == "sampler_gpu.py":
        assert {s["gpu"] for s in samples} == {0, 1}
        first = samples[0]
        assert first["name"].startswith("Fake NVML GPU") and first["totMem"] == 80 << 30
        assert first["usedPower"] == pytest.approx(123.456) and first["totPower"] == pytest.approx(700.0)
    else:
        assert {(s["pid"], s["gpu"]) for s in samples} >= {(5000001, 0), (5000001, 1)}
        assert any(s["gpu_utl"] == 50 and s["mem"] == 15 for s in samples)


def test_gpu_sampler_gpm_activity(bin_dir):
    # The fake NVML's GPU 0: SM active 0.8, tensor 0.6, DRAM 0.25. (A sample within 100 ms of
    # the extension's sampler start has none yet: tests/unit/sample/gpm_reader_test.cpp; the
    # command-line fallback runs `eacgm gpu`, which waits for its interval.)
    script = ("import json, time\nfrom eacgm.nvml import GPUSampler\ng = GPUSampler()\n"
              "first = g.sample()[0]\ntime.sleep(0.15)\nlater = g.sample()[0]\n"
              "print(json.dumps([first.sm_active, later.sm_active, later.tensor_active, later.dram_active, later.sm]))")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(bin_dir / "python"),
                                EACGM_NVML_LIBRARY=str(bin_dir / "fake_nvml" / "libnvidia-ml.so.1")))
    assert r.returncode == 0, r.stderr
    _, sm, tensor, dram, util = json.loads(r.stdout)
    assert sm == pytest.approx(0.8) and tensor == pytest.approx(0.6) and dram == pytest.approx(0.25)
    assert util == 45  # NVML's utilization stays `sm`, as the original's field


def test_no_nvml_is_one_line(bin_dir):
    r = subprocess.run([sys.executable, "-c", "from eacgm.sampler import GPUSampler\nGPUSampler()"],
                       capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(bin_dir / "python"),
                                EACGM_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1"))
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert re.match(r"eacgm\._(eacgm|cli)\.NVMLError: NVML not available", last), r.stderr


def test_trace_cuda(bin_dir):
    r = subprocess.run([sys.executable, str(EXAMPLES / "trace_cuda.py"), str(bin_dir / "cuda_calls")],
                       capture_output=True, text=True, timeout=120,
                       env={**{k: v for k, v in os.environ.items() if k != "EACGM_BACKEND"},  # report() is native
                            "PYTHONPATH": str(bin_dir / "python")})
    assert r.returncode == 0, r.stderr
    seen = next(line for line in r.stdout.splitlines() if line.startswith("calls seen:"))
    calls = ast.literal_eval(seen[len("calls seen:"):].strip())  # the example prints a dict
    assert calls["cudaLaunchKernel"] == 3 and calls["cudaMalloc"] == 2 and calls["cudaFree"] == 2
    assert re.search(r"cudaLaunchKernel\s+3 calls", r.stdout)
