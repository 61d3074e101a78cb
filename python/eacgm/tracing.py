"""`eacgm.trace()`: trace a process or a command from Python, as `eacgm run` does.

    with eacgm.trace(command=["./train"], catalogs=["cuda"]) as t:
        for batch in t:              # lists of dicts (or NumPy arrays with as_numpy=True)
            ...
    print(t.report()["functions"])  # the `eacgm run --json` document
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from ._backend import native as _eacgm
from ._records import record_dtype

log = logging.getLogger("eacgm")


def _config_text(config: Optional[str]) -> str:
    if not config:
        return ""
    if "\n" not in config and os.path.exists(config):
        with open(config, encoding="utf-8") as f:
            return f.read()
    return config


class Trace:
    """A running (or ended) trace. Made by `trace()`; iterate it for batches of calls."""

    def __init__(
        self,
        pid: Union[int, Sequence[int], None] = None,
        command: Optional[Sequence[str]] = None,
        catalogs: Optional[Sequence[str]] = None,
        probes: Optional[Sequence[str]] = None,
        config: Optional[str] = None,
        mode: str = "per-call",
        duration: float = 0.0,
        gpus: bool = False,
        python_hz: Optional[int] = 0,
        host_waits: Optional[bool] = False,
        as_numpy: bool = False,
        batch_size: int = 65536,
        capacity: int = 1 << 22,
    ) -> None:
        pids = [] if pid is None else ([pid] if isinstance(pid, int) else list(pid))
        names = list(catalogs or []) + list(probes or [])
        self.as_numpy = as_numpy
        self.batch_size = batch_size
        self._dtype = record_dtype() if as_numpy else None
        self._handle = _eacgm.Trace(
            _config_text(config), names, pids, list(command or []), mode or "", float(duration),
            bool(gpus), python_hz, host_waits, int(capacity))
        self._log_notices()

    # -- the calls --------------------------------------------------------------------
    def batches(self, timeout: Optional[float] = None) -> Iterator[Any]:
        """Yields batches of calls until the trace has ended and every call was taken.

        `timeout` (seconds): also stop after waiting that long for a batch."""
        while True:
            batch = self.next_batch(timeout=-1.0 if timeout is None else timeout)
            if len(batch) == 0:
                if self.ended or timeout is not None:
                    return
                continue
            yield batch

    def __iter__(self) -> Iterator[Any]:
        return self.batches()

    def next_batch(self, timeout: float = 1.0) -> Any:
        """Up to `batch_size` calls, waiting at most `timeout` seconds (< 0: until one
        comes or the trace ends). Empty once the trace has ended and was drained."""
        if self.as_numpy:
            import numpy as np

            raw = self._handle.take_records(self.batch_size, timeout)
            self._log_notices()
            return np.frombuffer(raw, dtype=self._dtype)
        batch = self._handle.take_dicts(self.batch_size, timeout)
        self._log_notices()
        return batch

    @property
    def probes(self) -> List[Dict[str, Any]]:
        """The probes seen so far: a NumPy record's `probe` field indexes this list."""
        return self._handle.probes()

    def function_names(self, records: Any) -> List[str]:
        """The function of each NumPy record (by its `probe` index)."""
        names = [p["function"] for p in self.probes]
        return [names[i] for i in records["probe"]]

    # -- the run ----------------------------------------------------------------------
    @property
    def ended(self) -> bool:
        return not self._handle.running

    @property
    def exit_code(self) -> Optional[int]:
        """The traced command's exit code (128 + signal), 0 without one; None while running."""
        code = self._handle.exit_code
        return None if code < 0 else code

    @property
    def command_pid(self) -> Optional[int]:
        pid = self._handle.command_pid
        return None if pid < 0 else pid

    @property
    def dropped(self) -> int:
        """Calls left out because Python did not take them fast enough."""
        return self._handle.dropped

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits for the trace to end by itself (the command exits, the duration passes)."""
        done = self._handle.wait(-1.0 if timeout is None else timeout)
        self._log_notices()
        return done

    def stop(self) -> None:
        """Ends the trace (a traced command gets SIGTERM); the queued calls stay readable."""
        self._handle.stop()
        self._log_notices()

    def report(self) -> Dict[str, Any]:
        """The `eacgm run --json` document (docs/report.md) as Python objects: the final
        one once the trace has ended, else the last published (about once a second)."""
        text = self._handle.report_json()
        if not text:
            raise _eacgm.Error("no report yet: the trace has not published its first snapshot")
        return json.loads(text)

    def _log_notices(self) -> None:
        for line in self._handle.take_notices():
            if line.startswith("warning:"):
                log.warning("%s", line[len("warning:"):].strip())
            else:
                log.info("%s", line)

    def __del__(self) -> None:  # a trace never stopped ends with its object
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.running:
            handle.stop()

    def __enter__(self) -> "Trace":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def trace(
    pid: Union[int, Sequence[int], None] = None,
    command: Optional[Sequence[str]] = None,
    catalogs: Optional[Sequence[str]] = None,
    probes: Optional[Sequence[str]] = None,
    config: Optional[str] = None,
    mode: str = "per-call",
    duration: float = 0.0,
    gpus: bool = False,
    python_hz: Optional[int] = 0,
    host_waits: Optional[bool] = False,
    as_numpy: bool = False,
    batch_size: int = 65536,
) -> Trace:
    """Starts tracing and returns the Trace (a context manager that stops it).

    pid: process ids to trace (with their children); command: a command to run and
    trace (the trace ends when it exits); neither: the whole machine. catalogs: built-in
    probe catalogs ("cuda", "cuda_driver", "nccl", "torch", "python"); probes: spec
    names of `config` (a TOML file or text with [[probe]] tables, docs/config.md).
    mode: "per-call" (a record per call) or "always-on" (counts; calls of per-call
    probes only). gpus: sample the GPUs through NVML beside the trace. python_hz:
    Python stack samples per second (None: the config's; 0: none). host_waits: time
    futex and poll waits (None: on, as `eacgm run`). as_numpy: batches are NumPy
    structured arrays (fields of _records.RECORD_FIELDS) instead of lists of dicts.

    Raises UsageError (a bad name, pid, symbol), LaunchError (the command),
    PrivilegeError (not root) or Error, with the agent's message."""
    return Trace(pid=pid, command=command, catalogs=catalogs, probes=probes, config=config, mode=mode,
                 duration=duration, gpus=gpus, python_hz=python_hz, host_waits=host_waits,
                 as_numpy=as_numpy, batch_size=batch_size)
