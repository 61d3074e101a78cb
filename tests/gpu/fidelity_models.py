"""Workloads for the fidelity device check, each run under PyTorch's profiler from
before its first CUDA call to its end, so the profiler and eacgm (tracing the whole
process) see the same GPU work. Writes the profiler's Chrome trace to OUT.

Usage: fidelity_models.py {cnn,graph,compile,adamw,reduce} OUT.json
  cnn:     a bf16 CNN (cuDNN convolutions, cuBLAS linear layer), 5 training steps
  graph:   an MLP training step captured in a CUDA graph and replayed 10 times
  compile: a torch.compile'd model (Triton kernels, some names over 64 bytes), 5 steps
  adamw:   the same model trained by AdamW (its multi-tensor kernels), 10 steps
  reduce:  inference through torch.compile(mode="reduce-overhead"): its CUDA graphs
           (captured after a warm-up run, then replayed), 20 steps
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def cnn():
    torch.backends.cudnn.benchmark = False
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(4),
        torch.nn.Flatten(), torch.nn.Linear(64 * 16, 10)).cuda().to(torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(32, 3, 32, 32, device="cuda", dtype=torch.bfloat16)
    y = torch.randint(0, 10, (32,), device="cuda")
    for _ in range(5):
        opt.zero_grad(set_to_none=False)
        loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()


def graph():
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 512)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 512, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as CUDA graphs require
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            model(x).square().mean().backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        model(x).square().mean().backward()
        opt.step()
    for _ in range(10):
        g.replay()
    torch.cuda.synchronize()


def compiled(optimizer=torch.optim.SGD, steps=5):
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.LayerNorm(256)
            self.fc1 = torch.nn.Linear(256, 1024)
            self.fc2 = torch.nn.Linear(1024, 256)

        def forward(self, x):
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))

    model = torch.compile(torch.nn.Sequential(Block(), Block()).cuda())
    opt = optimizer(model.parameters(), lr=0.01)
    x = torch.randn(64, 128, 256, device="cuda", requires_grad=True)
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        model(x).square().mean().backward()
        opt.step()
    torch.cuda.synchronize()


def reduce_overhead(steps=20):
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 512),
                                torch.nn.LayerNorm(512)).cuda().eval()
    step = torch.compile(model, mode="reduce-overhead")
    x = torch.randn(64, 512, device="cuda")
    with torch.no_grad():
        for _ in range(steps):
            step(x)
    torch.cuda.synchronize()


def main():
    which, out = sys.argv[1], sys.argv[2]
    work = {"cnn": cnn, "graph": graph, "compile": compiled,
            "adamw": lambda: compiled(torch.optim.AdamW, 10), "reduce": reduce_overhead}[which]
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        work()
    prof.export_chrome_trace(out)


if __name__ == "__main__":
    main()
