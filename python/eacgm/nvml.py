"""The original eACGM's NVML samplers (GPUSampler, NVMLSampler) over the agent's NVML
reader (src/sample): no pynvml. Without an NVIDIA driver they raise NVMLError."""

from __future__ import annotations

import time
from typing import List, Optional


def _gpus(first_window_s: float = 1.0):
    from ._backend import native as _eacgm

    return _eacgm.Gpus(first_window_s)


class NVMLSamplerState:
    """One process on one GPU: pid, gpu (index), sm / mem / enc / dec utilization in
    percent over the sampled interval (None where the GPU does not report it)."""

    def __init__(self) -> None:
        self.task: Optional[str] = None
        self.pid: Optional[int] = None
        self.tid: Optional[int] = None
        self.cpu: Optional[int] = None
        self.timestamp: Optional[int] = None
        self.message = None
        self.gpu: Optional[int] = None
        self.sm: Optional[int] = None
        self.mem: Optional[int] = None
        self.enc: Optional[int] = None
        self.dec: Optional[int] = None

    def is_none(self) -> bool:
        return self.task is None

    def __repr__(self) -> str:
        return (f"NVMLSamplerState {self.gpu} {self.sm} {self.mem} {self.enc} {self.dec} "
                f"{self.task} {self.pid} {self.cpu} {self.timestamp} {self.message}")


class GPUSamplerState:
    """One GPU: gpu (index), name, sm (NVML utilization, %), totMem / usedMem (bytes), enc /
    dec (%), tmp (°C), fan (%), usedPower / totPower (W); and the GPU's profiling counters
    (NVML GPM, Hopper and newer) since the previous sample: sm_active, tensor_active,
    dram_active (ratios 0..1; None without GPM, or for a sample within 100 ms of the last)."""

    def __init__(self) -> None:
        self.gpu: Optional[int] = None
        self.name: Optional[str] = None
        self.sm: Optional[int] = None
        self.totMem: Optional[int] = None
        self.usedMem: Optional[int] = None
        self.enc: Optional[int] = None
        self.dec: Optional[int] = None
        self.tmp: Optional[int] = None
        self.fan: Optional[int] = None
        self.usedPower: Optional[float] = None
        self.totPower: Optional[float] = None
        self.sm_active: Optional[float] = None
        self.tensor_active: Optional[float] = None
        self.dram_active: Optional[float] = None

    def __repr__(self) -> str:
        return (f"GPUSamplerState {self.gpu} {self.name} {self.sm} {self.usedMem} {self.totMem} {self.enc} "
                f"{self.dec} {self.tmp} {self.fan} {self.usedPower} {self.totPower}")


def _watts(milliwatts: Optional[int]) -> Optional[float]:
    return None if milliwatts is None else milliwatts / 1000.0


def _activity(d, key: str) -> Optional[float]:
    """A GPM activity of a device dict: the extension's flat key, or the command's
    (`eacgm gpu --json`, the fallback without the extension) `gpm` object."""
    if key in d:
        return d[key]
    gpm = d.get("gpm")
    return gpm.get(key) if gpm else None


class GPUSampler:
    """The GPUs now: sample() returns one GPUSamplerState per GPU (it does not block)."""

    def __init__(self) -> None:
        self.name = "GPUSampler"
        self._gpus = _gpus()

    def run(self) -> None:
        return None

    def sample(self) -> List[GPUSamplerState]:
        out = []
        for d in self._gpus.devices():
            if d["lost"]:
                continue
            s = GPUSamplerState()
            s.gpu, s.name = d["index"], d["name"]
            s.sm = d["utilization_gpu_percent"]
            s.totMem, s.usedMem = d["memory_total_bytes"], d["memory_used_bytes"]
            s.enc, s.dec = d["encoder_utilization_percent"], d["decoder_utilization_percent"]
            s.tmp, s.fan = d["temperature_gpu_celsius"], d["fan_speed_percent"]
            s.usedPower = _watts(d["power_usage_milliwatts"])
            s.totPower = _watts(d["power_limit_milliwatts"])
            s.sm_active, s.tensor_active, s.dram_active = (_activity(d, k) for k in
                                                           ("sm_active", "tensor_active", "dram_active"))
            out.append(s)
        return out

    def close(self) -> None:
        self._gpus = None


class NVMLSampler:
    """The processes on the GPUs: sample(time_stamp) returns one NVMLSamplerState per
    (process, GPU) with utilization over about the last `time_stamp` seconds (the first
    call) or since the previous call; it does not block."""

    def __init__(self) -> None:
        self.name = "NVMLSampler"
        self._gpus = None

    def run(self) -> None:
        return None

    def sample(self, time_stamp: float = 1.0) -> List[NVMLSamplerState]:
        if self._gpus is None:
            self._gpus = _gpus(time_stamp)
        out = []
        now_us = time.time_ns() // 1000
        for p in self._gpus.processes():
            s = NVMLSamplerState()
            s.pid, s.gpu = p["pid"], p["gpu_index"]
            s.task = p["name"] or None
            s.timestamp = now_us
            s.sm, s.mem = p["sm_utilization_percent"], p["memory_utilization_percent"]
            s.enc, s.dec = p["encoder_utilization_percent"], p["decoder_utilization_percent"]
            out.append(s)
        return out

    def close(self) -> None:
        self._gpus = None
