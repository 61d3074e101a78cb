"""The original eACGM's `eacgm.collector`: the samplers' states as Perfetto events."""

from __future__ import annotations

from typing import Dict, List, Tuple


def to_perfetto(states: List) -> List[Dict]:
    """The B/E pairs of the eBPFSamplerStates in `states` (others are skipped), as a JSON
    array Perfetto and chrome://tracing open. Calls pair per (name, pid, tid) as a stack,
    so nested and recursive calls keep every pair; an end without its start, or a start
    still open, is left out."""
    from .sampler import eBPFSamplerState

    open_calls: Dict[Tuple, List[Dict]] = {}
    out: List[Dict] = []
    for state in states:
        if not isinstance(state, eBPFSamplerState) or not state.message or len(state.message) < 2:
            continue
        event = state.collect()
        key = (event["name"], event["pid"], event["tid"])
        if event["ph"] == "B":
            open_calls.setdefault(key, []).append(event)
        elif open_calls.get(key):
            begin = open_calls[key].pop()
            for e in (begin, event):
                e["args"] = {"message": e["message"], "cpu": e["cpu"]}
            out += [begin, event]
    out.sort(key=lambda e: (e["ts"], 0 if e["ph"] == "E" else 1))
    return out
