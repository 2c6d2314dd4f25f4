"""The job environment: the packages programs may use beyond their language's standard
library, kept apart from the service's own, and the versions of the toolchains that
run them.

Python: the pinned packages of `job-requirements.txt` (numpy, pandas, scipy,
sortedcontainers and their dependencies, nothing else), installed with
`pip install --no-deps --target DIR`:
  - host mode: the checkout's `.venv-jobs/python` (`make run` and `make test` build it),
    or the directories RLVR_JOB_PYTHON_PATH names;
  - the Docker images (sandbox and service): /opt/rlvr-jobs/python.
Node: lodash, Debian's `node-lodash` (bookworm: 4.17.21) in /usr/share/nodejs, where
Debian's node looks by default; jobs get it as NODE_PATH too, for a node built elsewhere
(NodeSource's looks elsewhere). RLVR_JOB_NODE_PATH names other directories.

Jobs see these directories read-only, and what is in them is the operator's, not a
program's: the trusted half of a split job may import from them like the program. A
program that imports a module the environment lacks fails as any program that raises
does: score 0, never a mask.

`report` is what /readyz and /v1/verifiers show: each package's version, the pinned ones
missing or at another version, and the versions of python, g++, node and rustc. The
sandbox image and host mode are meant to run the same ones; the report is how a
difference shows. This module uses only the standard library, so that the sandbox image
runs it as a script to report its own (`IMAGE_PROBE`).
"""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

REQUIREMENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "job-requirements.txt")
# Where `make` builds the job environment in a checkout (src/rlvr/sandboxes/ is three
# levels below its root), and where the Docker images install it.
CHECKOUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".venv-jobs")
CHECKOUT_PYTHON_PATH = os.path.normpath(os.path.join(CHECKOUT_DIR, "python"))
IMAGE_PYTHON_PATH = "/opt/rlvr-jobs/python"
# C++ jobs' precompiled headers (`rlvr.sandboxes.runner.pch`), built beside the packages.
CHECKOUT_PCH_PATH = os.path.normpath(os.path.join(CHECKOUT_DIR, "pch"))
IMAGE_PCH_PATH = "/opt/rlvr-jobs/pch"
DEBIAN_NODE_PATH = "/usr/share/nodejs"
NODE_PACKAGES = ("lodash",)
# What the sandbox image runs to report its own environment (see the module's notes).
IMAGE_PROBE = ("python3", "-I", "-S", "/opt/rlvr/rlvr/sandboxes/jobenv.py", "--python-path", IMAGE_PYTHON_PATH)
VERSION_TIMEOUT_S = 10.0
# numpy's and scipy's BLAS start a thread per core on import: past a job's process
# limit on a large host, and each with its own buffers against the job's memory.
# Programs that want threads still start their own.
THREAD_CAPS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# Where jobs' toolchains are looked up: the system's directories, which every job's
# filesystem holds (home directories and the rest of the host's are hidden from jobs).
TOOL_PATH = "/usr/local/bin:/usr/bin:/bin"
# Toolchains by the name each is found under, and the arguments that print its version.
VERSION_ARGS = {
    "g++": ("-dumpfullversion",),
    "node": ("--version",),
    "rustc": ("--version",),
    # The proof verifier's checker and its independent kernel re-check.
    "coqc": ("--version",),
    "coqchk": ("--version",),
}


def default_python_path() -> tuple[str, ...]:
    """Where `make` or the Docker images put the Python packages, where that exists and
    jobs can see it: never under /tmp, which every job's own /tmp covers (a checkout
    there has `make` build it in /opt/rlvr-jobs)."""
    return tuple(d for d in (CHECKOUT_PYTHON_PATH, IMAGE_PYTHON_PATH) if os.path.isdir(d) and not d.startswith("/tmp/"))


def default_pch_path() -> str | None:
    """Where `make` or the service image built the precompiled headers, if anywhere."""
    return next((d for d in (CHECKOUT_PCH_PATH, IMAGE_PCH_PATH) if os.path.isdir(d)), None)


def default_node_path() -> tuple[str, ...]:
    return (DEBIAN_NODE_PATH,) if os.path.isdir(DEBIAN_NODE_PATH) else ()


def parse_path(value: str | None) -> tuple[str, ...] | None:
    """An `os.pathsep`-separated list of directories (a setting's value, like
    PYTHONPATH); None when not set, so the default applies; empty for none at all."""
    if value is None:
        return None
    return tuple(os.path.abspath(d) for d in value.split(os.pathsep) if d)


@dataclass(frozen=True, slots=True)
class JobEnvironment:
    """`python_path`: directories on programs' import path (after the standard
    library); `node_path`: directories node resolves `require` from (NODE_PATH);
    `pch_path`: C++ jobs' precompiled headers, or None."""

    python_path: tuple[str, ...] = field(default_factory=default_python_path)
    node_path: tuple[str, ...] = field(default_factory=default_node_path)
    pch_path: str | None = field(default_factory=default_pch_path)

    @classmethod
    def from_settings(cls, python_path: str | None, node_path: str | None) -> JobEnvironment:
        python, node = parse_path(python_path), parse_path(node_path)
        return cls(
            python_path=default_python_path() if python is None else python,
            node_path=default_node_path() if node is None else node,
        )

    def environ(self) -> dict[str, str]:
        """What jobs' environment must hold for this environment."""
        node = {"NODE_PATH": os.pathsep.join(self.node_path)} if self.node_path else {}
        return THREAD_CAPS | node


def pinned(path: str = REQUIREMENTS) -> dict[str, str]:
    """The requirements file's packages and versions (`name==version` lines)."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return {}
    found: dict[str, str] = {}
    for line in lines:
        name, sep, version = line.split("#", 1)[0].strip().partition("==")
        if sep:
            found[_canonical(name)] = version.strip()
    return found


def _canonical(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def python_packages(dirs: tuple[str, ...]) -> dict[str, str]:
    """The distributions installed in `dirs`, by canonical name."""
    found: dict[str, str] = {}
    for dist in metadata.distributions(path=list(dirs)):
        name = dist.metadata["Name"]
        if name:
            found.setdefault(_canonical(name), dist.version)
    return dict(sorted(found.items()))


def node_packages(dirs: tuple[str, ...], names: tuple[str, ...] = NODE_PACKAGES) -> dict[str, str]:
    """The version of each of `names` that node finds first in `dirs`."""
    found: dict[str, str] = {}
    for name in names:
        for dir_ in dirs:
            try:
                with open(os.path.join(dir_, name, "package.json")) as f:
                    found[name] = str(json.load(f)["version"])
                break
            except (OSError, ValueError, KeyError, TypeError):
                continue
    return found


def tool_version(path: str | None, args: tuple[str, ...]) -> str | None:
    """The version `path` prints (its first line, without a `v` or a name before it)."""
    if path is None:
        return None
    try:
        out = subprocess.run([path, *args], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    words = (out.stdout.strip().splitlines() or [""])[0].split()
    version = next((w for w in words if w[:1].isdigit() or (w[:1] == "v" and w[1:2].isdigit())), None)
    return version[1:] if version and version[0] == "v" else version


def host_tools() -> dict[str, str | None]:
    """The toolchains jobs run in host mode: found on `TOOL_PATH`, as the compile
    verifier finds them, never in a directory jobs cannot see (a rustup toolchain in a
    home directory)."""
    return {name: shutil.which(name, path=TOOL_PATH) for name in VERSION_ARGS}


def toolchains(tools: dict[str, str | None]) -> dict[str, dict[str, str | None]]:
    """Each toolchain's path and version (None where it is not installed); python is the
    running interpreter, which is the one jobs run."""
    report: dict[str, dict[str, str | None]] = {
        "python": {"path": sys.executable, "version": platform.python_version()}
    }
    for name, args in VERSION_ARGS.items():
        path = tools.get(name)
        report[name] = {"path": path, "version": tool_version(path, args)}
    return report


def missing(env: JobEnvironment, python: dict[str, str], node: dict[str, str]) -> list[str]:
    """The pinned packages that are absent or at another version, as `name==pinned`."""
    wrong = [f"{name}=={version}" for name, version in pinned().items() if python.get(name) != version]
    return wrong + [name for name in NODE_PACKAGES if name not in node]


@functools.cache
def report(env: JobEnvironment, tools: tuple[tuple[str, str | None], ...] | None = None) -> dict[str, Any]:
    """What /readyz and /v1/verifiers show of the job environment (`tools`: the
    toolchains' paths by name, default `host_tools`). Cached: the environment and the
    toolchains change only with a restart."""
    python, node = python_packages(env.python_path), node_packages(env.node_path)
    return {
        "python_path": list(env.python_path),
        "node_path": list(env.node_path),
        "python_packages": python,
        "node_packages": node,
        "missing": missing(env, python, node),
        "toolchains": toolchains(dict(tools) if tools is not None else host_tools()),
    }


def main(argv: list[str]) -> int:
    """`--python-path DIRS --node-path DIRS`: the report as JSON (run in the image)."""
    options = dict(zip(argv[::2], argv[1::2], strict=False))
    env = JobEnvironment.from_settings(options.get("--python-path"), options.get("--node-path"))
    print(json.dumps(report(env)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
