"""Precompiled standard headers for C++ jobs, one set per language standard they
compile with, built once per toolchain (`make job-env`, the images) and read-only to
jobs.

Judges' programs open with `#include <bits/stdc++.h>` or `<iostream>`, and parsing it
is most of what compiling one costs (at -O2 here: 1.5 s of 1.9 s for the first, 0.3 s of
0.55 s for the second). g++ looks for `NAME.gch` in each include directory before
`NAME`, and uses it for the first include of a file only, and only when it was built
with the same standard, optimisation and macros as the job; otherwise it reads the
header as always. Each PCH is its header alone, so a program compiles to what it did
without it: a job adds `-I <dir>/<std>` and nothing else changes. Beside each PCH is
a stub of its header that passes on to the real one (`_write_stub`). Jobs see the
directory at `JOB_DIR` (the local sandbox binds the host's there; the sandbox image
builds it there).

Run as a script (standard library only, as the images run it):

    python3 -m rlvr.sandboxes.runner.pch DIR [G++]
"""

from __future__ import annotations

import os
import sys

# Where jobs find the precompiled headers.
JOB_DIR = "/pch"
# The headers programs most often include first.
HEADERS = ("bits/stdc++.h", "iostream", "cstdio", "vector")
# The flags a C++ job compiles with, which its PCH must be built with too.
OPTIMIZE = "-O2"
STANDARDS = ("c++17", "c++20")
BUILD_TIMEOUT_S = 300


def compile_argv(gxx: str, std: str, source: str, output: str, root: str = JOB_DIR) -> list[str]:
    """How a job compiles `source`: at the PCHs' optimisation, with the include
    directory holding those for `std` where they were built."""
    directory = os.path.join(root, std)
    include = ["-I", directory] if os.path.isdir(directory) else []
    return [gxx, OPTIMIZE, f"-std={std}", *include, "-pipe", "-o", output, source]


def build(target: str, gxx: str = "g++") -> None:
    """Build the PCH of every header for every standard in `target`, each replaced
    whole (a job never reads half of one)."""
    # Here, not at the top: the zygote imports this module, and every job's fork would
    # copy what these import.
    import subprocess
    import tempfile

    for std in STANDARDS:
        for header in HEADERS:
            out = os.path.join(target, std, header + ".gch")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with tempfile.TemporaryDirectory(dir=target) as scratch:
                # The header through a file of its own: g++ finds it on its own search path.
                source = os.path.join(scratch, "first.h")
                with open(source, "w") as f:
                    f.write(f"#include <{header}>\n")
                built = source + ".gch"
                argv = [gxx, OPTIMIZE, f"-std={std}", "-x", "c++-header", source, "-o", built]
                subprocess.run(argv, check=True, timeout=BUILD_TIMEOUT_S)
                os.chmod(built, 0o644)
                os.replace(built, out)
            _write_stub(os.path.join(target, std), header)


def _write_stub(directory: str, header: str) -> None:
    """The header itself beside its PCH, passing on to the real one. g++ takes the
    file a PCH replaced to be this path: a second include of the same header
    (`<cstdio>`, then `<iostream>`, which includes it again) opens it, and finds the
    real header's include guard defined. Where the PCH does not fit the job's flags,
    the first include reads the real header through it."""
    with open(os.path.join(directory, header), "w") as f:
        f.write(f"#include_next <{header}>\n")
    os.chmod(os.path.join(directory, header), 0o644)


if __name__ == "__main__":
    build(sys.argv[1], *sys.argv[2:3])
