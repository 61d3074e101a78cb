# Device workload for the overhead benchmark: a GPT-style decoder trained for a number
# of steps; prints the median step time of the measured steps (after a warm-up) as
# "step_ms=..." and, with --profile, runs the same steps under PyTorch's profiler.
# With --phases K --phase-dir D the measured steps run as K phases of N steps in this one
# process: before phase i it creates D/ready.i and waits for D/go.i (the harness attaches
# or detaches a tracer meanwhile), and prints "phase=i step_ms=..." after it.
# With --step-log F it writes each measured step's start and end (time.monotonic_ns,
# CLOCK_MONOTONIC) to F, with the thread's time on a CPU and waiting for one during the
# step (CLOCK_THREAD_CPUTIME_ID; /proc/thread-self/schedstat), a line
# "start_ns end_ns cpu_ns runqueue_ns" per step: the rest of a step the thread slept.
# With --ab-pairs K (under libeacgm_hook.so with EACGM_GPU_TIME=1) the measured steps run as
# 2K blocks of N steps in this one process, GPU timing paused (the ring's `paused` word,
# core/gpu_time_ring.h kPausedOffset) and on in turn (ABBA order), and it prints each
# pair's ratio and "ab_ratio=MEDIAN q1=.. q3=.." of on over paused: the cost of timing
# with the process, its memory and its CPU the same in both arms.
# With --paused (under the hook with EACGM_GPU_TIME=1) GPU timing is paused from the start:
# the hook only counts launches exactly.
# Usage: train_step.py --size gpu|cpu|big [--steps N] [--warmup N] [--profile]
#                      [--phases K --phase-dir D] [--step-log F] [--ab-pairs K] [--paused]
#   gpu: d 1024, 8 layers, sequence 1024, batch 8 (GPU-bound on an H100)
#   cpu: d 512, 4 layers, sequence 256, batch 8 (launch-bound: CPU-bound)
#   big: d 2048, 8 layers, sequence 1024, batch 8 (the gpu loop's launches with about 4x the
#        work each: a process that counting every call should not slow past the budget)
import argparse
import statistics
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--size", choices=["gpu", "cpu", "big"], default="cpu")
p.add_argument("--steps", type=int, default=200)
p.add_argument("--warmup", type=int, default=20)
p.add_argument("--profile", action="store_true")
p.add_argument("--phases", type=int, default=0)
p.add_argument("--phase-dir", default="")
p.add_argument("--step-log", default="")
p.add_argument("--ab-pairs", type=int, default=0)
p.add_argument("--paused", action="store_true")
a = p.parse_args()
d, layers, seq, batch = {"gpu": (1024, 8, 1024, 8), "cpu": (512, 4, 256, 8), "big": (2048, 8, 1024, 8)}[a.size]
dev = torch.device("cuda")
torch.manual_seed(0)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, d // 64, batch_first=True)
        self.ln2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


vocab = 8192
emb = torch.nn.Embedding(vocab, d).to(dev)
blocks = torch.nn.ModuleList([Block() for _ in range(layers)]).to(dev)
head = torch.nn.Linear(d, vocab).to(dev)
params = list(emb.parameters()) + list(blocks.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=1e-4)
mask = torch.nn.Transformer.generate_square_subsequent_mask(seq, device=dev)
x = torch.randint(0, vocab, (batch, seq), device=dev)
y = torch.randint(0, vocab, (batch, seq), device=dev)


def step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        h = emb(x)
        for b in blocks:
            h = b(h, mask)
        loss = torch.nn.functional.cross_entropy(head(h).float().view(-1, vocab), y.view(-1))
    loss.backward()
    opt.step()


for _ in range(a.warmup):
    step()
torch.cuda.synchronize()
times = []
spans = []
schedstat = open("/proc/thread-self/schedstat", "rb", buffering=0) if a.step_log else None


def runqueue_ns():
    # schedstat: time on a CPU, time waiting on a run queue, time slices (ns, ns, count).
    if schedstat is None:
        return 0
    schedstat.seek(0)
    return int(schedstat.read().split()[1])


def measured():
    for _ in range(a.steps):
        c0, q0 = time.thread_time_ns(), runqueue_ns()
        t0 = time.monotonic_ns()
        step()
        torch.cuda.synchronize()
        t1 = time.monotonic_ns()
        c1, q1 = time.thread_time_ns(), runqueue_ns()
        times.append((t1 - t0) / 1e6)
        spans.append((t0, t1, c1 - c0, q1 - q0))


PAUSED_OFFSET = 256  # core/gpu_time_ring.h kPausedOffset


def gpu_time_ring():
    import mmap
    import os

    fd = os.open(f"/dev/shm/eacgm-gpu-time.{os.getpid()}", os.O_RDWR)
    return mmap.mmap(fd, 4096)


if a.paused:
    gpu_time_ring()[PAUSED_OFFSET:PAUSED_OFFSET + 4] = (1).to_bytes(4, "little")
if a.ab_pairs:
    ring = gpu_time_ring()

    def run_block(paused):
        ring[PAUSED_OFFSET:PAUSED_OFFSET + 4] = (1 if paused else 0).to_bytes(4, "little")
        times.clear()
        measured()
        return statistics.median(times)

    ratios = []
    for i in range(a.ab_pairs):
        order = (True, False) if i % 2 == 0 else (False, True)  # ABBA: drift cancels
        got = {p: run_block(p) for p in order}
        ratios.append(got[False] / got[True])
        print(f"pair={i} paused_ms={got[True]:.4f} on_ms={got[False]:.4f} ratio={ratios[-1]:.4f}", flush=True)
    ring[PAUSED_OFFSET:PAUSED_OFFSET + 4] = (0).to_bytes(4, "little")
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    print(f"ab_ratio={statistics.median(ratios):.4f} q1={q[0]:.4f} q3={q[2]:.4f} pairs={len(ratios)} "
          f"steps={a.steps} size={a.size}", flush=True)
    raise SystemExit(0)
if a.phases:
    import os

    for i in range(a.phases):
        open(os.path.join(a.phase_dir, f"ready.{i}"), "w").close()
        while not os.path.exists(os.path.join(a.phase_dir, f"go.{i}")):
            time.sleep(0.01)
        times.clear()
        measured()
        print(f"phase={i} step_ms={statistics.median(times):.4f}", flush=True)
    open(os.path.join(a.phase_dir, f"ready.{a.phases}"), "w").close()
    raise SystemExit(0)
elif a.profile:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        measured()
else:
    measured()
if a.step_log:
    with open(a.step_log, "w") as f:
        f.writelines(" ".join(map(str, s)) + "\n" for s in spans)
print(f"step_ms={statistics.median(times):.3f} steps={a.steps} size={a.size}", flush=True)
