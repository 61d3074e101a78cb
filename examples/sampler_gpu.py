"""The GPUs through NVML (GPUSampler), once a second until Ctrl-C; then gpu.json.

    PYTHONPATH=build/python python3 examples/sampler_gpu.py
"""
import json
import time

from eacgm.sampler import GPUSampler

sampler = GPUSampler()
sampler.run()
print("sampling; Ctrl-C ends", flush=True)

states = []
while True:
    try:
        for sample in sampler.sample():
            states.append({
                "ts": time.time_ns(),
                "gpu": sample.gpu,
                "name": sample.name,
                "gpu_utl": sample.sm,
                "totMem": sample.totMem,
                "usedMem": sample.usedMem,
                "encode_utl": sample.enc,
                "decode_utl": sample.dec,
                "temperature": sample.tmp,
                "fan_utl": sample.fan,
                "usedPower": sample.usedPower,
                "totPower": sample.totPower,
            })
        time.sleep(1)
        print("---", flush=True)
    except KeyboardInterrupt:
        break

sampler.close()
with open("gpu.json", "w", encoding="utf-8") as f:
    json.dump(states, f, indent=4)
print(f"gpu.json: {len(states)} samples", flush=True)
