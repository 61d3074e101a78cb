"""The same CUDA calls with the Pythonic API: run a command, take its calls in batches,
print the `eacgm run --json` summary.

    sudo PYTHONPATH=build/python python3 examples/trace_cuda.py build/cuda_calls
"""
import sys
from collections import Counter

import eacgm

calls = Counter()
with eacgm.trace(command=sys.argv[1:] or ["build/cuda_calls"], catalogs=["cuda"]) as t:
    for batch in t:
        calls.update(c["function"] for c in batch)

print("calls seen:", dict(calls))
for f in t.report()["functions"]:
    print(f"{f['function']:>24} {f['calls']:>6} calls  mean {f['mean_ns'] or 0:>10.0f} ns")
