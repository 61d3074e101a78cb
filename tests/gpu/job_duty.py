# A job that holds GPU 0 for CYCLES rounds of COMPUTE_S seconds of bf16 GEMMs and IDLE_S
# seconds asleep (its context and memory kept), for tests/gpu/job_report_check.sh: prints
# one JSON line with its own figures: the held time from the first CUDA context to the end,
# and the GPU's total energy counter (NVML, millijoules) read at both ends.
# Usage: job_duty.py CYCLES COMPUTE_S IDLE_S
import ctypes, json, sys, time

import torch

cycles, compute_s, idle_s = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
nvml = ctypes.CDLL("libnvidia-ml.so.1")
assert nvml.nvmlInit_v2() == 0
dev = ctypes.c_void_p()
assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 0


def energy_mj():
    e = ctypes.c_ulonglong()
    rc = nvml.nvmlDeviceGetTotalEnergyConsumption(dev, ctypes.byref(e))
    return e.value if rc == 0 else None


a = torch.randn(8192, 8192, device="cuda:0", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda:0", dtype=torch.bfloat16)
torch.cuda.synchronize()
start, e0 = time.time(), energy_mj()
phases = []
for _ in range(cycles):
    t0 = time.time()
    while time.time() - t0 < compute_s:
        for _ in range(20):
            c = a @ b
        torch.cuda.synchronize()
    t1 = time.time()
    time.sleep(idle_s)
    phases.append({"compute": [t0, t1], "idle": [t1, time.time()]})
end, e1 = time.time(), energy_mj()
print(json.dumps({"start": start, "end": end, "energy_mj": [e0, e1], "phases": phases}), flush=True)
