"""The embedded local sandbox: a zygote fork-server plus Linux isolation.

`LocalSandbox` and `get_local_sandbox` live in `rlvr.sandboxes.local.sandbox`; they are not
imported here, so the zygote (which imports this package) stays small.
"""
