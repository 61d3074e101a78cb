"""The exceptions eacgm raises. Each carries the agent's one-line message."""

from ._eacgm import Error, LaunchError, PrivilegeError, UsageError


class BPFTextError(UsageError):
    """BPF text the compatible layer does not understand (the message names the line)."""


class NVMLError(Error):
    """NVML could not be loaded or asked (no NVIDIA driver on this machine)."""


__all__ = ["Error", "UsageError", "LaunchError", "PrivilegeError", "BPFTextError", "NVMLError"]
