# What each GPM call costs in CPU on GPU 0 (thread CPU time, median of ROUNDS): one
# nvmlGpmSampleGet, and nvmlGpmMetricsGet over the 16 device-wide metrics eacgm asks for,
# over those and the 36 per-link NVLink ones (52, what a pass asks today), and over one.
# Says where a pass's GPM cost is, against docs' target of 1 ms per GPU per second.
# With --each, MetricsGet over each of the 16 alone too (which metric costs).
# Usage: python3 bench/gpu/gpm_call_cost.py [ROUNDS] [--each]
import ctypes, statistics, sys, time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 30
EACH = "--each" in sys.argv
nvml = ctypes.CDLL("libnvidia-ml.so.1")
assert nvml.nvmlInit_v2() == 0
dev = ctypes.c_void_p()
assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 0


class Info(ctypes.Structure):
    _fields_ = [("shortName", ctypes.c_char_p), ("longName", ctypes.c_char_p), ("unit", ctypes.c_char_p)]


class Metric(ctypes.Structure):
    _fields_ = [("metricId", ctypes.c_uint), ("nvmlReturn", ctypes.c_int), ("value", ctypes.c_double), ("info", Info)]


class Get(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("numMetrics", ctypes.c_uint), ("sample1", ctypes.c_void_p),
                ("sample2", ctypes.c_void_p), ("metrics", Metric * 210)]


BASE = [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 20, 21, 60, 61]
LINKS = [62 + k for k in range(36)]
samples = [ctypes.c_void_p(), ctypes.c_void_p()]
for s in samples:
    assert nvml.nvmlGpmSampleAlloc(ctypes.byref(s)) == 0


def cpu_ms(fn):
    t0 = time.thread_time_ns()
    rc = fn()
    return (time.thread_time_ns() - t0) / 1e6, rc


def metrics_get(ids):
    g = Get()
    g.version, g.numMetrics, g.sample1, g.sample2 = 1, len(ids), samples[0], samples[1]
    for k, i in enumerate(ids):
        g.metrics[k].metricId = i
    return nvml.nvmlGpmMetricsGet(ctypes.byref(g))


take = lambda s: (lambda: nvml.nvmlGpmSampleGet(dev, s))
cpu_ms(take(samples[0]))
rows = {"nvmlGpmSampleGet": [], "MetricsGet, 16 device-wide": [], "MetricsGet, 52 (with per-link NVLink)": [],
        "MetricsGet, 1 (SM activity)": []}
singles = [(f"MetricsGet, id {i} alone", [i]) for i in BASE] if EACH else []
for name, _ in singles:
    rows[name] = []
for _ in range(ROUNDS):
    time.sleep(0.12)
    ms, rc = cpu_ms(take(samples[1]))
    assert rc == 0, rc
    rows["nvmlGpmSampleGet"].append(ms)
    for name, ids in (("MetricsGet, 16 device-wide", BASE), ("MetricsGet, 52 (with per-link NVLink)", BASE + LINKS),
                      ("MetricsGet, 1 (SM activity)", [2]), *singles):
        ms, rc = cpu_ms(lambda: metrics_get(ids))
        assert rc == 0, rc
        rows[name].append(ms)
    samples.reverse()
print(f"| GPM call (GPU 0, {ROUNDS} rounds) | CPU ms, median | max |")
print("|---|---|---|")
for name, v in rows.items():
    print(f"| {name} | {statistics.median(v):.3f} | {max(v):.3f} |")
