"""The embedded local sandbox: a zygote fork-server plus Linux isolation."""

from sandboxes.local.client import LocalSandbox, get_local_sandbox

__all__ = ["LocalSandbox", "get_local_sandbox"]
