"""A client-side stand-in for SandboxFusion's `sandbox` package: only the names its
vendored tests (`sandbox/tests/`) import, so that they run unmodified against rlvr.
The wire types are SandboxFusion's own; the app and the sandbox client send every
request over HTTP to the rlvr server at `rlvr.url()` (see `conftest.py`)."""
