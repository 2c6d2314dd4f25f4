from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from rlvr import AsyncRewardClient, RewardClient
from rlvr.client import RewardServiceError, chunk_indices, merge_stats
from rlvr.in_process import InProcessTransport
from rlvr.service.settings import Settings
from tests.scripted_http import ScriptedServer


def test_rewards_over_http(live_server: str) -> None:
    with RewardClient(live_server) as client:
        out = client.rewards(
            ["<think>a</think><answer>4</answer>", "4", "<think>a</think><answer>4</answer>"],
            verifier="format",
            groups=["g", "g", "g"],
        )
    assert out.values == [1.0, 0.0, 1.0]
    assert out.mask == [False, False, False]
    assert out.stats["unique"] == 2


def test_errors_carry_the_server_message(live_server: str) -> None:
    with RewardClient(live_server) as client, pytest.raises(RewardServiceError, match="unknown verifier 'nope'"):
        client.rewards(["x"], verifier="nope")


def graded(method: str, path: str, sent: Any) -> tuple[int, Any]:
    results = [{"reward": 1.0, "verdict": "correct", "mask": False} for _ in sent["items"]]
    return 200, {"results": results, "stats": {"items": len(results)}}


@pytest.fixture
def flaky() -> Iterator[Callable[[list[str]], ScriptedServer]]:
    servers: list[ScriptedServer] = []

    def make(script: list[str]) -> ScriptedServer:
        servers.append(ScriptedServer(script, graded))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def test_connection_errors_and_5xx_are_retried(flaky: Callable[[list[str]], ScriptedServer]) -> None:
    server = flaky(["drop", "503", "500", "502", "429"])
    with RewardClient(server.url, backoff_s=0.01) as client:
        out = client.grade([{"response": "x", "verifier": "format"}])
    assert [r.reward for r in out.results] == [1.0] and out.stats == {"items": 1}
    assert server.attempts == 6


def test_client_errors_are_not_retried_and_retries_end(flaky: Callable[[list[str]], ScriptedServer]) -> None:
    server = flaky(["422"])
    with RewardClient(server.url, backoff_s=0.01) as client, pytest.raises(RewardServiceError) as err:
        client.grade([{"response": "x", "verifier": "format"}])
    assert err.value.status == 422 and server.attempts == 1
    # Retries go on for the budget's time, however many tries that takes, then stop.
    server = flaky(["503@0.05"] * 1000)
    with (
        RewardClient(server.url, backoff_s=0.01, retry_budget_s=0.5) as client,
        pytest.raises(RewardServiceError) as err,
    ):
        client.grade([{"response": "x", "verifier": "format"}])
    assert err.value.status == 503 and 2 <= server.attempts < 1000


def test_a_retry_after_past_the_budget_is_not_waited_for(flaky: Callable[[list[str]], ScriptedServer]) -> None:
    server = flaky(["503@3600"])
    with RewardClient(server.url, retry_budget_s=5) as client, pytest.raises(RewardServiceError) as err:
        client.grade([{"response": "x", "verifier": "format"}])
    assert err.value.status == 503 and server.attempts == 1


def test_the_retry_budget_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="retry_budget_s"):
        AsyncRewardClient("http://127.0.0.1:9", retry_budget_s=-1)


def test_the_async_client_keeps_request_order_across_chunks(live_server: str) -> None:
    good, bad = "<think>a</think><answer>4</answer>", "4"
    responses = [good, bad, bad, good, good, bad, good]

    async def grade() -> list[float]:
        async with AsyncRewardClient(live_server, chunk_size=2, concurrency=3) as client:
            out = await client.rewards(responses, verifier="format")
        assert out.stats["items"] == len(responses)
        return out.values

    assert asyncio.run(grade()) == [1.0 if r == good else 0.0 for r in responses]


def test_chunks_never_split_a_group() -> None:
    items = [{"group": g} if g else {} for g in ["a", None, "b", "a", "b", "a", None]]
    chunks = chunk_indices(items, 3)
    assert sorted(i for c in chunks for i in c) == list(range(len(items)))
    for group in ("a", "b"):
        holding = [c for c in chunks if any(items[i].get("group") == group for i in c)]
        assert len(holding) == 1, chunks
    assert all(len(c) <= 3 for c in chunks)


def test_chunk_statistics_add_up() -> None:
    merged = merge_stats(
        [
            {"items": 2, "elapsed_ms": 5.0, "verdicts": {"correct": 2}, "groups": {"a": {"n": 2, "mean": 1.0}}},
            {"items": 1, "elapsed_ms": 9.0, "verdicts": {"correct": 1, "incorrect": 1}, "groups": {"b": {"n": 1}}},
        ]
    )
    assert merged["items"] == 3 and merged["elapsed_ms"] == 9.0
    assert merged["verdicts"] == {"correct": 3, "incorrect": 1}
    assert merged["groups"] == {"a": {"n": 2, "mean": 1.0}, "b": {"n": 1}}


def test_the_retries_of_many_chunks_recover(flaky: Callable[[list[str]], ScriptedServer]) -> None:
    server = flaky(["503", "drop", "429"])
    items = [{"response": str(i), "verifier": "format"} for i in range(5)]
    with RewardClient(server.url, backoff_s=0.01, chunk_size=2, concurrency=1) as client:
        out = client.grade(items)
    assert len(out.results) == 5 and server.attempts == 3 + 3


def test_in_process_grading_needs_no_server() -> None:
    transport = InProcessTransport(Settings(workers=1))
    with RewardClient(None, transport=transport) as client:
        out = client.rewards(["<think>a</think><answer>4</answer>", "4"], verifier="format")
        assert out.values == [1.0, 0.0] and out.mask == [False, False]
        # Bad input fails as it does over HTTP: 422, naming the field.
        with pytest.raises(RewardServiceError, match=r"items\[0\]") as err:
            client.grade([{"response": "x"}])
        assert err.value.status == 422


def test_group_statistics_survive_chunking(live_server: str) -> None:
    good, bad = "<think>a</think><answer>4</answer>", "4"
    responses = [good, bad, bad, good, bad, good]
    groups = ["a", "a", "b", "a", "b", "c"]
    # Chunks of 2 items, but a group of 3 is never split: its statistics see all of it.
    with RewardClient(live_server, chunk_size=2) as client:
        out = client.rewards(responses, verifier="format", groups=groups, advantage="dr_grpo")
    assert out.advantages == pytest.approx([1 / 3, -2 / 3, 0.0, 1 / 3, 0.0, 0.0])
    assert set(out.stats["groups"]) == {"a", "b", "c"}
    assert out.stats["groups"]["a"]["n"] == 3 and out.stats["groups"]["b"]["zero_std"] is True
    assert out.stats["items"] == len(responses)


def test_a_chunk_that_fails_fails_the_call(flaky: Callable[[list[str]], ScriptedServer]) -> None:
    server = flaky(["ok", "422"])
    items = [{"response": str(i), "verifier": "format"} for i in range(6)]
    with RewardClient(server.url, chunk_size=2, concurrency=1) as client, pytest.raises(RewardServiceError) as err:
        client.grade(items)
    assert err.value.status == 422
    assert server.attempts == 2  # the third chunk was not sent


def test_signal_names_come_from_the_service_once(live_server: str) -> None:
    with RewardClient(live_server) as client:
        every = client.signal_names()
        assert {"hedge", "exit_before_tests", "axiom", "diagnostic_control"} <= set(every)
        assert client.signal_names("math") == ["answer_in_thinking_only", "hedge", "restated_question"]
        assert client.signal_names("format") == ["empty_section"] and client.signal_names("no_such_verifier") == []


def test_a_server_without_signals_gives_no_names() -> None:
    # An older or another service answers its verifier list with an error: a trainer
    # logs no signals then, and goes on.
    transport = httpx.MockTransport(lambda request: httpx.Response(404, json={"detail": "Not Found"}))
    client = AsyncRewardClient("http://old-service", transport=transport, retry_budget_s=0)
    assert asyncio.run(client.signal_names()) == []


def test_callers_that_ask_for_signal_names_at_once_share_one_request() -> None:
    asked = []

    async def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        await asyncio.sleep(0.05)  # every caller asks before the first answer comes
        body = {"verifiers": [{"name": "math", "signals": [{"name": "hedge"}, {"name": "restated_question"}]}]}
        return httpx.Response(200, json=body)

    async def many() -> list[list[str]]:
        client = AsyncRewardClient("http://svc", transport=httpx.MockTransport(answer), retry_budget_s=0)
        return await asyncio.gather(*(client.signal_names("math") for _ in range(8)))

    assert asyncio.run(many()) == [["hedge", "restated_question"]] * 8
    assert asked == ["/v1/verifiers"]
