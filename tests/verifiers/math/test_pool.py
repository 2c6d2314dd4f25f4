"""The dev pool's disagreements, read by hand (`corpus/pool_disagreements.jsonl.gz`;
sources in `bench/math_pool_sources.md`): every item here is one where rlvr and
Math-Verify disagreed, or where a reading rule changed rlvr's verdict, with the
label a reader gave it. rlvr must be right more often than Math-Verify on each model
family, and reward fewer wrong answers. Both graders run here; nothing is written down."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.verifiers.math.graders import math_verify_says_correct, rlvr_says_correct

CORPUS = Path(__file__).with_name("corpus") / "pool_disagreements.jsonl.gz"
with gzip.open(CORPUS, "rt", encoding="utf-8") as _f:
    ROWS: list[dict[str, Any]] = [json.loads(line) for line in _f if line.strip()]


@pytest.fixture(scope="module")
def table() -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in ROWS:
        right = row["label"] == "correct"
        for name, grader in (("rlvr", rlvr_says_correct), ("mv", math_verify_says_correct)):
            says = grader(row)
            for key in (row["family"], "all"):
                counts[key][f"{name}_right"] += says == right
                counts[key][f"{name}_wrong_rewarded"] += says and not right
        for key in (row["family"], "all"):
            counts[key]["n"] += 1
    return counts


def test_the_pool_sample_is_labelled_and_sourced() -> None:
    assert len(ROWS) >= 1000
    assert len({r["family"] for r in ROWS}) >= 10
    assert all(r["label"] in ("correct", "incorrect") and r["why"].startswith("read") for r in ROWS)
    assert all(r["repo"] and len(r["commit"]) == 40 for r in ROWS)
    sources = (Path(__file__).parents[3] / "bench" / "math_pool_sources.md").read_text()
    assert all(f"`{r['source']}`" in sources for r in ROWS)


def test_rlvr_is_right_more_often_on_every_family(
    table: dict[str, dict[str, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    with capsys.disabled():
        for family, t in sorted(table.items()):
            print(
                f"\n{family:28s} n={t['n']:4d}  rlvr {t['rlvr_right']:4d}  Math-Verify {t['mv_right']:4d}"
                f"  wrong rewarded rlvr {t['rlvr_wrong_rewarded']} / MV {t['mv_wrong_rewarded']}"
            )
    behind = {f: (t["rlvr_right"], t["mv_right"]) for f, t in table.items() if t["rlvr_right"] < t["mv_right"]}
    assert not behind, behind


def test_rlvr_rewards_fewer_wrong_answers(table: dict[str, dict[str, int]]) -> None:
    overall = table["all"]
    assert overall["rlvr_wrong_rewarded"] <= overall["mv_wrong_rewarded"]
