"""A unit's deadline is CPU time: a worker that stalls (stopped, starved) never turns an
item into a timeout, and each unit of a chunk is held to its own deadline."""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.services import Server

THINK = "<think>t</think><answer>a</answer>"
# Far above the sleepy verifier's 1 s, so that a chunk's first unit outlives its second.
LONG_DEFAULT_DEADLINE_S = 60.0


@pytest.fixture(scope="module")
def one_worker(plugin_dir: Path) -> Iterator[str]:
    with Server(plugin_dir, "--workers", "1", default_deadline_s=str(LONG_DEFAULT_DEADLINE_S)) as server:
        yield server.url


def dispatcher_state(url: str) -> dict[str, object]:
    state: dict[str, object] = httpx.get(url + "/readyz", timeout=30).json()["backends"]["dispatcher"]
    return state


def wait_for_lines(path: Path, n: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not (path.exists() and len(path.read_text().splitlines()) >= n):
        assert time.monotonic() < deadline, f"{path} never reached {n} lines"
        time.sleep(0.01)


def test_a_stopped_worker_never_turns_a_correct_item_into_a_timeout(one_worker: str, tmp_path: Path) -> None:
    tally = tmp_path / "tally"
    [pid] = dispatcher_state(one_worker)["pids"]  # type: ignore[misc]
    item = {"response": "x", "verifier": "tally", "ground_truth": str(tally)}
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        answer = pool.submit(httpx.post, one_worker + "/v1/grade", json={"items": [item], "deadline_s": 1}, timeout=120)
        wait_for_lines(tally, 1)  # the worker holds the item now
        os.kill(pid, signal.SIGSTOP)
        try:
            result = answer.result(timeout=60).json()["results"][0]
        finally:
            with contextlib.suppress(ProcessLookupError):  # killed and replaced by now
                os.kill(pid, signal.SIGCONT)
    # The stall was the grader's: the item ran again on a fresh worker and was graded.
    assert result["verdict"] == "correct" and result["mask"] is False, result
    assert len(tally.read_text().splitlines()) == 2
    restarts = dispatcher_state(one_worker)["restarts"]
    assert restarts["stalled"] >= 1  # type: ignore[index]


def test_a_unit_that_keeps_stalling_is_masked_not_timed_out(one_worker: str) -> None:
    # Sleeping uses no CPU: the verifier waits, the response is not to blame.
    r = httpx.post(one_worker + "/v1/grade", json={"items": [{"response": "3600", "verifier": "sleepy"}]}, timeout=120)
    result = r.json()["results"][0]
    assert result["mask"] is True and result["verdict"] == "error", result
    assert "grader stalled" in result["reason"]


def test_each_unit_of_a_chunk_is_held_to_its_own_deadline(one_worker: str) -> None:
    # One worker, so both units travel in one chunk: a format item with a 60 s deadline,
    # then a CPU spin whose verifier allows 1 s.
    items = [{"response": THINK, "verifier": "format"}, {"response": "-1", "verifier": "sleepy"}]
    started = time.monotonic()
    r = httpx.post(one_worker + "/v1/grade", json={"items": items}, timeout=2 * LONG_DEFAULT_DEADLINE_S)
    elapsed = time.monotonic() - started
    fmt, spin = r.json()["results"]
    assert fmt["verdict"] == "correct"
    assert spin["verdict"] == "timeout" and spin["mask"] is False, spin
    assert spin["details"]["cpu_s"] >= 1.0
    # Killed on its own deadline, long before the earlier unit's would have passed.
    assert elapsed < LONG_DEFAULT_DEADLINE_S / 2


def test_a_worker_that_dies_idle_is_replaced_before_the_next_job(one_worker: str) -> None:
    [pid] = dispatcher_state(one_worker)["pids"]  # type: ignore[misc]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while (state := dispatcher_state(one_worker))["pids"] == [pid] or state["workers_alive"] != 1:
        assert time.monotonic() < deadline, state
        time.sleep(0.1)
    assert state["restarts"]["died_idle"] >= 1  # type: ignore[index]


SLEEPERS = {
    "sleep in the function": "import time\ndef add(a, b):\n    time.sleep(30)\n    return a + b\n",
    "sleep at load": "import time\ntime.sleep(30)\ndef add(a, b):\n    return a + b\n",
    "block on a pipe": "import os\ndef add(a, b):\n    r, w = os.pipe()\n    os.read(r, 1)\n    return a + b\n",
    "wait on a child": "import os, time\ndef add(a, b):\n    if os.fork() == 0:\n        time.sleep(30)\n"
    "    os.wait()\n    return a + b\n",
}


@pytest.mark.parametrize("program", SLEEPERS.values(), ids=SLEEPERS.keys())
def test_a_program_that_holds_its_time_without_cpu_is_a_timeout_not_masked(one_worker: str, program: str) -> None:
    # A short item deadline and a long per-test limit: the wall limit of the stall rule
    # (3x the deadline) passes while the sandboxed program is still waiting.
    item = {
        "response": f"```python\n{program}```",
        "verifier": "code",
        "params": {"timeout_s": 20},
        "ground_truth": {"tests": ["assert add(1, 2) == 3"]},
    }
    r = httpx.post(one_worker + "/v1/grade", json={"items": [item], "deadline_s": 1}, timeout=120)
    result = r.json()["results"][0]
    assert result["mask"] is False, result
    assert result["verdict"] == "timeout" and result["reward"] == 0.0, result


@contextlib.contextmanager
def cpu_hogs(cpu: int, n: int) -> Iterator[None]:
    """`n` processes spinning on `cpu`: whatever else runs there gets 1/(n+1) of it."""
    code = f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"
    hogs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def test_a_worker_starved_of_cpu_is_graded_not_masked(plugin_dir: Path) -> None:
    # Wall limit 1 x 2 s; the unit needs 1.5 s of CPU and shares one CPU with two spinning
    # processes. It gets a third of it, or half where the scheduler's autogroups give the
    # server's session an equal share: 3 to 4.5 s of wall time, within the starved limit
    # (4 x 2 s), most of it waiting in the run queue. That is the machine's doing, not a
    # stalled grader.
    with Server(plugin_dir, "--workers", "1", stall_wall_factor="1.0") as server:
        [pid] = dispatcher_state(server.url)["pids"]  # type: ignore[misc]
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(pid, {cpu})
        item = {"response": "1.5", "verifier": "burner"}
        waited_before = run_queue_s(pid)
        with cpu_hogs(cpu, 2):
            r = httpx.post(server.url + "/v1/grade", json={"items": [item], "deadline_s": 2}, timeout=120)
        result = r.json()["results"][0]
        state = dispatcher_state(server.url)
        assert (result["verdict"], result["mask"]) == ("correct", False), result
        # Graded where it started, not re-run on a replacement worker.
        assert state["pids"] == [pid] and state["restarts"].get("stalled", 0) == 0, state  # type: ignore[union-attr]
        # The premise: the unit waited for the CPU long enough to pass its wall limit.
        assert run_queue_s(pid) - waited_before > 0.5


def run_queue_s(pid: int) -> float:
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
