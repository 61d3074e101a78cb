"""Which implementation runs underneath: the extension `_eacgm` (built for Debian's
Python 3.11), else, under another Python or with EACGM_BACKEND=cli, the command-line
fallback `_cli` (docs/python.md, "Under another Python")."""
import os

if os.environ.get("EACGM_BACKEND") == "cli":
    from . import _cli as native
else:
    try:
        from . import _eacgm as native
    except ImportError:
        from . import _cli as native

__all__ = ["native"]
