"""Real model outputs labelled by reading (`corpus/`, sources in `corpus/SOURCES.md`):
rlvr must be at least as accurate as Math-Verify on them, and reward no more wrong
answers. Both figures are computed here; none is written down."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.verifiers.math.graders import math_verify_says_correct, rlvr_says_correct

CORPUS = Path(__file__).with_name("corpus") / "real_outputs.jsonl"
ROWS: list[dict[str, Any]] = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]


def tally() -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in ROWS:
        right = row["label"] == "correct"
        for name, grader in (("rlvr", rlvr_says_correct), ("mv", math_verify_says_correct)):
            says = grader(row)
            for key in (row["source"], "all"):
                table[key][f"{name}_right"] += says == right
                table[key][f"{name}_false_reward"] += says and not right
        for key in (row["source"], "all"):
            table[key]["n"] += 1
    return table


def test_corpus_is_labelled_and_sourced() -> None:
    assert len(ROWS) >= 300
    assert len({r["source"] for r in ROWS}) >= 4
    assert all(r["label"] in ("correct", "incorrect") and r["repo"] and r["commit"] for r in ROWS)
    sources = (CORPUS.parent / "SOURCES.md").read_text()
    assert all(r["source"] in sources for r in ROWS)


def test_rlvr_at_least_as_accurate_as_math_verify(capsys: pytest.CaptureFixture[str]) -> None:
    table = tally()
    with capsys.disabled():
        for source, t in sorted(table.items()):
            print(
                f"\n{source:20s} n={t['n']:3d}  rlvr {t['rlvr_right']:3d}  Math-Verify {t['mv_right']:3d}"
                f"  false rewards rlvr {t['rlvr_false_reward']} / MV {t['mv_false_reward']}"
            )
    overall = table["all"]
    assert overall["rlvr_right"] >= overall["mv_right"]
    assert overall["rlvr_false_reward"] <= overall["mv_false_reward"]
