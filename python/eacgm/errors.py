"""The exceptions eacgm raises. Each carries the agent's one-line message."""

from ._backend import native

Error = native.Error
LaunchError = native.LaunchError
NVMLError = native.NVMLError
PrivilegeError = native.PrivilegeError
UsageError = native.UsageError


class BPFTextError(UsageError):
    """BPF text the compatible layer does not understand (the message names the line)."""


__all__ = ["Error", "UsageError", "LaunchError", "PrivilegeError", "BPFTextError", "NVMLError"]
