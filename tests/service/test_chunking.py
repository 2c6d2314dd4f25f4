"""How the embedded dispatcher cuts a batch into chunks (`chunk_units`)."""

from __future__ import annotations

import itertools

import pytest

from rlvr.service.dispatch.pool import chunk_units


def _chunks(units: int, size: int) -> list[int]:
    return [min(size, units - start) for start in range(0, units, size)]


def _rounds(chunks: int, workers: int) -> int:
    return -(-chunks // workers)


CASES = list(itertools.product(range(1, 400, 7), (1, 2, 3, 4, 8), (1, 2, 16, 32, 64)))


def test_never_above_chunk_size_nor_more_rounds() -> None:
    for units, workers, chunk_size in CASES:
        size = chunk_units(units, workers, chunk_size)
        old_size = max(1, min(chunk_size, -(-units // workers)))  # full chunks, one short one last
        assert 1 <= size <= chunk_size
        chunks = _chunks(units, size)
        assert sum(chunks) == units
        assert _rounds(len(chunks), workers) <= _rounds(len(_chunks(units, old_size)), workers)
        # The rounds are as few as chunk_size allows.
        assert _rounds(len(chunks), workers) == -(-units // (workers * chunk_size)), (units, workers, chunk_size)


def test_the_last_round_is_even() -> None:
    """No chunk is more than the chunk count of units longer than any other."""
    for units, workers, chunk_size in CASES:
        chunks = _chunks(units, chunk_units(units, workers, chunk_size))
        assert max(chunks) - min(chunks) <= len(chunks), (units, workers, chunk_size)


@pytest.mark.parametrize(
    ("units", "workers", "chunk_size", "expected"),
    [
        (164, 2, 32, [28, 28, 28, 28, 28, 24]),  # HumanEval on two workers: not 32 x 5 and 4
        (500, 2, 32, [32] * 15 + [20]),
        (10, 2, 32, [5, 5]),  # a small batch is spread over every worker
        (3, 4, 32, [1, 1, 1]),
        (65, 2, 32, [17, 17, 17, 14]),
        (64, 2, 32, [32, 32]),
    ],
)
def test_examples(units: int, workers: int, chunk_size: int, expected: list[int]) -> None:
    assert _chunks(units, chunk_units(units, workers, chunk_size)) == expected
