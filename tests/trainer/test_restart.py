"""A trainer step outlasts a restart of the service: the client and the verl and TRL
adapters retry through it (for `retry_budget_s`) and lose nothing."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlvr.client import RewardClient
from rlvr.trainer.trl import rlvr_reward
from rlvr.trainer.verl import compute_score, compute_score_async
from tests.services import Server

GOOD, BAD = "<think>a</think><answer>4</answer>", "4"
# Long enough that every caller has met the closed port and backed off more than once.
DOWN_S = 5.0
CALLS = 40


def _in_thread(work: Callable[[], Any], out: dict[str, Any], name: str) -> threading.Thread:
    def run() -> None:
        try:
            out[name] = work()
        except BaseException as exc:  # the test reports what each caller raised
            out[name] = exc

    thread = threading.Thread(target=run, name=name)
    thread.start()
    return thread


def test_clients_and_adapters_outlast_a_restart(plugin_dir: Path) -> None:
    first = Server(plugin_dir, "--workers", "1")
    url = first.url
    expected = [1.0 if i % 2 == 0 else 0.0 for i in range(CALLS)]
    responses = [GOOD if i % 2 == 0 else BAD for i in range(CALLS)]
    items = [{"response": r, "verifier": "format"} for r in responses]

    def client_calls() -> list[float]:
        with RewardClient(url) as client:
            rewards: list[float] = []
            for item in items:
                rewards.extend(r.reward for r in client.grade([item]).results)
                time.sleep(DOWN_S / CALLS)
            return rewards

    def verl_async_calls() -> list[float]:
        async def all_at_once() -> list[dict[str, float]]:
            calls = [compute_score_async("x", r, None, {"verifier": "format"}, url=url) for r in responses]
            return await asyncio.gather(*calls)

        return [out["score"] for out in asyncio.run(all_at_once())]

    def verl_calls() -> list[float]:
        return [compute_score("x", r, None, {"verifier": "format"}, url=url)["score"] for r in responses[:4]]

    def trl_calls() -> list[float | None]:
        func = rlvr_reward("format", url=url, truth_column=None)
        return func(prompts=["p"] * CALLS, completions=responses)  # type: ignore[return-value]

    out: dict[str, Any] = {}
    # One caller mid-way through its calls when the server goes, the rest calling while it is down.
    threads = [_in_thread(client_calls, out, "client")]
    time.sleep(0.5)
    first.stop()
    threads += [_in_thread(work, out, work.__name__) for work in (verl_async_calls, verl_calls, trl_calls)]
    time.sleep(DOWN_S)
    first.start()
    try:
        for thread in threads:
            thread.join(timeout=120)
    finally:
        first.stop()
    assert not any(t.is_alive() for t in threads)
    assert out["client"] == expected
    assert out["verl_async_calls"] == expected
    assert out["verl_calls"] == expected[:4]
    assert out["trl_calls"] == expected
