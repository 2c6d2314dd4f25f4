"""rlvr's `math` verifier against Math-Verify on the dev pool of real model outputs.

The pool is built from public repositories that store model generations on math
benchmarks (`bench/math_pool_sources.md` lists each source: repository, commit,
files, model, benchmark). Those generations are other projects' data, so the pool
itself is not committed: `build` samples it from the per-source files that the
source readers write (one JSON object a line: source, family, model, benchmark, id,
question, gold, response, source_label, repo, commit, path) into one gzip file.

Labels: where rlvr and Math-Verify agree, that is the label; every disagreement is
read by hand and its label written to `--labels` (`{"key", "label", "why"}` a line;
`tests/verifiers/math/corpus/pool_disagreements.jsonl` keeps them with their text
so the tests assert on them without the pool). `grade` prints, per source and in
total, each grader's accuracy, wrong answers rewarded and right answers refused,
with the figures as ratios to Math-Verify; `--unread` writes the disagreements no
label covers yet.

    .venv/bin/python -m bench.math_pool build --raw /work/pool/raw
    .venv/bin/python -m bench.math_pool grade --labels /work/pool/labels.jsonl

Math-Verify's verdicts are cached beside the pool (they do not change with rlvr);
both graders run in `--jobs` processes; each rlvr item gets 2 s of CPU, the verifier's deadline.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import multiprocessing
import os
import signal
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_POOL = Path(os.environ.get("RLVR_MATH_POOL", Path.home() / ".cache" / "rlvr" / "math_pool.jsonl.gz"))
MAX_PER_SOURCE = 500
# Math-Verify's own parse and verify timeouts (it enforces them with SIGALRM, in
# this single-threaded worker process).
MV_TIMEOUT_S = 5
# No correct answer may need more CPU than this (the math verifier's deadline).
ITEM_CPU_DEADLINE_S = 2.0


def item_key(row: dict[str, Any]) -> str:
    return hashlib.sha256(f"{row['gold']}\x00{row['response']}".encode()).hexdigest()[:16]


def build(raw: Path, pool: Path, per_source: int) -> None:
    rows: list[dict[str, Any]] = []
    for path in sorted(raw.glob("*.jsonl")):
        source_rows = sorted((json.loads(line) for line in path.open() if line.strip()), key=lambda r: r["id"])
        step = max(1, len(source_rows) // per_source)
        rows.extend(source_rows[::step][:per_source])
    pool.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(pool, "wt") as f:
        for row in rows:
            row["key"] = item_key(row)
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    families = {r["family"] for r in rows}
    print(f"{len(rows)} responses, {len({r['source'] for r in rows})} sources, {len(families)} families -> {pool}")


def read_pool(pool: Path) -> list[dict[str, Any]]:
    with gzip.open(pool, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


_VERIFIER: list[Any] = []


def _rlvr_one(row: dict[str, Any]) -> tuple[str, bool, str, str]:
    from rlvr.verifiers.base import GradeInput
    from rlvr.verifiers.math import MathParams, MathVerifier

    if not _VERIFIER:
        _VERIFIER.append(MathVerifier())
    verifier, params = _VERIFIER[0], MathParams()
    # The item's deadline in CPU seconds, so a loaded machine does not count: this
    # bench runs each item in a single-threaded process, where a timer signal is safe.
    signal.setitimer(signal.ITIMER_PROF, ITEM_CPU_DEADLINE_S)
    try:
        out = verifier.verify(
            GradeInput(row.get("question", ""), row["response"]), params, verifier.prepare(params, row["gold"])
        )
    except _Deadline:
        return row["key"], False, "timeout", ""
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    return row["key"], out.score == 1.0, out.verdict.value, str(out.details.get("extracted", ""))[:80]


class _Deadline(Exception):
    pass


def _raise_deadline(*_: object) -> None:
    raise _Deadline


def _init_worker() -> None:
    signal.signal(signal.SIGPROF, _raise_deadline)


def _mv_one(row: dict[str, Any]) -> tuple[str, bool]:
    from math_verify import parse, verify

    try:
        gold = parse(row["gold"], parsing_timeout=MV_TIMEOUT_S)
        return row["key"], bool(
            verify(gold, parse(row["response"], parsing_timeout=MV_TIMEOUT_S), timeout_seconds=MV_TIMEOUT_S)
        )
    except Exception:  # Math-Verify's own failures count against it
        return row["key"], False


def _map(fn: Any, rows: list[dict[str, Any]], jobs: int) -> Iterator[Any]:
    with multiprocessing.get_context("fork").Pool(jobs, initializer=_init_worker) as pool:
        yield from pool.imap_unordered(fn, rows, chunksize=16)


def math_verify_verdicts(rows: list[dict[str, Any]], cache: Path, jobs: int) -> dict[str, bool]:
    known: dict[str, bool] = json.loads(cache.read_text()) if cache.exists() else {}
    todo = [r for r in rows if r["key"] not in known]
    for key, says in _map(_mv_one, todo, jobs):
        known[key] = says
    if todo:
        cache.write_text(json.dumps(known))
    return known


def read_labels(path: Path | None) -> dict[str, bool | None]:
    """Labels by key; a later line overrides an earlier (a reading overrides the
    graders' agreement); `skip` (an unusable gold) is None and leaves the item out."""
    if path is None or not path.exists():
        return {}
    labels = (json.loads(line) for line in path.open() if line.strip())
    return {lab["key"]: None if lab["label"] == "skip" else lab["label"] == "correct" for lab in labels}


def grade(pool: Path, labels_path: Path | None, jobs: int, unread: Path | None, record_agreement: bool = False) -> int:
    rows = read_pool(pool)
    mv = math_verify_verdicts(rows, pool.with_suffix(".mv.json"), jobs)
    started = time.perf_counter()
    rlvr = {key: (says, verdict, extracted) for key, says, verdict, extracted in _map(_rlvr_one, rows, jobs)}
    elapsed = time.perf_counter() - started
    read = read_labels(labels_path)
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    missing: list[dict[str, Any]] = []
    timeouts = 0
    for row in rows:
        key = row["key"]
        r_says, verdict, extracted = rlvr[key]
        m_says = mv[key]
        if key in read:
            if read[key] is None:
                continue
            right = bool(read[key])
            timeouts += right and verdict == "timeout"
        elif r_says == m_says:
            right = r_says
            timeouts += right and verdict == "timeout"
        else:
            missing.append({**row, "rlvr": r_says, "mv": m_says, "rlvr_extracted": extracted})
            continue
        for where in (row["source"], "ALL"):
            t = table[where]
            t["n"] += 1
            for name, says in (("rlvr", r_says), ("mv", m_says)):
                t[f"{name}_right"] += says == right
                t[f"{name}_wrong_rewarded"] += says and not right
                t[f"{name}_right_refused"] += right and not says
    _print(table, len(rows), len(missing), timeouts, elapsed)
    if record_agreement and labels_path is not None:
        with labels_path.open("a") as f:
            for row in rows:
                says = rlvr[row["key"]][0]
                if row["key"] not in read and says == mv[row["key"]]:
                    label = "correct" if says else "incorrect"
                    f.write(json.dumps({"key": row["key"], "label": label, "why": "graders agree"}) + "\n")
    if unread is not None:
        with unread.open("w") as f:
            for row in missing:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return 0


Table = dict[str, dict[str, int]]


def _print(table: Table, n: int, unlabelled: int, timeouts: int, elapsed: float) -> None:
    print(f"{n} responses; {unlabelled} disagreements not yet read (left out below)")
    print(f"right answers rlvr graded `timeout` (budget, or {ITEM_CPU_DEADLINE_S:g} s of CPU): {timeouts}")
    print(f"rlvr graded the pool in {elapsed:.1f}s")
    print(f"{'source':42s} {'n':>5s}  {'rlvr acc':>8s} {'MV acc':>7s} {'ratio':>6s}", end="")
    print(f"  {'wrong rewarded':>15s}  {'right refused':>14s}")
    for source in sorted(table, key=lambda s: (s == "ALL", s)):
        t = table[source]
        acc_r, acc_m = t["rlvr_right"] / t["n"], t["mv_right"] / t["n"]
        print(
            f"{source:42s} {t['n']:5d}  {acc_r:8.1%} {acc_m:7.1%} {acc_r / max(acc_m, 1e-9):6.3f}x"
            f"  {t['rlvr_wrong_rewarded']:6d} / {t['mv_wrong_rewarded']:<6d}"
            f"  {t['rlvr_right_refused']:6d} / {t['mv_right_refused']:<6d}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="sample the per-source files into the pool")
    b.add_argument("--raw", type=Path, required=True)
    b.add_argument("--per-source", type=int, default=MAX_PER_SOURCE)
    g = sub.add_parser("grade", help="grade the pool with rlvr and Math-Verify")
    g.add_argument("--labels", type=Path, default=None)
    g.add_argument("--unread", type=Path, default=None, help="write the disagreements no label covers")
    g.add_argument("--record-agreement", action="store_true", help="append the graders' agreements to --labels")
    for p in (b, g):
        p.add_argument("--pool", type=Path, default=DEFAULT_POOL)
    g.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    if args.command == "build":
        build(args.raw, args.pool, args.per_source)
        return 0
    if not args.pool.exists():
        raise SystemExit(f"--pool {args.pool} does not exist: build it first (see this module's docstring)")
    return grade(args.pool, args.labels, args.jobs, args.unread, args.record_agreement)


if __name__ == "__main__":
    raise SystemExit(main())
