"""The processes on the GPUs through NVML (NVMLSampler), until Ctrl-C; then nvml.json.

    PYTHONPATH=build/python python3 examples/sampler_nvml.py
"""
import json
import time

from eacgm.sampler import NVMLSampler

sampler = NVMLSampler()
sampler.run()
print("sampling; Ctrl-C ends", flush=True)

states = []
while True:
    try:
        for sample in sampler.sample(time_stamp=1):
            states.append({
                "ts": time.time_ns(),
                "pid": sample.pid,
                "gpu": sample.gpu,
                "gpu_utl": sample.sm,
                "mem": sample.mem,
                "encode_utl": sample.enc,
                "decode_utl": sample.dec,
            })
        time.sleep(1)
        print("---", flush=True)
    except KeyboardInterrupt:
        break

sampler.close()
with open("nvml.json", "w", encoding="utf-8") as f:
    json.dump(states, f, indent=4)
print(f"nvml.json: {len(states)} samples", flush=True)
