#!/usr/bin/env python3
"""The Python API's delivery rate: calls handed from the agent into Python, in NumPy
batches and as dicts (BENCHMARKS.md, "Python API").

    sudo PYTHONPATH=build/python /usr/bin/python3 bench/python_api.py build [CALLS]

For each form, build/churn_calls makes CALLS calls of churn_work (libeacgm_churn.so)
under eacgm.trace(pid=...); the calls queue up while it runs, and the rate is the calls
taken out of the trace per second of Python's time once it has ended (so the probes'
own cost, a few hundred thousand traps a second, does not bound it)."""
import os
import pathlib
import subprocess
import sys
import tempfile
import time

build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build").resolve()
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
sys.path.insert(0, str(build / "python"))
import eacgm  # noqa: E402

CONFIG = f"""
[[probe]]
name = "churn_work"
domain = "bench"
library = "libeacgm_churn.so*"
symbol = "churn_work"
ret = "int32"
args = [{{ name = "x", reg = 0, kind = "u32" }}]
"""


def one(as_numpy):
    with tempfile.TemporaryDirectory() as d:
        prog = subprocess.Popen([str(build / "churn_calls"), "phases", str(build / "libeacgm_churn.so"), str(calls),
                                 "1", d], stdout=subprocess.PIPE, text=True)
        pathlib.Path(d, "start").touch()
        assert prog.stdout.readline().strip() == "loaded"
        t = eacgm.trace(pid=prog.pid, config=CONFIG, probes=["churn_work"], as_numpy=as_numpy, batch_size=65536)
        time.sleep(2.0)  # the library is attached at the next scan
        made = time.monotonic()
        pathlib.Path(d, "go0").touch()
        prog.communicate(timeout=600)
        t.wait()
        traced_s = time.monotonic() - made
        got = 0
        start = time.perf_counter()
        for batch in t.batches(timeout=0.0):
            got += len(batch)
        took = time.perf_counter() - start
        t.stop()
        return got, took, traced_s, t.dropped


def baseline(n=200_000):
    """Python making the same dicts itself: the machine's own speed, for comparison."""
    start = time.perf_counter()
    batch = [{"function": "churn_work", "domain": "bench", "pid": i, "tid": i, "comm": "churn_calls",
              "ts_ns": 1795839585425675477 + i, "dur_ns": 900 + i, "ret": i, "nested": False, "args": {"x": i}}
             for i in range(n)]
    took = time.perf_counter() - start
    del batch
    return n / took


print(f"Python's own dict literals of the same shape: {baseline() / 1e6:.2f} M/s "
      f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)", flush=True)
for form, as_numpy in (("numpy", True), ("dicts", False)):
    got, took, traced_s, dropped = one(as_numpy)
    print(f"{form:>6}: {got} calls into Python in {took:.3f} s = {got / took / 1e6:.2f} M calls/s "
          f"(traced in {traced_s:.1f} s, {dropped} dropped)", flush=True)
