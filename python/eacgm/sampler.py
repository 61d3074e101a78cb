"""The original eACGM's `eacgm.sampler`: eBPFSampler over BccBPF, and the NVML samplers."""

from __future__ import annotations

import time
from typing import Dict, List, Optional

from .bpf import BccBPF, BPFState
from .nvml import GPUSampler, GPUSamplerState, NVMLSampler, NVMLSamplerState


class BaseSamplerState:
    task: Optional[str]
    pid: Optional[int]
    cpu: Optional[int]
    timestamp: Optional[int]
    message: Optional[List[str]]

    def __init__(self) -> None:
        self.task = None
        self.pid = None
        self.tid = None
        self.cpu = None
        self.timestamp = None
        self.message = None

    def is_none(self) -> bool:
        return self.task is None

    def __repr__(self) -> str:
        return f"{self.task} {self.pid} {self.cpu} {self.timestamp} {self.message}"


class BaseSampler:
    def __init__(self, name: str) -> None:
        self.name = name

    def run(self) -> None:
        raise NotImplementedError

    def sample(self):
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


def category(event: str) -> str:
    if "cuda" in event:
        return "cuda"
    if "Py" in event:
        return "python"
    if "nccl" in event:
        return "nccl"
    if "Torch" in event:
        return "torch"
    return "other"


class eBPFSamplerState(BaseSamplerState):  # noqa: N801 (the original's name)
    @staticmethod
    def from_ebpfstate(other: BPFState) -> "eBPFSamplerState":
        state = eBPFSamplerState()
        state.task = other.task
        state.pid = other.pid
        state.tid = other.tid
        state.cpu = other.cpu
        state.timestamp = other.timestamp
        state.message = other.message
        return state

    def collect(self) -> Dict:
        """The event as the original's Perfetto collector takes it: name, cat, pid, tid,
        cpu, ts (µs), ph ("B" at start, "E" at end) and the message's remaining fields."""
        event = self.message[1]
        return {
            "name": event,
            "cat": category(event),
            "pid": self.pid,
            "tid": self.tid if self.tid is not None else self.pid,
            "cpu": self.cpu,
            "ts": self.timestamp / 1_000,
            "ph": "B" if self.message[0] == "start" else "E",
            "message": self.message[2:],
        }

    def __repr__(self) -> str:
        return f"eBPFSamplerState {super().__repr__()}"


class eBPFSampler(BaseSampler):  # noqa: N801
    """Attaches a BccBPF's `<sym>Entry`/`<sym>Exit` functions by an attach_config and
    returns what they print, sample by sample."""

    def __init__(self, bpf: BccBPF) -> None:
        super().__init__(name="eBPFSampler")
        self.bpf = bpf

    def run(self, attach_config: List[Dict]) -> None:
        """attach_config: [{"name", "exe_path": [...], "exe_sym": [...]}]. A symbol
        whose Entry or Exit function the text lacks is skipped with the reason printed,
        as the original did; everything else that fails raises, nothing left attached."""
        for info in attach_config:
            for path in info["exe_path"]:
                for sym in info["exe_sym"]:
                    for attach, func in ((self.bpf.attach_uprobe, sym + "Entry"),
                                         (self.bpf.attach_uretprobe, sym + "Exit")):
                        if func not in self.bpf.functions:
                            print(f"eacgm: {info.get('name', '')}: no function {func} in the BPF text")
                            continue
                        attach(path, sym, func)
        try:
            self.bpf.start()
        except BaseException:
            self.bpf.cleanup()
            raise

    def sample(self, time_stamp: float) -> List[eBPFSamplerState]:
        """Blocks `time_stamp` seconds; the lines printed meanwhile, in order."""
        samples: List[eBPFSamplerState] = []
        deadline = time.monotonic() + time_stamp
        while True:
            left = deadline - time.monotonic()
            for state in self.bpf.take_states(max(0.0, min(left, 0.2))):
                samples.append(eBPFSamplerState.from_ebpfstate(state))
            if left <= 0:
                return samples

    def close(self) -> None:
        self.bpf.cleanup()


__all__ = ["BaseSampler", "BaseSamplerState", "eBPFSampler", "eBPFSamplerState", "NVMLSampler",
           "NVMLSamplerState", "GPUSampler", "GPUSamplerState"]
