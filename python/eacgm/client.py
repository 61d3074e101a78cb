"""`eacgm.Client`: a running `eacgm serve`'s JSON API (docs/api.md) from Python, with the
standard library only. Lists come back as pandas DataFrames when pandas is installed
(`frames=False` keeps plain lists of dicts).

    c = eacgm.Client("http://127.0.0.1:9977")
    c.functions()                       # calls, errors, p50/p99 per function
    c.history("functions", since="1h")  # the daemon's history (docs/history.md)
    c.capture(seconds=5)                # a sample of live calls from the stream
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional

from .errors import Error


def _pandas():
    try:
        import pandas
    except ImportError:
        return None
    return pandas


class Client:
    """A client of `eacgm serve` at `url`; `token`: the bearer token (--token-file's)."""

    def __init__(self, url: str = "http://127.0.0.1:9977", token: Optional[str] = None, timeout: float = 10.0,
                 frames: Optional[bool] = None) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.frames = frames

    # -- transport --------------------------------------------------------------------
    def _request(self, path: str, params: Optional[Dict[str, Any]] = None, timeout: Optional[float] = None):
        query = {k: v for k, v in (params or {}).items() if v is not None}
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        req = urllib.request.Request(url)
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            return urllib.request.urlopen(req, timeout=self.timeout if timeout is None else timeout)
        except urllib.error.HTTPError as e:
            body = e.read().decode("utf-8", "replace")
            try:
                message = json.loads(body).get("error", body)
            except (ValueError, AttributeError):
                message = body.strip() or e.reason
            raise Error(f"{url}: {e.code} {message}") from None
        except urllib.error.URLError as e:
            raise Error(f"{url}: {e.reason}") from None

    def get(self, path: str, **params: Any) -> Any:
        """The JSON answer of any route (`/api/v1/...`) as Python objects."""
        with self._request(path, params) as r:
            return json.loads(r.read())

    def _rows(self, rows: List[Dict[str, Any]]) -> Any:
        pd = _pandas() if self.frames is not False else None
        if self.frames and pd is None:
            raise Error("frames=True needs pandas (apt install python3-pandas)")
        return pd.DataFrame(rows) if pd is not None else rows

    # -- the live routes --------------------------------------------------------------
    def processes(self) -> Any:
        """Traced processes and the processes on the GPUs, most calls first."""
        return self._rows(self.get("/api/v1/processes")["processes"])

    def functions(self) -> Any:
        """Per (domain, function): calls, errors, durations (host-side), most time first."""
        return self._rows(self.get("/api/v1/functions")["functions"])

    def kernels(self) -> Any:
        """Kernel launches per kernel name, most launches first."""
        return self._rows(self.get("/api/v1/kernels")["kernels"])

    def gpus(self) -> Any:
        """The latest GPU sampling pass."""
        return self._rows(self.get("/api/v1/gpus")["gpus"])

    def memory(self) -> Any:
        """The memory ledger per (process, CUDA device)."""
        return self._rows(self.get("/api/v1/memory")["processes"])

    def nccl(self) -> Dict[str, Any]:
        return self.get("/api/v1/nccl")

    def anomalies(self) -> Dict[str, Any]:
        return self.get("/api/v1/anomalies")

    def counters(self) -> Dict[str, int]:
        return self.get("/api/v1/counters")["counters"]

    def series(self, window: int = 900) -> Any:
        """Per-second rollups of the last `window` seconds."""
        return self._rows(self.get("/api/v1/series", window=window)["points"])

    def history(self, what: str = "functions", since: Optional[str] = None, frm: Optional[str] = None,
                to: Optional[str] = None, **filters: Any) -> Any:
        """The daemon's history: `what` is processes, functions, kernels, gpus or anomalies;
        the window `since` ("15m", "7d") or `frm`/`to`; filters node=, pid=, comm=."""
        answer = self.get(f"/api/v1/history/{what}", since=since, **{"from": frm}, to=to, **filters)
        key = "points" if what == "gpus" else what
        rows = answer.get(key)
        return self._rows(rows) if isinstance(rows, list) else answer

    def capture(self, seconds: float = 5.0, pid: Optional[int] = None) -> Any:
        """A sample of the live calls for `seconds` (at most 100 a second, the stream's
        `call` events: ts_ns, pid, tid, comm, domain, name, dur_ns, ret)."""
        calls: List[Dict[str, Any]] = []
        end = time.monotonic() + seconds
        with self._request("/api/v1/stream", {"calls": 1, "pid": pid}, timeout=max(seconds, 1.0) + 5) as r:
            event = None
            while time.monotonic() < end:
                line = r.readline()
                if not line:
                    break
                line = line.decode("utf-8", "replace").rstrip("\r\n")
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:") and event == "call":
                    calls.append(json.loads(line[5:]))
        return self._rows(calls)
