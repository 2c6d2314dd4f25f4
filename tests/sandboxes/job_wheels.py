"""The job environment's wheels (src/rlvr/sandboxes/job-requirements.txt), downloaded on
the host into build/job-wheels, where docker/sandbox.Dockerfile installs them from: the
image builds of the tests then need no network inside containers (CI has none there)."""

from __future__ import annotations

import functools
import subprocess
import sys

from tests.services import ROOT

JOB_WHEELS = ROOT / "build" / "job-wheels"
REQUIREMENTS = ROOT / "src" / "rlvr" / "sandboxes" / "job-requirements.txt"
# The images' Python, whatever the host's: CPython 3.11 on x86_64 with glibc 2.36
# (bookworm), which runs every manylinux tag up to 2_28 the wheels use.
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")
TARGET: tuple[str, ...] = ("--only-binary=:all:", "--python-version", "3.11")
TARGET += ("--implementation", "cp", "--abi", "cp311")
TARGET += tuple(a for p in PLATFORMS for a in ("--platform", p))


@functools.cache
def download() -> None:
    """Once per session; pip keeps what is already there."""
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps"]
    subprocess.run([*pip, *TARGET, "-d", str(JOB_WHEELS), "-r", str(REQUIREMENTS)], cwd=ROOT, check=True)
