"""The exceptions eacgm raises. Each carries the agent's one-line message."""

from ._eacgm import Error, LaunchError, NVMLError, PrivilegeError, UsageError


class BPFTextError(UsageError):
    """BPF text the compatible layer does not understand (the message names the line)."""


__all__ = ["Error", "UsageError", "LaunchError", "PrivilegeError", "BPFTextError", "NVMLError"]
