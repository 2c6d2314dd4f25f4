"""A burst on `POST /run_code`: programs that time out, then correct ones behind them, all
at once, more than the server runs together. Time spent waiting for a turn is never the
program's: every correct program gets `Success` and every timed-out one `Failed` with
`TimeLimitExceeded`; no HTTP 500, no `SandboxError`."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

# A program that runs past its limit: half spin, half sleep (a wall-clock timeout with an idle CPU).
SPINS = "while True: pass"
SLEEPS = "import time\ntime.sleep(3600)"
ADDS = "a, b = map(int, input().split())\nprint(a + b)"


async def post(http: httpx.AsyncClient, request: dict[str, Any]) -> dict[str, Any]:
    response = await http.post("/run_code", json=request)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def burst(url: str, timeouts: int, correct: int, run_timeout: float, memory_mb: int) -> list[dict[str, Any]]:
    """`timeouts` programs that run past `run_timeout`, then `correct` ones, all in flight at once."""
    limits = httpx.Limits(max_connections=timeouts + correct)
    common = {"language": "python", "run_timeout": run_timeout, "memory_limit_MB": memory_mb}
    async with httpx.AsyncClient(base_url=url, timeout=3600, limits=limits) as http:
        tasks = [
            asyncio.create_task(post(http, {**common, "code": SPINS if i % 2 else SLEEPS})) for i in range(timeouts)
        ]
        # Let the slow ones reach the server first, as in a trainer's batch where they come first.
        await asyncio.sleep(0.5)
        tasks += [
            asyncio.create_task(post(http, {**common, "code": ADDS, "stdin": f"{i} 1000"})) for i in range(correct)
        ]
        return list(await asyncio.gather(*tasks))


def check(answers: list[dict[str, Any]], timeouts: int) -> None:
    assert not [a for a in answers if a["status"] == "SandboxError"], [a["message"] for a in answers][:5]
    for answer in answers[:timeouts]:
        assert (answer["status"], answer["run_result"]["status"]) == ("Failed", "TimeLimitExceeded"), answer
    for i, answer in enumerate(answers[timeouts:]):
        assert answer["status"] == "Success", answer
        assert answer["run_result"]["stdout"] == f"{i + 1000}\n"


def test_timeouts_never_fail_the_correct_programs_queued_behind_them(live_server: str) -> None:
    # 64 at once against 2 processes: the last correct programs wait for 20 rounds of 2 s
    # timeouts, far past any one program's own limits.
    answers = asyncio.run(burst(live_server, timeouts=40, correct=24, run_timeout=2, memory_mb=512))
    check(answers, timeouts=40)


@pytest.mark.slow
def test_timeouts_at_verls_defaults(live_server: str) -> None:
    # verl's sandbox_fusion defaults: 10 s run timeout, 1024 MiB, up to 64 requests at once.
    answers = asyncio.run(burst(live_server, timeouts=16, correct=8, run_timeout=10, memory_mb=1024))
    check(answers, timeouts=16)


# Programs started together in one batch: each keeps its own memory limit, and none sees
# what another wrote in its directory.
HOGS = "x = bytearray(400 * 1024 * 1024)\nprint(len(x))"
PLANTS = "import os\nopen('planted', 'w').write('x')\nprint(sorted(os.listdir('.')))"


def test_programs_started_together_keep_their_own_limits_and_files(live_server: str) -> None:
    async def main() -> list[dict[str, Any]]:
        limits = httpx.Limits(max_connections=48)
        async with httpx.AsyncClient(base_url=live_server, timeout=600, limits=limits) as http:
            requests: list[dict[str, Any]] = []
            for i in range(48):
                code, memory = [(HOGS, 128), (PLANTS, 512), (ADDS, 512)][i % 3]
                requests.append({"language": "python", "code": code, "stdin": f"{i} 1", "memory_limit_MB": memory})
            return list(await asyncio.gather(*(post(http, r) for r in requests)))

    answers = asyncio.run(main())
    for i, answer in enumerate(answers):
        kind = i % 3
        assert answer["status"] != "SandboxError", answer
        if kind == 0:
            assert answer["status"] == "Failed" and "400" not in answer["run_result"]["stdout"], answer
        elif kind == 1:
            assert answer["status"] == "Success" and answer["run_result"]["stdout"] == "['planted']\n", answer
        else:
            assert answer["status"] == "Success" and answer["run_result"]["stdout"] == f"{i + 1}\n", answer
