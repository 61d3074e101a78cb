#!/usr/bin/env python3
# Holds a process's GPU timing on for FRACTION of every second and paused for the rest,
# from outside it: the ring's `paused` word (core/gpu_time_ring.h kPausedOffset) in
# /dev/shm/eacgm-gpu-time.PID, which the hook reads before each launch it would time
# (launches are counted exactly either way). Each switch is logged in the duty cycle's
# format (EACGM_DUTY_SWITCHES: attached=1 for timing on), on CLOCK_MONOTONIC, so
# bench/gpu/window_cost.py compares the steps inside the windows with those between them.
# Runs until the process is gone (or SIGINT/SIGTERM), leaving timing on; then prints the
# ring's own counters as last read: launches seen, launches timed, the sampling rate and
# the launching threads' time spent timing (what the hook's budget counts).
# Usage: pause_windows.py PID FRACTION SWITCH_LOG
import mmap
import os
import signal
import sys
import time

PAUSED_OFFSET = 256
# core/gpu_time_ring.h Header: sampled, launches, skipped_capturing, timing_cost_ns (u64),
# sample_every, errors (u32).
COUNTERS = {"sampled": (200, 8), "launches": (208, 8), "timing_cost_ns": (224, 8),
            "sample_every": (232, 4), "errors": (236, 4)}


def counters(ring):
    return {k: int.from_bytes(ring[o:o + n], "little") for k, (o, n) in COUNTERS.items()}


def main():
    pid, fraction, log_path = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    path = f"/dev/shm/eacgm-gpu-time.{pid}"
    while not os.path.exists(path):
        if not os.path.exists(f"/proc/{pid}"):
            sys.exit(f"pause_windows: process {pid} ended without a GPU-time ring")
        time.sleep(0.05)
    fd = os.open(path, os.O_RDWR)
    ring = mmap.mmap(fd, 4096)
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    last = counters(ring)
    with open(log_path, "w") as log:
        on = False
        while not stop and os.path.exists(f"/proc/{pid}"):
            last = counters(ring)
            on = not on
            t = time.monotonic_ns()
            ring[PAUSED_OFFSET:PAUSED_OFFSET + 4] = (0 if on else 1).to_bytes(4, "little")
            log.write(f"switch attached={int(on)} ok=1 began_ns={t} counting_ns={t} ended_ns={t}\n")
            log.flush()
            time.sleep(fraction if on else 1.0 - fraction)
    ring[PAUSED_OFFSET:PAUSED_OFFSET + 4] = (0).to_bytes(4, "little")
    c = last
    per_timed = c["timing_cost_ns"] / c["sampled"] if c["sampled"] else 0
    print(f"ring: launches={c['launches']} timed={c['sampled']} every={c['sample_every']} "
          f"timing_cost={c['timing_cost_ns'] / 1e6:.1f} ms ({per_timed / 1e3:.1f} us per timed launch) "
          f"errors={c['errors']}", flush=True)


if __name__ == "__main__":
    main()
