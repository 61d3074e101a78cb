"""Compares the kernel GPU durations eacgm timed through the hook (`run --json`'s
gpu_time.kernels) with PyTorch's profiler's (CUPTI) over the same process, per launch shape:
a kernel launched with several grids or blocks runs for different times, so each
(kernel, grid, block) is compared on its own (eacgm's `shapes[]`, the profiler's `grid` and
`block` arguments). For every shape of p50 >= 20 us in the profiler that eacgm timed at
least MIN_TIMED times queued behind earlier work, the p50s must be within 5%, and the means
too where eacgm has MIN_MEAN samples (10, what its plan aims at: a mean of a few spans is
off by the kernel's spread, not by the timing; the mean column is shown for all); shapes
of 10 to 20 us are listed, not judged: 5% of them is 0.5 to 1 us, the order of a CUDA event
pair's own resolution and jitter. A shape whose
profiler durations are split between two levels (two layers launching one kernel with one
grid and block; its p45 and p55 more than 10% apart) has no stable p50: any sample, the
profiler's included, lands on either level, and a sample's mean needs hundreds of spans to
settle within 5%. Such shapes are compared by their means, marked "split", once eacgm
timed at least MIN_SPLIT (200) of their launches, and listed but not counted below that. A shape only ever timed on an idle stream is an upper bound
and is listed apart. Also prints the median difference in microseconds over the compared
shapes (a constant offset per span shows there). Prints one line per
shape, then the same per kernel name (shapes mixed, for information), and PASS/FAIL.

With --short (a run of a few seconds, tests/gpu/gpu_time_check.sh's short runs) every
kernel (by name, its shapes together) the profiler saw launched at least 100 times must
have been timed at least 10 times by eacgm (its `samples`, the first launch left out): a
kernel timed fewer times, or not at all, is starved and fails. Shapes timed 20 times or
more are compared as above.

Usage: gpu_time_compare.py WORKLOAD EACGM.json PROFILER.json [--short]
"""
import json
import statistics
import sys

short = "--short" in sys.argv[4:]
MIN_TIMED = 20 if short else 3
MIN_US = 20 if short else 10  # listed
JUDGE_US = 20  # judged
SHORT_MIN_LAUNCHES = 100
SHORT_MIN_SAMPLES = 10
MIN_SPLIT = 200
MIN_MEAN = 10
workload, eacgm_path, prof_path = sys.argv[1:4]
doc = json.load(open(eacgm_path))
prof_doc = json.load(open(prof_path))
prof_shapes = prof_doc.get("shapes", {})
ours = {}
bounds = 0
for k in doc["gpu_time"]["kernels"]:
    if not k["timed"] or k["graph"]:
        continue
    for sh in k.get("shapes", []):
        key = (k["name"], ",".join(map(str, sh["grid"])) + "|" + ",".join(map(str, sh["block"])))
        if sh["upper_bound"]:
            bounds += 1
            continue
        queued = sh.get("samples", sh["timed"] - sh["idle_starts"])
        # One name in several processes or modules: keep the most timed row.
        if key not in ours or queued > ours[key][0]:
            ours[key] = (queued, sh["p50_ns"] / 1000.0, sh.get("mean_ns", 0) / 1000.0)
compared = worst = 0
fails = []
print(f"{'kernel':56} {'grid|block':>22} {'timed':>6} {'eacgm p50':>10} {'cupti p50':>10} {'diff':>7} {'mean diff':>9}")
rows = []
for name, by_shape in prof_shapes.items():
    for shape, durs in by_shape.items():
        rows.append((sum(durs), name, shape, durs))
offsets = []
mean_worst = 0
means_judged = 0
mean_fails = []
splits = 0
starved = []
for _, name, shape, durs in sorted(rows, reverse=True):
    p50 = statistics.median(durs)
    got = ours.get((name, shape))
    if p50 < MIN_US or got is None or got[0] < MIN_TIMED:
        continue
    d = sorted(durs)
    split = d[int(len(d) * 0.55)] > 1.1 * d[int(len(d) * 0.45)]
    theirs, mine = (statistics.mean(durs), got[2]) if split else (p50, got[1])
    diff = (mine - theirs) / theirs
    # The means too (a split shape's is its figure already). The profiler's steps come
    # after eacgm's, warm: its first launches are not cold ones.
    mean_diff = (got[2] - statistics.mean(durs)) / statistics.mean(durs)
    # A split shape's mean needs hundreds of spans: compared once eacgm has MIN_SPLIT.
    uncounted = split and got[0] < MIN_SPLIT
    unjudged = p50 < JUDGE_US
    print(f"{name[:56]:56} {shape[:22]:>22} {got[0]:6d} {mine:10.2f} {theirs:10.2f} {100 * diff:6.2f}% {100 * mean_diff:8.2f}%"
          f"{(' split: means, not counted (under %d timed)' % MIN_SPLIT) if uncounted else ' split: means' if split else ''}"
          f"{' under %d us: not judged' % JUDGE_US if unjudged else ''}")
    if split:
        splits += 1
    if uncounted or unjudged:
        continue
    offsets.append(mine - theirs)
    compared += 1
    worst = max(worst, abs(diff))
    if abs(diff) > 0.05:
        fails.append(f"{name[:40]} {shape}")
    if got[0] < MIN_MEAN:
        continue
    means_judged += 1
    mean_worst = max(mean_worst, abs(mean_diff))
    if abs(mean_diff) > 0.05:
        mean_fails.append(f"{name[:40]} {shape} ({100 * mean_diff:+.1f}%)")
prof_big = sum(1 for _, n, s, d in rows if statistics.median(d) >= JUDGE_US)
if short:
    # Per kernel: the profiler's launches against eacgm's samples (shapes together).
    samples_of = {}
    for k in doc["gpu_time"]["kernels"]:
        if not k["graph"]:
            n = k.get("samples", k["timed"] - k["idle_starts"])
            samples_of[k["name"]] = max(samples_of.get(k["name"], 0), n)
    launched = {}
    for _, name, shape, durs in rows:
        launched[name] = launched.get(name, 0) + len(durs)
    many = sorted((n, name) for name, n in launched.items() if n >= SHORT_MIN_LAUNCHES)
    for n, name in many:
        got_n = samples_of.get(name, 0)
        if got_n < SHORT_MIN_SAMPLES:
            starved.append(f"{name[:40]} ({got_n} of {n})")
    fewest = min((samples_of.get(name, 0), name[:40]) for n, name in many) if many else (0, "")
    print(f"{workload}: {len(many)} kernels launched >= {SHORT_MIN_LAUNCHES} times, "
          f"{len(many) - len(starved)} timed >= {SHORT_MIN_SAMPLES} times (fewest: {fewest[0]}, {fewest[1]})")
print(f"{workload}: {bounds} shapes only ever timed on an idle stream (upper bounds), {splits} split shapes "
      f"(by their means)")
print(f"{workload}: {compared} of {prof_big} profiler shapes of p50 >= {JUDGE_US} us compared (eacgm timed >= {MIN_TIMED}), "
      f"worst {100 * worst:.2f}%, {compared - len(fails)} within 5%, median difference "
      f"{statistics.median(offsets) if offsets else 0:+.2f} us; means (of {MIN_MEAN} samples or more): worst {100 * mean_worst:.2f}%, "
      f"{means_judged - len(mean_fails)} of {means_judged} within 5%; process {doc['gpu_time']['processes']}")
# The same per kernel name, shapes mixed (what a per-name figure would say), for information.
by_name = {k["name"]: k for k in doc["gpu_time"]["kernels"] if k["timed"] and not k["graph"] and not k["upper_bound"]}
within = total = 0
for name, durs in prof_doc["kernels"].items():
    p50 = statistics.median(durs)
    k = by_name.get(name)
    if p50 < MIN_US or k is None or k.get("samples", k["timed"] - k["idle_starts"]) < MIN_TIMED:
        continue
    total += 1
    within += abs(k["p50_ns"] / 1000.0 - p50) / p50 <= 0.05
print(f"{workload}: per name (shapes mixed): {within} of {total} within 5%")
if compared == 0 and not short:  # a short run is judged by its samples' counts
    print(f"FAIL: {workload}: no kernel shape to compare")
    sys.exit(1)
if starved:
    print(f"FAIL: {workload}: {len(starved)} kernels launched >= {SHORT_MIN_LAUNCHES} times timed under "
          f"{SHORT_MIN_SAMPLES} times: {starved[:6]}")
if fails:
    print(f"FAIL: {workload}: {len(fails)} of {compared} shapes off by more than 5%: {fails[:6]}")
if mean_fails:
    print(f"FAIL: {workload}: {len(mean_fails)} of {means_judged} shapes' means off by more than 5%: {mean_fails[:6]}")
if starved or fails or mean_fails:
    sys.exit(1)
print(f"PASS: {workload}: every compared shape's p50 and mean within 5% of the profiler's")
