"""`compile` verifier throughput against its anchor, `g++ -fsyntax-only` per file.

    .venv/bin/python -m bench.compile [--rounds 5]

Both sides take the same C++ programs one at a time. The verifier's item is a full
compilation to an object file (`-c`) in the sandbox, with its caps; the anchor only
parses and type-checks, unsandboxed, so it is the floor a compile check can reach.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.compile import CompileParams, CompileVerifier

PROGRAMS = [
    "#include <cstdio>\nint main() { std::puts(\"hello\"); }\n",
    "#include <vector>\n#include <algorithm>\nint main() {\n  std::vector<int> v{3, 1, 2};\n"
    "  std::sort(v.begin(), v.end());\n  return v[0];\n}\n",
    "#include <iostream>\n#include <map>\n#include <string>\nint main() {\n  std::map<std::string, int> m;\n"
    "  std::string w;\n  while (std::cin >> w) ++m[w];\n"
    "  for (auto& [k, n] : m) std::cout << k << ' ' << n << '\\n';\n}\n",
    "int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }\nint main() { return gcd(12, 18) == 6 ? 0 : 1; }\n",
]
FLAGS = ["-std=c++17", "-O0"]


def anchor(rounds: int) -> float:
    gxx = shutil.which("g++")
    assert gxx is not None, "g++ is not installed"
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for index, program in enumerate(PROGRAMS):
            path = Path(folder) / f"p{index}.cpp"
            path.write_text(program)
            files.append(path)
        started = time.perf_counter()
        for _ in range(rounds):
            for path in files:
                subprocess.run([gxx, *FLAGS, "-fsyntax-only", str(path)], check=True, capture_output=True)
        return rounds * len(files) / (time.perf_counter() - started)


def verifier(rounds: int) -> tuple[float, int]:
    checker = CompileVerifier()
    params = CompileParams(language="cpp", flags=FLAGS)
    checker.verify(GradeInput("", PROGRAMS[0]), params, None)  # start the sandbox untimed
    correct = 0
    started = time.perf_counter()
    for _ in range(rounds):
        for program in PROGRAMS:
            correct += checker.verify(GradeInput("", program), params, None).score == 1.0
    return rounds * len(PROGRAMS) / (time.perf_counter() - started), correct


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    base = anchor(args.rounds)
    rate, correct = verifier(args.rounds)
    total = args.rounds * len(PROGRAMS)
    print(f"g++ -fsyntax-only (anchor):   {base:8.2f} files/s")
    ratio = rate / base
    print(f"compile verifier, sandboxed:  {rate:8.2f} items/s  ({ratio:.2f}x the anchor; {correct}/{total} correct)")


if __name__ == "__main__":
    main()
