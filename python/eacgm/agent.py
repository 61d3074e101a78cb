"""The node agent in this Python process: `eacgm.serve()` starts what `eacgm serve` runs
(every process on the machine traced, the GPUs sampled, /metrics and the JSON API on a
loopback port) on a thread of its own, with one call; `Agent.client()` reads it."""
import json
from typing import Any, Dict, Optional, Sequence

from ._backend import native as _native


class Agent:
    """A running node agent. Made by `serve()`; a context manager that stops it."""

    def __init__(
        self,
        config: Optional[str] = None,
        listen: str = "127.0.0.1:0",
        store: Optional[str] = "off",
        probes: Optional[Sequence[str]] = None,
        mode: Optional[str] = None,
        gpus: bool = True,
    ) -> None:
        self._handle = _native.NodeAgent(config or "", listen, store, list(probes or []), mode or "", bool(gpus))

    @property
    def url(self) -> str:
        """Where it serves: http://HOST:PORT (the port the system picked for port 0)."""
        return self._handle.url

    @property
    def last_notice(self) -> str:
        """The agent's last notice (a warning, a reload), or ""."""
        return self._handle.last_notice

    def client(self, **kwargs: Any) -> Any:
        """An eacgm.Client on this agent's API."""
        from .client import Client

        return Client(self.url, **kwargs)

    def report(self) -> Dict[str, Any]:
        """The `eacgm run --json` document of its latest snapshot ({} before the first)."""
        text = self._handle.report_json()
        return json.loads(text) if text else {}

    def stop(self) -> None:
        """Detaches the probes, writes the history's last interval and stops serving."""
        self._handle.stop()

    def __enter__(self) -> "Agent":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def serve(*args: Any, **kwargs: Any) -> Agent:
    """Starts the node agent in this process and returns once its probes are attached.

    Agent(config=None, listen="127.0.0.1:0", store="off", probes=None, mode=None,
    gpus=True). config: a TOML file (docs/config.md; None: the embedded defaults).
    listen: HOST:PORT (port 0: the system picks; not loopback needs [serve] token_file).
    store: where to keep the history, as `eacgm serve --store` ("off", the default here:
    none; None: the config's [store] url). probes: catalogs or probe names (None: the
    config's). mode: "always-on" (the default) or "per-call". gpus: sample the GPUs."""
    return Agent(*args, **kwargs)


__all__ = ["Agent", "serve"]
