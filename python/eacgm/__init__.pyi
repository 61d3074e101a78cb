"""Type stubs of the eacgm package's top level."""
from typing import Any, Dict, List, Optional, Sequence, Union

from .agent import Agent as Agent
from .client import Client as Client
from .errors import BPFTextError as BPFTextError
from .errors import Error as Error
from .errors import LaunchError as LaunchError
from .errors import NVMLError as NVMLError
from .errors import PrivilegeError as PrivilegeError
from .errors import UsageError as UsageError
from .tracing import Trace as Trace

__version__: str

def trace(pid: Union[int, Sequence[int], None] = ..., command: Optional[Sequence[str]] = ...,
          catalogs: Optional[Sequence[str]] = ..., probes: Optional[Sequence[str]] = ...,
          config: Optional[str] = ..., mode: str = ..., duration: float = ..., gpus: bool = ...,
          python_hz: Optional[int] = ..., host_waits: Optional[bool] = ..., as_numpy: bool = ...,
          batch_size: int = ...) -> Trace: ...
def read_trace(path: str, frame: bool = ...) -> Any: ...
def serve(config: Optional[str] = ..., listen: str = ..., store: Optional[str] = ...,
          probes: Optional[Sequence[str]] = ..., mode: Optional[str] = ..., gpus: bool = ...) -> Agent: ...
