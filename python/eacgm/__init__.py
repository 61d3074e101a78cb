"""eACGM from Python.

The Pythonic API: `eacgm.trace()` (calls in batches, the `run --json` report),
`eacgm.serve()` (the node agent in this process), `eacgm.Client` (a running agent's API)
and `eacgm.read_trace()` (JSON Lines and Perfetto files). The original eACGM's API lives on in `eacgm.bpf`, `eacgm.sampler`
and `eacgm.collector`, with this agent underneath (docs/python.md).
"""

from ._backend import native as _native

__version__ = _native.version
from .errors import BPFTextError, Error, LaunchError, NVMLError, PrivilegeError, UsageError
from .agent import Agent, serve
from .tracing import Trace, trace

__all__ = [
    "trace", "Trace", "serve", "Agent", "Error", "UsageError", "LaunchError", "PrivilegeError", "BPFTextError", "NVMLError",
    "__version__",
]


def __getattr__(name):  # the parts that need nothing native load on first use
    if name == "Client":
        from .client import Client

        return Client
    if name == "read_trace":
        from .trace_file import read_trace

        return read_trace
    raise AttributeError(f"module 'eacgm' has no attribute {name!r}")
