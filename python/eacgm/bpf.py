"""The original eACGM's `eacgm.bpf`: BPFState, BaseBPF and BccBPF.

BccBPF keeps the original's interface and the meaning of its BPF text, with this agent
underneath: the text is understood, not compiled (eacgm/_bpf_text.py gives the subset),
each attached `<sym>Entry` / `<sym>Exit` pair becomes one declarative probe that captures
the registers the functions read, and their statements run in user space per call. The
lines they print come back as BPFStates exactly as the original made them from the
trace pipe: `timestamp` the number before the first `@`, `message` the rest split on `@`.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections import deque
from typing import Deque, Dict, List, Optional, Tuple

from . import _bpf_text
from .errors import UsageError

log = logging.getLogger("eacgm")


class BPFState:
    """One line a probe printed: the task (comm), pid, tid, cpu (-1: not recorded),
    timestamp (the number before the first `@`) and message (the rest, split on `@`)."""

    task: Optional[str]
    pid: Optional[int]
    tid: Optional[int]
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
        self._key = (0, 0)

    def is_none(self) -> bool:
        return self.task is None

    def __repr__(self) -> str:
        return f"BPFState {self.task} {self.pid} {self.cpu} {self.timestamp} {self.message}"


def state_from_line(line: str, task: str, pid: int, tid: int) -> BPFState:
    state = BPFState()
    state.task, state.pid, state.tid, state.cpu = task, pid, tid, -1
    head = line.split("@")[0]
    m = re.match(r"\s*(-?[0-9]+)", head)
    state.timestamp = int(m.group(1)) if m else None
    state.message = line.split("@")[1:]
    return state


class BaseBPF:
    def __init__(self, name: str) -> None:
        self.name = name

    def attach_uprobe(self, exe_path: str, exe_sym: str, bpf_func: str) -> bool:
        raise NotImplementedError

    def attach_uretprobe(self, exe_path: str, exe_sym: str, bpf_func: str) -> bool:
        raise NotImplementedError

    def cleanup(self) -> None:
        raise NotImplementedError

    def trace_ebpf(self, nonblocking: bool = False) -> BPFState:
        raise NotImplementedError


def library_glob(exe_path: str) -> str:
    """The file-name glob the agent probes for `exe_path`: the file's own name when it
    exists here (links resolved, as /proc/PID/maps shows it), else its library name
    (`libcudart.so.12` -> `libcudart.so*`, `python` -> `python*`), with a notice."""
    if os.path.exists(exe_path):
        return os.path.basename(os.path.realpath(exe_path))
    base = os.path.basename(exe_path)
    m = re.fullmatch(r"(.*\.so)(\.[0-9.]*)?", base)
    glob = (m.group(1) if m else base) + "*"
    log.warning("exe_path %s does not exist here: probing the files named %s", exe_path, glob)
    return glob


class _Attachment:
    def __init__(self, index: int, glob: str, sym: str) -> None:
        self.name = f"bcc{index}"
        self.glob = glob
        self.sym = sym
        self.entry: Optional[_bpf_text.BpfFunction] = None
        self.exit: Optional[_bpf_text.BpfFunction] = None

    def toml(self) -> str:
        parms = sorted(self.entry.parms) if self.entry else []
        args = ", ".join(f'{{ name = "parm{n}", reg = {n - 1} }}' for n in parms)
        ret = "int64" if self.exit and self.exit.reads_rc else "none"
        return (f'[[probe]]\nname = "{self.name}"\ndomain = "bcc"\nlibrary = "{self.glob}"\n'
                f'symbol = "{self.sym}"\nret = "{ret}"\nargs = [{args}]\n')


class BccBPF(BaseBPF):
    """The original's BccBPF: `text` holds `<sym>Entry` / `<sym>Exit` functions; `cflags`
    is accepted and unused (nothing is compiled). Raises BPFTextError naming the line of
    the first construct outside the subset."""

    def __init__(self, name: str, text: str, cflags: Optional[List[str]] = None) -> None:
        super().__init__(name)
        self.text = text
        self.cflags = list(cflags or [])
        self.functions = _bpf_text.parse(text)
        for fn in self.functions.values():
            for note in fn.notes:
                log.warning("%s: %s", fn.name, note)
        self._attachments: Dict[Tuple[str, str], _Attachment] = {}
        self._trace = None
        self._offset_ns = 0
        self._pending: Deque[BPFState] = deque()
        self._seq = 0

    # -- attaching --------------------------------------------------------------------
    def attach_uprobe(self, exe_path: str, exe_sym: str, bpf_func: str) -> bool:
        return self._attach(exe_path, exe_sym, bpf_func, exit_=False)

    def attach_uretprobe(self, exe_path: str, exe_sym: str, bpf_func: str) -> bool:
        return self._attach(exe_path, exe_sym, bpf_func, exit_=True)

    def _attach(self, exe_path: str, exe_sym: str, bpf_func: str, exit_: bool) -> bool:
        fn = self.functions.get(bpf_func)
        if fn is None:
            raise UsageError(f"no function {bpf_func} in the BPF text of {self.name}")
        glob = library_glob(exe_path)
        key = (glob, exe_sym)
        att = self._attachments.get(key)
        if att is None:
            att = self._attachments[key] = _Attachment(len(self._attachments), glob, exe_sym)
        if exit_:
            att.exit = fn
        else:
            att.entry = fn
        if self._trace is not None:  # attached while tracing: trace again with it
            self.start()
        return True

    def start(self) -> None:
        """Starts tracing what is attached (trace_ebpf does it on first use)."""
        from .tracing import Trace

        self._stop()
        if not self._attachments:
            raise UsageError(f"{self.name}: nothing is attached")
        config = "".join(a.toml() for a in self._attachments.values())
        self._by_name = {a.name: a for a in self._attachments.values()}
        self._trace = Trace(config=config, probes=list(self._by_name), mode="per-call", gpus=False,
                            python_hz=0, host_waits=False)
        self._offset_ns = time.time_ns() - time.monotonic_ns()

    # -- reading ----------------------------------------------------------------------
    def trace_ebpf(self, nonblocking: bool = False) -> BPFState:
        """The next printed line (an empty BPFState when `nonblocking` finds none)."""
        while not self._pending:
            states = self.take_states(0.0 if nonblocking else 0.1)
            self._pending.extend(states)
            if nonblocking and not self._pending:
                return BPFState()
        return self._pending.popleft()

    def take_states(self, timeout: float) -> List[BPFState]:
        """The lines of the calls that completed, waiting at most `timeout` seconds for
        some; in the order the probes fired."""
        if self._trace is None:
            self.start()
        if self._pending:
            out = list(self._pending)
            self._pending.clear()
            return out
        states: List[BPFState] = []
        for call in self._trace.next_batch(timeout):
            states += self.states_of(call)
        states.sort(key=lambda s: s._key)
        return states

    def states_of(self, call: dict) -> List[BPFState]:
        att = self._by_name.get(call["function"])
        if att is None:
            return []
        out = []
        entry_ns = call["ts_ns"] - self._offset_ns
        task, pid, tid = call["comm"], call["pid"], call["tid"]
        self._seq += 1
        if att.entry is not None:
            args = call["args"]
            env = _bpf_text.Env({n: args.get(f"parm{n}") or 0 for n in att.entry.parms}, 0, entry_ns)
            for i, line in enumerate(att.entry.run(env)):
                s = state_from_line(line, task, pid, tid)
                s._key = (entry_ns, 0, self._seq, i)
                out.append(s)
        if att.exit is not None and call["dur_ns"] is not None:
            exit_ns = entry_ns + call["dur_ns"]
            env = _bpf_text.Env({}, call["ret"] or 0, exit_ns)
            for i, line in enumerate(att.exit.run(env)):
                s = state_from_line(line, task, pid, tid)
                s._key = (exit_ns, 1, -self._seq, i)  # at one instant, inner calls end first
                out.append(s)
        return out

    def cleanup(self) -> None:
        """Detaches everything."""
        self._stop()
        self._attachments.clear()
        self._pending.clear()

    def _stop(self) -> None:
        if self._trace is not None:
            self._trace.stop()
            self._trace = None
