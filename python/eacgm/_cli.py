"""The fallback under a Python the extension was not built for: the same interface as
`_eacgm` (Trace, NodeAgent, Gpus, the exceptions), run through the `eacgm` command line
(`eacgm trace` for the calls as JSON Lines, `eacgm serve` for the node agent, `eacgm gpu
--json` for NVML). Chosen when `_eacgm`
does not import, or with EACGM_BACKEND=cli; the binary is $EACGM_BIN, else the build's
`eacgm` beside build/python, else `eacgm` on PATH. `report()` needs the extension."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from typing import Any, Deque, Dict, List, Optional

version = "cli"
record_size = 120


class Error(RuntimeError):
    """A trace failed (BPF, attach, the system)."""


class UsageError(Error, ValueError):
    """The request is wrong: a probe name, a pid, a symbol, BPF text."""


class LaunchError(Error):
    """The command to trace could not be started."""


class PrivilegeError(Error, PermissionError):
    """Tracing needs root (or CAP_BPF and CAP_PERFMON)."""


class NVMLError(Error):
    """NVML could not be loaded (no NVIDIA driver here)."""


def binary() -> str:
    env = os.environ.get("EACGM_BIN")
    if env:
        return env
    beside = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "eacgm")
    if os.access(beside, os.X_OK):
        return os.path.normpath(beside)
    found = shutil.which("eacgm")
    if not found:
        raise Error("no eacgm binary: set EACGM_BIN (this Python has no eacgm extension)")
    return found


def _error_for(code: int, message: str) -> Error:
    if "needs root" in message:
        return PrivilegeError(message)
    if code == 2:
        return UsageError(message)
    if code == 127:
        return LaunchError(message)
    return Error(message)


def _int(v: Any) -> Any:
    if isinstance(v, str) and v.startswith(("0x", "-0x")):
        return int(v, 16)
    return v


_RECORD = struct.Struct("<QQIIIBBBBq8Q16s")


class Trace:
    def __init__(self, config_text: str, probes: List[str], pids: List[int], command: List[str], mode: str,
                 duration_s: float, sample_gpus: bool, python_hz: Optional[int], host_waits: Optional[bool],
                 capacity: int) -> None:
        self._config = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
        self._config.write(config_text)
        self._config.close()
        argv = [binary(), "--config", self._config.name, "trace", "--mode", mode or "per-call"]
        if probes:
            argv += ["--probes", ",".join(probes)]
        for p in pids:
            argv += ["--pid", str(p)]
        if duration_s:
            argv += ["--duration", str(duration_s)]
        if not sample_gpus:
            argv.append("--no-gpu")
        if python_hz:
            argv += ["--python-hz", str(python_hz)]
        if command:
            argv += ["--"] + list(command)
        self._capacity = capacity
        self._queue: Deque[Dict[str, Any]] = deque()
        self._cv = threading.Condition()
        self._notices: List[str] = []
        self._probes: List[Dict[str, Any]] = []
        self._index: Dict[str, int] = {}
        self._dropped = 0
        self._ready = threading.Event()
        self._command_pid = -1
        self._proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                      text=True, start_new_session=True)
        self._err = threading.Thread(target=self._read_stderr, daemon=True)
        self._out = threading.Thread(target=self._read_stdout, daemon=True)
        self._err.start()
        self._out.start()
        while not self._ready.wait(0.05):
            if self._proc.poll() is not None:
                self._err.join()
                lines = [n for n in self._notices if n]
                message = lines[-1] if lines else f"eacgm exited with {self._proc.returncode}"
                raise _error_for(self._proc.returncode, message)

    def _read_stderr(self) -> None:
        for line in self._proc.stderr:
            line = line.rstrip("\n")
            if line.startswith("eacgm: "):
                line = line[len("eacgm: "):]
            with self._cv:
                self._notices.append(line)
            m = re.match(r"tracing (?:pid (\d+) )?.*ready in \d+ ms", line)  # the agent's ready line
            if m:
                if m.group(1):
                    self._command_pid = int(m.group(1))
                self._ready.set()

    def _read_stdout(self) -> None:
        for line in self._proc.stdout:
            e = json.loads(line)
            if e.get("domain") == "gpu":
                continue
            call = {"function": e["name"], "domain": e["domain"], "pid": e["pid"], "tid": e["tid"],
                    "comm": e["comm"], "ts_ns": e["ts_ns"], "dur_ns": e.get("dur_ns"), "ret": _int(e.get("ret")),
                    "nested": bool(e.get("nested")), "args": {k: _int(v) for k, v in e.get("args", {}).items()}}
            with self._cv:
                if call["function"] not in self._index:
                    self._index[call["function"]] = len(self._probes)
                    self._probes.append({"function": call["function"], "domain": call["domain"], "symbol": "",
                                         "library": "", "args": list(call["args"])})
                if len(self._queue) >= self._capacity:
                    self._dropped += 1
                else:
                    self._queue.append(call)
                self._cv.notify_all()
        with self._cv:
            self._cv.notify_all()

    def _drained(self) -> bool:
        return not self._queue and not self._out.is_alive()

    def take_dicts(self, max: int, timeout_s: float) -> List[Dict[str, Any]]:
        deadline = None if timeout_s < 0 else time.monotonic() + timeout_s
        with self._cv:
            while not self._queue and self._out.is_alive():
                left = 0.05 if deadline is None else min(0.05, deadline - time.monotonic())
                if left <= 0:
                    break
                self._cv.wait(left)
            n = min(max, len(self._queue))
            return [self._queue.popleft() for _ in range(n)]

    def take_records(self, max: int, timeout_s: float) -> bytes:
        out = bytearray()
        for c in self.take_dicts(max, timeout_s):
            args = [v if isinstance(v, int) else 0 for v in c["args"].values()][:8]
            out += _RECORD.pack(c["ts_ns"], c["dur_ns"] or 0, c["pid"], c["tid"], self._index[c["function"]],
                                len(args), c["nested"], c["dur_ns"] is not None, 0,
                                c["ret"] if isinstance(c["ret"], int) else 0,
                                *(args + [0] * (8 - len(args))), c["comm"].encode()[:16])
        return bytes(out)

    def probes(self) -> List[Dict[str, Any]]:
        with self._cv:
            return list(self._probes)

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGINT)
        self._finish()

    def wait(self, timeout_s: float = -1.0) -> bool:
        try:
            self._proc.wait(None if timeout_s < 0 else timeout_s)
        except subprocess.TimeoutExpired:
            return False
        self._finish()
        return True

    def _finish(self) -> None:
        self._proc.wait()
        self._out.join()
        self._err.join()
        try:
            os.unlink(self._config.name)
        except FileNotFoundError:
            pass

    @property
    def running(self) -> bool:
        return self._proc.poll() is None or self._out.is_alive()

    @property
    def exit_code(self) -> int:
        return -1 if self.running else self._proc.returncode

    @property
    def command_pid(self) -> int:
        return self._command_pid

    @property
    def dropped(self) -> int:
        return self._dropped

    def report_json(self) -> str:
        raise Error("report() needs the eacgm extension for this Python (it is built for Debian's 3.11)")

    def take_notices(self) -> List[str]:
        with self._cv:
            out, self._notices = self._notices, []
        return [n for n in out if not n.startswith("tracing")] + [n for n in out if n.startswith("tracing")]


class NodeAgent:
    """`eacgm serve` as a child process; ready once its /readyz answers (probes attached)."""

    def __init__(self, config_path: str, listen: str, store: Optional[str], probes: List[str], mode: str,
                 sample_gpus: bool) -> None:
        argv = [binary()] + (["--config", config_path] if config_path else []) + ["serve", "--listen", listen]
        if store is not None:
            argv += ["--store", store]
        if probes:
            argv += ["--probes", ",".join(probes)]
        if mode:
            argv += ["--mode", mode]
        if not sample_gpus:
            argv.append("--no-gpu")
        self._notices: List[str] = []
        self._url = ""
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      stdin=subprocess.DEVNULL, text=True, start_new_session=True)
        self._err = threading.Thread(target=self._read_stderr, daemon=True)
        self._err.start()
        deadline = time.monotonic() + 60
        while not self._ready():
            if self._proc.poll() is not None:
                self._err.join()
                lines = [n for n in self._notices if n]
                message = lines[-1] if lines else f"eacgm exited with {self._proc.returncode}"
                raise _error_for(self._proc.returncode, message)
            if time.monotonic() > deadline:
                self.stop()
                raise Error("eacgm serve was not ready within 60 s")
            time.sleep(0.05)

    def _read_stderr(self) -> None:
        for line in self._proc.stderr:
            line = line.rstrip("\n")
            if line.startswith("eacgm: "):
                line = line[len("eacgm: "):]
            m = re.match(r"serving on (http://\S+) ", line)
            with self._lock:
                self._notices.append(line)
                if m:
                    self._url = m.group(1)

    def _ready(self) -> bool:
        with self._lock:
            url = self._url
        if not url:
            return False
        try:
            with urllib.request.urlopen(url + "/readyz", timeout=1) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError):
            return False

    @property
    def url(self) -> str:
        return self._url

    @property
    def port(self) -> int:
        return int(self._url.rsplit(":", 1)[1])

    @property
    def last_notice(self) -> str:
        with self._lock:
            return self._notices[-1] if self._notices else ""

    def report_json(self) -> str:
        raise Error("report() needs the eacgm extension for this Python (it is built for Debian's 3.11)")

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
        self._proc.wait()
        self._err.join()


class Gpus:
    def __init__(self, first_window_s: float = 1.0) -> None:
        self._first = True
        self._pass()

    def _pass(self) -> Dict[str, Any]:
        r = subprocess.run([binary(), "gpu", "--json", "--processes"], capture_output=True, text=True)
        if r.returncode != 0:
            raise NVMLError((r.stderr.strip().splitlines() or ["eacgm gpu failed"])[-1].replace("eacgm: ", ""))
        return json.loads(r.stdout)

    def devices(self) -> List[Dict[str, Any]]:
        return self._pass()["gpus"]

    def processes(self) -> List[Dict[str, Any]]:
        return [dict(p, gpu_index=p["gpu"]) for p in self._pass()["processes"]]
