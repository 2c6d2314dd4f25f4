"""Bounded mixed soak: a real `rlvr serve` on loopback under mixed and hostile batches,
with worker kills and stops, for a few minutes at most.

Prints the trends that show a leak (memory, open fds and processes of the server and
its children, sampled through the run), p50/p99 latency per batch size, and at the end
how long the SIGTERM drain took and whether anything outlived the server.

    python -m bench.soak [--duration 120] [--clients 4] [--workers 2]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from tests.services import free_port, wait_ready

ROOT = Path(__file__).resolve().parents[1]
MAX_DURATION_S = 600
BATCH_SIZES = (1, 8, 64, 512)
SAMPLE_EVERY_S = 5.0
CHAOS_EVERY_S = 15.0
STOP_FOR_S = 3.0


def item(rng: random.Random, n: int) -> dict[str, object]:
    """Mostly ordinary items, some hostile ones (deep nesting, huge answers, loops)."""
    kind = rng.randrange(10)
    if kind < 4:
        return {"response": f"<think>{n}</think><answer>{n % 7}</answer>", "verifier": "format"}
    if kind < 7:
        return {"response": f"The answer is $\\boxed{{{n % 13}}}$", "verifier": "math", "ground_truth": str(n % 11)}
    if kind == 7:
        return {"response": "\\boxed{" + "{" * 3000 + "1" + "}" * 3000 + "}", "verifier": "math", "ground_truth": "1"}
    if kind == 8:
        return {"response": "<answer>" + "9" * 200_000 + "</answer>", "verifier": "format"}
    code = "```python\ndef f(x):\n    while True:\n        pass\n```"
    return {"response": code, "verifier": "code", "ground_truth": {"tests": ["assert f(1) == 1"]}}


def tree(pid: int) -> list[int]:
    """`pid` and every process below it."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes()
            except OSError:
                continue
            parents[int(entry)] = int(stat[stat.rindex(b")") + 2 :].split()[1])
    found, frontier = [pid], {pid}
    while frontier:
        frontier = {c for c, p in parents.items() if p in frontier}
        found.extend(frontier)
    return found


def running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] != b"Z"


def sample(pid: int) -> tuple[float, int, int]:
    """(RSS MiB, open fds, processes) of the server's tree."""
    rss_kb, fds, procs = 0, 0, 0
    for p in tree(pid):
        try:
            status = Path(f"/proc/{p}/status").read_text()
            fds += len(os.listdir(f"/proc/{p}/fd"))
        except OSError:
            continue
        procs += 1
        rss_kb += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
    return rss_kb / 1024, fds, procs


class Soak:
    def __init__(self, url: str, seed: int) -> None:
        self.url = url
        self.rng = random.Random(seed)
        self.latency: dict[int, list[float]] = {size: [] for size in BATCH_SIZES}
        self.statuses: dict[int, int] = {}
        self.masked = 0
        self.lock = threading.Lock()

    def client(self, until: float, seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=self.url, timeout=300) as http:
            while time.monotonic() < until:
                size = rng.choice(BATCH_SIZES)
                items = [item(rng, rng.randrange(10**6)) for _ in range(size)]
                started = time.perf_counter()
                r = http.post("/v1/grade", json={"items": items, "deadline_s": 2})
                elapsed = time.perf_counter() - started
                with self.lock:
                    self.statuses[r.status_code] = self.statuses.get(r.status_code, 0) + 1
                    if r.status_code == 200:
                        self.latency[size].append(elapsed)
                        self.masked += sum(res["mask"] for res in r.json()["results"])

    def chaos(self, until: float) -> None:
        """Now and then a worker is killed, or stopped for a while (a stall)."""
        while time.monotonic() + CHAOS_EVERY_S < until:
            time.sleep(CHAOS_EVERY_S)
            pids = httpx.get(self.url + "/readyz", timeout=30).json().get("backends", {})
            pids = pids.get("dispatcher", {}).get("pids", [])
            if not pids:
                continue
            victim = self.rng.choice(pids)
            try:
                if self.rng.random() < 0.5:
                    os.kill(victim, signal.SIGKILL)
                else:
                    os.kill(victim, signal.SIGSTOP)
                    time.sleep(STOP_FOR_S)
                    os.kill(victim, signal.SIGCONT)
            except ProcessLookupError:
                pass


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else sum(values)


def report(soak: Soak, samples: list[tuple[float, float, int, int]]) -> None:
    print(f"{'t (s)':>7}{'RSS MiB':>10}{'fds':>7}{'procs':>7}")
    for t, rss, fds, procs in samples:
        print(f"{t:>7.0f}{rss:>10.1f}{fds:>7}{procs:>7}")
    if len(samples) >= 2:
        (t0, r0, f0, p0), (t1, r1, f1, p1) = samples[len(samples) // 2], samples[-1]
        per_min = 60 / max(1e-9, t1 - t0)
        print(
            f"second-half trend per minute: RSS {(r1 - r0) * per_min:+.1f} MiB, fds {(f1 - f0) * per_min:+.1f}, "
            f"processes {(p1 - p0) * per_min:+.1f}"
        )
    print(f"{'batch':>7}{'requests':>10}{'p50 s':>9}{'p99 s':>9}")
    for size, values in soak.latency.items():
        if values:
            print(f"{size:>7}{len(values):>10}{percentile(values, 50):>9.2f}{percentile(values, 99):>9.2f}")
    print(f"statuses: {dict(sorted(soak.statuses.items()))}; masked items: {soak.masked}")


def start_server(workers: int, tmp: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "TMPDIR": tmp, "RLVR_LOG_LEVEL": "warning", "RLVR_CACHE_ENTRIES": "0"}
    cmd = [sys.executable, "-m", "rlvr", "serve", "--port", str(port), "--workers", str(workers)]
    server = subprocess.Popen(cmd, cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    wait_ready(url, server)
    return server, url


def stop_server(server: subprocess.Popen[bytes], tmp: str) -> None:
    children = tree(server.pid)[1:]
    started = time.monotonic()
    server.send_signal(signal.SIGTERM)
    code = server.wait(timeout=120)
    time.sleep(1.0)  # what is on its way out has gone by now
    # Exited orphans wait for pid 1 to reap them (zombies): not alive, so not counted.
    left = [p for p in children if running(p)]
    for p in left:
        with contextlib.suppress(OSError):
            print(f"  left: {p} {Path(f'/proc/{p}/cmdline').read_bytes()[:120]!r}")
    print(
        f"SIGTERM to exit: {time.monotonic() - started:.2f}s (exit code {code}); processes left: {len(left)}; "
        f"/tmp/pymp-* left: {len(list(Path(tmp).glob('pymp-*')))}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--duration", type=float, default=120.0)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    duration = min(args.duration, MAX_DURATION_S)
    with tempfile.TemporaryDirectory() as tmp:
        server, url = start_server(args.workers, tmp)
        soak = Soak(url, args.seed)
        samples: list[tuple[float, float, int, int]] = []
        started = time.monotonic()
        until = started + duration
        try:
            with concurrent.futures.ThreadPoolExecutor(args.clients + 1) as pool:
                jobs = [pool.submit(soak.client, until, args.seed + i) for i in range(args.clients)]
                jobs.append(pool.submit(soak.chaos, until))
                while time.monotonic() < until:
                    samples.append((time.monotonic() - started, *sample(server.pid)))
                    time.sleep(SAMPLE_EVERY_S)
                for job in jobs:
                    job.result()
        finally:
            stop_server(server, tmp)
        report(soak, samples)


if __name__ == "__main__":
    main()
