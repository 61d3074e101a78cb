#!/usr/bin/env python3
# What the always-on probes cost a loop, measured inside one process: the duty cycle
# (held at a fixed fraction by EACGM_DUTY_FRACTION) attaches the counted probes for a
# window of every second and detaches them for the rest, and logs each switch
# (EACGM_DUTY_SWITCHES); the loop logs each step's start and end (train_step.py
# --step-log, driver_loop --step-log), on the same clock. Steps wholly inside a window
# ran with every call counted, steps wholly between a finished detach and the next
# attach ran without those probes; steps that straddle a switch, or fall inside a
# detach, are left out (those are reported on their own: what a detach costs).
#
# Adjacent windows pair up (a window with the gap that follows it), so the drift of a
# process's speed over seconds (the ±7-16% between phases and runs on the GPU machine)
# cancels out. Prints the number of pairs, the median of the per-pair ratios of median
# step times (counted / not counted, and inside a detach / not counted) with a
# bootstrap 95% interval, and the pooled medians; then the same with mean step times and
# the pooled 90th percentiles. The median step shows what a typical step pays; the mean
# is what the process's time pays, slow steps included: where the probes make some steps
# much slower and leave most alone, the two differ. Where the step log also has each
# step's time on a CPU and on a run queue (train_step.py), it splits the mean counted and
# uncounted step into running, waiting for a CPU and sleeping (the rest): whether the
# probes' cost is work, or waits (a lock the traps take, the machine's other load).
# SKIP_S: the first SKIP_S seconds after the first switch are left out (a start-up
# transient, such as GPU timing's first second at its initial rate, measured apart).
# Several runs are pooled with comma-separated lists of logs (in the same order).
# Usage: window_cost.py SWITCH_LOG[,...] STEP_LOG[,...] [MIN_STEPS] [SKIP_S]
import random
import statistics
import sys


def switches(path):
    out = []
    for line in open(path):
        f = dict(kv.split("=") for kv in line.split()[1:])
        if f.get("ok") == "1":
            out.append((f["attached"] == "1", int(f["began_ns"]), int(f["counting_ns"]), int(f["ended_ns"])))
    return out


def spans(sw):
    """(kind, start, end) spans: 'on' (counting), 'off' (probes gone), 'detach'."""
    out = []
    for (attached, began, counting, ended), nxt in zip(sw, sw[1:] + [None]):
        if attached:
            # Counting from the attach's end until the next detach stops it.
            if nxt is not None:
                out.append(("on", ended, nxt[2]))
        else:
            out.append(("detach", counting, ended))
            if nxt is not None:
                out.append(("off", ended, nxt[1]))
    return out


def report(what, ratios):
    rng = random.Random(1)
    boot = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    med = statistics.median(ratios)
    print(f"{what}: {len(ratios)} pairs, median ratio {med:.4f} "
          f"(95% bootstrap {boot[50]:.4f}-{boot[1949]:.4f}): {100 * (med - 1):+.2f}%")


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_groups(switch_path, step_path, skip_ns, parts):
    """Per span of one run: its kind and the step times wholly inside it."""
    sw = switches(switch_path)
    steps = [tuple(map(int, line.split())) for line in open(step_path) if line.strip()]
    if skip_ns and sw:
        since = sw[0][1] + skip_ns
        sw = [s for s in sw if s[1] >= since]
        steps = [s for s in steps if s[0] >= since]
    groups = []
    i = 0
    for kind, start, end in spans(sw):
        while i < len(steps) and steps[i][0] < start:
            i += 1
        inside = []
        j = i
        while j < len(steps) and steps[j][1] <= end:
            inside.append((steps[j][1] - steps[j][0]) / 1e6)
            if len(steps[j]) >= 4:
                parts.setdefault(kind, []).append(
                    ((steps[j][1] - steps[j][0]) / 1e6, steps[j][2] / 1e6, steps[j][3] / 1e6))
            j += 1
        groups.append((kind, inside))
    return groups, len(steps), len(sw)


def main():
    # Several runs pool their pairs: SWITCH_LOG and STEP_LOG may each list files, comma-separated.
    switch_paths, step_paths = sys.argv[1].split(","), sys.argv[2].split(",")
    if len(switch_paths) != len(step_paths):
        sys.exit("window_cost: as many switch logs as step logs, please")
    parts = {}  # span kind: [(wall, cpu, runqueue)] of its steps, where the log has them
    min_steps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    skip_ns = int(float(sys.argv[4]) * 1e9) if len(sys.argv) > 4 else 0
    groups = []  # per span: its kind and the step times wholly inside it; runs apart
    n_steps = n_switches = 0
    for switch_path, step_path in zip(switch_paths, step_paths):
        g, n, m = run_groups(switch_path, step_path, skip_ns, parts)
        groups += g + [("run", [])]
        n_steps += n
        n_switches += m
    pairs, detach_pairs, mean_pairs = [], [], []
    for (k1, a), (k2, d), (k3, b) in zip(groups, groups[1:], groups[2:]):
        # on, detach, off: a window, its detach and the gap after it.
        if (k1, k2, k3) != ("on", "detach", "off") or len(b) < min_steps:
            continue
        if len(a) >= min_steps:
            pairs.append(statistics.median(a) / statistics.median(b))
            mean_pairs.append(statistics.mean(a) / statistics.mean(b))
        if len(d) >= min_steps:
            detach_pairs.append(statistics.median(d) / statistics.median(b))
    pooled = {k: [t for kind, ts in groups if kind == k for t in ts] for k in ("on", "off", "detach")}
    print(f"steps: {n_steps}; switches: {n_switches}; steps counted {len(pooled['on'])}, "
          f"not counted {len(pooled['off'])}, inside a detach {len(pooled['detach'])}")
    for k in ("on", "off", "detach"):
        if pooled[k]:
            print(f"  {k:7s} median step {statistics.median(pooled[k]):.4f} ms")
    if len(pairs) < 5:
        sys.exit(f"only {len(pairs)} window/gap pairs with {min_steps}+ steps each: run longer")
    report("counted/not counted", pairs)
    if len(detach_pairs) >= 5:
        report("inside a detach/not counted", detach_pairs)
    if pooled["on"] and pooled["off"]:
        print(f"pooled medians ratio: {statistics.median(pooled['on']) / statistics.median(pooled['off']):.4f}")
    report("means, counted/not counted", mean_pairs)
    if pooled["on"] and pooled["off"]:
        on, off = pooled["on"], pooled["off"]
        print(f"pooled means ratio: {statistics.mean(on) / statistics.mean(off):.4f}; 90th percentiles "
              f"{quantile(on, 0.9):.4f} ms counted, {quantile(off, 0.9):.4f} ms not")
    for k in ("on", "off"):
        if parts.get(k):
            wall, cpu, queue = (statistics.mean(p[i] for p in parts[k]) for i in range(3))
            print(f"  {k:7s} mean step {wall:.4f} ms: on a CPU {cpu:.4f}, waiting for one {queue:.4f}, "
                  f"sleeping {wall - cpu - queue:.4f}")


if __name__ == "__main__":
    main()
