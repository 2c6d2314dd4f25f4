"""Tool sessions (`/v1/sessions`) through a real `rlvr serve`, against their anchors in
one run: what a multi-turn rollout pays for a Python tool with state.

    python -m bench.sessions [--calls 500] [--creates 200] [--idle 1000] [--trajectories 3]

- **create**: `POST /v1/sessions`, beside a fresh interpreter (`python -c pass`), what
  a tool that starts a process per rollout pays at least.
- **trivial call**: `POST /v1/sessions/{id}/run` of `pass`; its overhead is the round
  trip less the call's own time. Beside it, a stateless `POST /run_code` of the same.
- **20-turn trajectory**: tool-integrated reasoning's cells, each building on the
  last, in one session; against re-executing the whole history each turn in a fresh
  `python -c` (verl-tool's approach: no isolation, the cheapest form of it) and through
  a stateless `/run_code` (SandboxFusion's API, isolated as sessions are). Two
  trajectories: one that imports numpy in its first cell, as most do, and one that
  uses only the standard library.
- **idle sessions**: how many are alive at once, and the host memory each takes.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import httpx

from bench.run_code import ROOT, _start, _stop

NUMPY_TRAJECTORY = [
    "import numpy as np\nfrom fractions import Fraction",
    "a = np.arange(1, 101)\ns = int(a.sum())\ns",
    "def partial(n):\n    return sum(Fraction(1, k * (k + 1)) for k in range(1, n + 1))",
    "partial(10)",
    "vals = [partial(n) for n in range(1, 30)]\nvals[-1]",
    "m = np.array([[2, 1], [1, 3]])\nnp.linalg.det(m)",
    "ev = np.linalg.eigvalsh(m)\nev.round(6).tolist()",
    "primes = [p for p in range(2, 2000) if all(p % d for d in range(2, int(p ** 0.5) + 1))]\nlen(primes)",
    "sum(primes[:50])",
    "from itertools import combinations\ncount = sum(1 for c in combinations(range(12), 4) if sum(c) % 3 == 0)\ncount",
    "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\nfib(90)",
    "x = np.linspace(0, 1, 1001)\nfloat(np.trapezoid(x ** 2, x))",
    "print('checking', s, count)",
    "import math\nmath.comb(30, 12) % 1000",
    "table = {n: fib(n) % 7 for n in range(40)}\nmax(table.values())",
    "period = next(p for p in range(1, 40) if all(fib(i) % 7 == fib(i + p) % 7 for i in range(10)))\nperiod",
    "answer = (s + count + period) % 1000\nanswer",
    "assert answer == (s + count + period) % 1000",
    "print(f'final: {answer}')",
    "answer",
]
# The same cells with the standard library in numpy's place.
STDLIB_CELLS = {
    0: "from fractions import Fraction",
    1: "a = range(1, 101)\ns = sum(a)\ns",
    5: "m = [[2, 1], [1, 3]]\nm[0][0] * m[1][1] - m[0][1] * m[1][0]",
    6: "tr, det = 5, 5\nroot = (tr * tr - 4 * det) ** 0.5\n[round((tr - root) / 2, 6), round((tr + root) / 2, 6)]",
    11: "xs = [i / 1000 for i in range(1001)]\nsum((xs[i] ** 2 + xs[i + 1] ** 2) / 2 * 0.001 for i in range(1000))",
}
STDLIB_TRAJECTORY = [STDLIB_CELLS.get(i, cell) for i, cell in enumerate(NUMPY_TRAJECTORY)]


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def fresh_interpreter_ms(n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return median_ms(times)


def creates(http: httpx.Client, n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        r = http.post("/v1/sessions", json={})
        times.append(time.perf_counter() - start)
        http.delete(f"/v1/sessions/{r.json()['id']}")
    return median_ms(times)


def trivial_calls(http: httpx.Client, n: int) -> tuple[float, float]:
    """The median round trip and the median overhead (round trip less the call's time)."""
    session = http.post("/v1/sessions", json={}).json()["id"]
    trips, overheads = [], []
    for _ in range(n):
        start = time.perf_counter()
        body = http.post(f"/v1/sessions/{session}/run", json={"code": "pass"}).json()
        trip = time.perf_counter() - start
        trips.append(trip)
        overheads.append(trip - body["execution_time"])
    http.delete(f"/v1/sessions/{session}")
    return median_ms(trips), median_ms(overheads)


def run_code_calls(http: httpx.Client, n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        body = http.post("/run_code", json={"code": "pass", "language": "python"}).json()
        times.append(time.perf_counter() - start)
        if body["status"] != "Success":
            raise RuntimeError(body)
    return median_ms(times)


def in_session(http: httpx.Client, cells: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    session = http.post("/v1/sessions", json={}).json()["id"]
    last = ""
    for cell in cells:
        body = http.post(f"/v1/sessions/{session}/run", json={"code": cell}).json()
        if body["status"] != "ok":
            raise RuntimeError(body)
        last = body["value"] or body["stdout"]
    http.delete(f"/v1/sessions/{session}")
    return time.perf_counter() - start, last


def replayed_locally(cells: list[str]) -> float:
    start = time.perf_counter()
    for turn in range(1, len(cells) + 1):
        subprocess.run([sys.executable, "-c", "\n".join(cells[:turn])], check=True, capture_output=True)
    return time.perf_counter() - start


def replayed_run_code(http: httpx.Client, cells: list[str]) -> float:
    start = time.perf_counter()
    for turn in range(1, len(cells) + 1):
        body = http.post("/run_code", json={"code": "\n".join(cells[:turn]), "language": "python"}).json()
        if body["status"] != "Success":
            raise RuntimeError(body)
    return time.perf_counter() - start


def best(n: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(n))


def idle_sessions(http: httpx.Client, n: int) -> tuple[float, float, int]:
    """(seconds to open `n`, host MB per session, how many answered a call after)."""
    before = available_mb()
    start = time.perf_counter()
    ids = []
    for _ in range(n):
        r = http.post("/v1/sessions", json={"tag": "bench-idle/"})
        r.raise_for_status()
        ids.append(r.json()["id"])
    took = time.perf_counter() - start
    time.sleep(1.0)
    per_session = (before - available_mb()) / n
    alive = sum(http.post(f"/v1/sessions/{s}/run", json={"code": "1"}).status_code == 200 for s in ids)
    http.request("DELETE", "/v1/sessions", params={"prefix": "bench-idle/"})
    return took, per_session, alive


def available_mb() -> float:
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no MemAvailable")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--creates", type=int, default=200)
    ap.add_argument("--idle", type=int, default=1000)
    ap.add_argument("--trajectories", type=int, default=3)
    args = ap.parse_args()
    command = [sys.executable, "-m", "rlvr", "serve", "--workers", "1", "--max-sessions", str(args.idle + 16)]
    server, port = _start(command, ROOT, {"RLVR_LOG_LEVEL": "warning", "PATH": "/usr/bin:/bin"})
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as http:
            report(http, args)
    finally:
        _stop(server)


def report(http: httpx.Client, args: argparse.Namespace) -> None:
    creates(http, 10)
    fresh = fresh_interpreter_ms(50)
    create = creates(http, args.creates)
    trivial_calls(http, 50)
    trip, overhead = trivial_calls(http, args.calls)
    run_code_calls(http, 20)
    stateless = run_code_calls(http, min(args.calls, 200))
    print(f"{'figure':<58}{'rlvr':>10}{'anchor':>10}{'ratio':>8}")
    print(f"{'create a session, ms (anchor: python -c pass)':<58}{create:>10.2f}{fresh:>10.2f}{fresh / create:>8.1f}")
    row = "trivial call round trip, ms (anchor: /run_code of pass)"
    print(f"{row:<58}{trip:>10.2f}{stateless:>10.2f}{stateless / trip:>8.1f}")
    print(f"{'  of which overhead past the call itself, ms':<58}{overhead:>10.2f}")
    for name, cells in (("numpy", NUMPY_TRAJECTORY), ("stdlib", STDLIB_TRAJECTORY)):
        ours = best(args.trajectories, lambda cells=cells: in_session(http, cells)[0])
        local = best(args.trajectories, lambda cells=cells: replayed_locally(cells))
        remote = best(args.trajectories, lambda cells=cells: replayed_run_code(http, cells))
        label = f"{len(cells)}-turn trajectory ({name}), s"
        print(f"{label + ' vs re-executing in python -c':<58}{ours:>10.3f}{local:>10.3f}{local / ours:>8.1f}")
        print(f"{label + ' vs re-executing via /run_code':<58}{ours:>10.3f}{remote:>10.3f}{remote / ours:>8.1f}")
    took, per_session, alive = idle_sessions(http, args.idle)
    print(f"idle sessions: {args.idle} opened in {took:.1f} s, {alive} answered a call after")
    print(f"host memory per idle session: {per_session:.2f} MB")


if __name__ == "__main__":
    main()
