"""Batches: a worker hands consecutive units of a verifier that verifies many at once
(`BatchVerifying`) to it together, and whatever goes wrong in a batch (an item it
cannot judge, a hang, a spin, a crash, an exception) ends with each of its items
verified alone, under its own deadline: never masked, never a timeout."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.services import Server


@pytest.fixture(scope="module")
def one_worker(plugin_dir: Path) -> Iterator[str]:
    with Server(plugin_dir, "--workers", "1", chunk_size="16") as server:
        yield server.url


def grade(url: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    r = httpx.post(url + "/v1/grade", json={"items": items}, timeout=120)
    assert r.status_code == 200, r.text
    results: list[dict[str, Any]] = r.json()["results"]
    return results


def batchy(response: str, tally: Path) -> dict[str, Any]:
    return {"response": response, "verifier": "batchy", "ground_truth": str(tally)}


def restarts(url: str) -> dict[str, int]:
    state = httpx.get(url + "/readyz", timeout=30).json()["backends"]["dispatcher"]
    return dict(state["restarts"])


@pytest.mark.parametrize("n", [2, 3, 4, 5, 9, 16])
def test_consecutive_units_go_in_batches_of_the_verifiers_size(one_worker: str, tmp_path: Path, n: int) -> None:
    tally = tmp_path / "tally"
    results = grade(one_worker, [batchy(f"ok {i}", tally) for i in range(n)])
    sizes = [min(4, n - start) for start in range(0, n, 4)]
    # A last unit with no company is verified alone.
    lines = [f"batch {size}" if size > 1 else f"alone ok {n - 1}" for size in sizes]
    assert tally.read_text().splitlines() == lines
    reasons = [f"batch of {size}" if size > 1 else "alone" for size in sizes for _ in range(size)]
    assert [r["reason"] for r in results] == reasons
    assert all(r["reward"] == 1.0 and not r["mask"] for r in results)


@pytest.mark.parametrize(
    ("pattern", "batches"),
    [
        ("bbfbbb", [2, 3]),
        ("bfbfb", []),
        ("fbbbbbbf", [4, 2]),
        ("bbbbff", [4]),
    ],
)
def test_only_runs_of_one_verifier_are_batched(
    one_worker: str, tmp_path: Path, pattern: str, batches: list[int]
) -> None:
    tally = tmp_path / "tally"

    # Each response distinct, so that neither the cache nor deduplication takes a unit out.
    def item(i: int, kind: str) -> dict[str, Any]:
        if kind == "b":
            return batchy(f"ok {i}", tally)
        return {"response": f"<think>{tally} {i}</think><answer>a</answer>", "verifier": "format"}

    items = [item(i, kind) for i, kind in enumerate(pattern)]
    results = grade(one_worker, items)
    lines = tally.read_text().splitlines()
    assert [line for line in lines if line.startswith("batch")] == [f"batch {size}" for size in batches]
    # A unit with no batch to join is verified alone.
    assert sum(line.startswith("alone") for line in lines) == pattern.count("b") - sum(batches)
    assert all(r["reward"] == 1.0 and not r["mask"] for r in results)


@pytest.mark.parametrize("where", [0, 1, 3])
def test_an_item_the_batch_cannot_judge_is_verified_alone(one_worker: str, tmp_path: Path, where: int) -> None:
    tally = tmp_path / "tally"
    responses = [f"ok {i}" for i in range(4)]
    responses[where] = "alone"
    results = grade(one_worker, [batchy(r, tally) for r in responses])
    assert tally.read_text().splitlines() == ["batch 4", "alone alone"]
    assert [r["reason"] for r in results] == ["alone" if i == where else "batch of 4" for i in range(4)]
    assert all(r["reward"] == 1.0 and not r["mask"] for r in results)


@pytest.mark.parametrize("trouble", ["hang", "spin", "exit", "raise"])
@pytest.mark.parametrize("where", [0, 2])
def test_a_batch_gone_wrong_is_verified_again_one_item_at_a_time(
    one_worker: str, tmp_path: Path, trouble: str, where: int
) -> None:
    tally = tmp_path / "tally"
    responses = [f"ok {i}" for i in range(3)]
    responses[where] = trouble
    before = restarts(one_worker)
    results = grade(one_worker, [batchy(r, tally) for r in responses])
    # Alone, each item is correct: no item pays for what went wrong in the batch.
    assert [(r["reward"], r["verdict"], r["mask"], r["reason"]) for r in results] == [
        (1.0, "correct", False, "alone")
    ] * 3
    lines = tally.read_text().splitlines()
    assert lines[0] == "batch 3" and sorted(lines[1:]) == sorted(f"alone {r}" for r in responses)
    after = restarts(one_worker)
    killed = {"hang": "stalled", "spin": "stalled", "exit": "crashed"}.get(trouble)
    for reason, count in after.items():
        assert count == before.get(reason, 0) + (1 if reason == killed else 0), (before, after)
