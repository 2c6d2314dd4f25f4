"""The Docker backend: one hardened, throw-away container per job (`RLVR_SANDBOX=docker`).

`sandbox.DockerSandbox` is the host side (pool, janitor, one job per container, the
result read off the container's attach stream); `inside` is the container's command,
which takes one job on stdin and runs the ordinary runner (`rlvr.sandboxes.runner`).
`protocol` is what the two say to each other. Modules here import `docker` only on the
host side, so the sandbox image needs nothing but the standard library.
"""
