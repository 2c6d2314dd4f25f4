"""Grading a file of items, offline: what `rlvr grade IN.jsonl -o OUT.jsonl` runs.

Each input line is a /v1/grade item, or a record whose fields the flags map onto one
(`--response-field completion --truth-field answer --verifier math`). Each output line is
the item's result, with `line`, the input line it grades (blank lines are skipped), and
`verifier`.

It streams: lines are read, graded and written a batch at a time, and the latency
percentiles come from a fixed-size histogram, so memory does not grow with the file.
When OUT already holds results (an earlier run was stopped), grading resumes after the
last line written; a torn last line is cut off and graded again.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from rlvr.client import RewardClient, RewardServiceError
from rlvr.results import GradeResult

DEFAULT_BATCH = 1024
# Latency histogram: bins a factor of 1.02 apart, from 0.01 ms up (a percentile is off by
# at most 2%), with a fixed number of bins whatever the file's size.
LATENCY_BIN_RATIO = 1.02
LATENCY_MIN_MS = 0.01
LATENCY_BINS = 1200
ITEM_REF = re.compile(r"items\[(\d+)\]")


@dataclass
class Mapping:
    verifier: str | None
    response: str
    truth: str
    prompt: str
    id: str
    params: dict[str, Any] | None

    def item(self, record: dict[str, Any], where: str, need_response: bool = True) -> dict[str, Any]:
        """The /v1/grade item of `record`; without `need_response` (a dataset checked
        before training has no responses yet), a missing response is empty."""
        if self.response not in record and need_response:
            raise SystemExit(f"{where}: no field {self.response!r} (set --response-field)")
        item: dict[str, Any] = {"response": record.get(self.response, "")}
        verifier = record.get("verifier", self.verifier)
        if verifier is None:
            raise SystemExit(f"{where}: no field 'verifier' and no --verifier")
        item["verifier"] = verifier
        for key, name in (("ground_truth", self.truth), ("prompt", self.prompt), ("id", self.id)):
            if name in record:
                item[key] = record[name]
        for key in ("params", "group", "metadata"):
            if key in record:
                item[key] = record[key]
        if self.params is not None and "params" not in item and isinstance(verifier, str):
            item["params"] = self.params
        if item.get("id") is not None:
            item["id"] = str(item["id"])
        return item


@dataclass
class VerifierSummary:
    count: int = 0
    reward_sum: float = 0.0
    masked: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    # Items that raised each signal (a result's `signals`).
    signals: Counter[str] = field(default_factory=Counter)
    latency_bins: list[int] = field(default_factory=lambda: [0] * LATENCY_BINS)

    def add(self, result: dict[str, Any]) -> None:
        self.count += 1
        self.reward_sum += float(result["reward"])
        self.masked += bool(result["mask"])
        self.verdicts[str(result["verdict"])] += 1
        self.signals.update(str(name) for name in result.get("signals") or ())
        ms = max(LATENCY_MIN_MS, float(result.get("elapsed_ms", 0.0)))
        self.latency_bins[min(LATENCY_BINS - 1, int(math.log(ms / LATENCY_MIN_MS, LATENCY_BIN_RATIO)))] += 1

    def percentile_ms(self, q: float) -> float:
        rank, seen = q * self.count, 0
        for i, n in enumerate(self.latency_bins):
            seen += n
            if n and seen >= rank:
                return float(LATENCY_MIN_MS * LATENCY_BIN_RATIO ** (i + 1))
        return 0.0


def run_grade(args: argparse.Namespace) -> int:
    if args.batch_size < 1:
        raise SystemExit("rlvr grade: --batch-size must be at least 1")
    if not args.input.is_file():
        raise SystemExit(f"rlvr grade: input: no such file: {args.input}")
    mapping = Mapping(
        args.verifier, args.response_field, args.truth_field, args.prompt_field, args.id_field, args.params
    )
    if args.check:
        return run_check(args, mapping)
    if args.output is None:
        raise SystemExit("rlvr grade: --output is required (or --check, to grade nothing)")
    if not args.output.parent.is_dir() or args.output.is_dir():
        raise SystemExit(f"rlvr grade: --output: cannot write a file at {args.output}")
    summaries: dict[str, VerifierSummary] = {}
    done = resume_point(args.output, summaries)
    total = count_lines(args.input)
    console = Console(stderr=True)
    with (
        RewardClient(args.url) as client,
        args.input.open() as src,
        args.output.open("a") as out,
        Progress(
            TextColumn("grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=args.no_progress,
        ) as progress,
    ):
        task = progress.add_task("grade", total=total, completed=done)
        for batch in batches(src, done, args.batch_size):
            lines = [n for n, _ in batch]
            items = [mapping.item(record, f"rlvr grade: {args.input} line {n}") for n, record in batch]
            graded = grade(client, items, lines, args.input, args.strict)
            for n, item, result in zip(lines, items, graded, strict=True):
                label = verifier_label(item["verifier"])
                record = {"line": n, "verifier": label, **result.model_dump(mode="json")}
                out.write(json.dumps(record) + "\n")
                summaries.setdefault(label, VerifierSummary()).add(record)
            out.flush()
            progress.update(task, completed=lines[-1])
    console.print(summary_table(summaries))
    signals = signals_table(summaries)
    if signals is not None:
        console.print(signals)
    return 0


def run_check(args: argparse.Namespace, mapping: Mapping) -> int:
    """Lists the lines `rlvr grade` would mask as invalid, grading none: 1 if there are any."""
    checked = invalid = 0
    with RewardClient(args.url) as client, args.input.open() as src:
        for batch in batches(src, 0, args.batch_size):
            lines = [n for n, _ in batch]
            items = [mapping.item(record, f"rlvr grade: {args.input} line {n}", False) for n, record in batch]
            try:
                refused = client.validate(items)
            except RewardServiceError as exc:
                raise SystemExit(_by_line(exc, lines, args.input)) from None
            for entry in refused:
                errors = "; ".join(_line_refs(e, lines) for e in entry["errors"])
                print(f"{args.input}:{lines[entry['index']]}: {entry['verifier']}: {errors}")
            checked += len(items)
            invalid += len(refused)
    print(f"rlvr grade --check: {checked} lines, {invalid} invalid", file=sys.stderr)
    return 1 if invalid else 0


def grade(
    client: RewardClient, items: list[dict[str, Any]], lines: list[int], path: Path, strict: bool
) -> list[GradeResult]:
    try:
        return client.grade(items, strict=strict).results
    except RewardServiceError as exc:
        raise SystemExit(_by_line(exc, lines, path)) from None


def _by_line(exc: RewardServiceError, lines: list[int], path: Path) -> str:
    """An error answer, for the user: the server names items by their place in the
    batch; the user knows lines."""
    if exc.status >= 500:
        raise exc
    return f"rlvr grade: {path}: {_line_refs(exc.message, lines)}"


def _line_refs(message: str, lines: list[int]) -> str:
    return ITEM_REF.sub(lambda m: f"line {lines[int(m.group(1))]}", message)


def batches(src: TextIO, skip: int, size: int) -> Iterator[list[tuple[int, dict[str, Any]]]]:
    """(line number, record) in batches, from the line after `skip`."""
    batch: list[tuple[int, dict[str, Any]]] = []
    for n, line in enumerate(src, start=1):
        if n <= skip or not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise SystemExit(f"rlvr grade: line {n}: not valid JSON ({exc})") from None
        if not isinstance(record, dict):
            raise SystemExit(f"rlvr grade: line {n}: not a JSON object")
        batch.append((n, record))
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def resume_point(output: Path, summaries: dict[str, VerifierSummary]) -> int:
    """The last input line OUT holds a result for (0 for none), with those results added
    to `summaries`. A torn last line is cut off."""
    if not output.exists():
        return 0
    done, good_bytes = 0, 0
    with output.open("rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                break
            try:
                record = json.loads(raw)
                done = int(record["line"])
            except (ValueError, KeyError, TypeError):
                raise SystemExit(f"rlvr grade: {output} holds something other than results; not resuming") from None
            summaries.setdefault(str(record.get("verifier")), VerifierSummary()).add(record)
            good_bytes += len(raw)
    with output.open("r+b") as f:
        f.truncate(good_bytes)
    return done


def verifier_label(verifier: Any) -> str:
    if isinstance(verifier, str):
        return verifier
    if isinstance(verifier, list):
        return "+".join(str(v["name"] if isinstance(v, dict) else v) for v in verifier)
    return "?"


def count_lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def summary_table(summaries: dict[str, VerifierSummary]) -> Table:
    table = Table(title="rlvr grade")
    for column in ("verifier", "count", "mean reward", "verdicts", "masked", "p50 ms", "p99 ms"):
        text = column in ("verifier", "verdicts")
        table.add_column(column, justify="left" if text else "right", overflow="fold" if text else "ellipsis")
    for name, s in sorted(summaries.items()):
        verdicts = ", ".join(f"{v} {n}" for v, n in s.verdicts.most_common())
        mean = s.reward_sum / s.count if s.count else 0.0
        p50, p99 = s.percentile_ms(0.5), s.percentile_ms(0.99)
        table.add_row(name, str(s.count), f"{mean:.3f}", verdicts, str(s.masked), f"{p50:.1f}", f"{p99:.1f}")
    return table


def signals_table(summaries: dict[str, VerifierSummary]) -> Table | None:
    """Each signal's count and rate, by verifier; None when no item raised one."""
    if not any(s.signals for s in summaries.values()):
        return None
    table = Table(title="signals: what responses tried against the grader")
    for column in ("verifier", "signal", "items", "rate"):
        table.add_column(column, justify="left" if column in ("verifier", "signal") else "right")
    for name, s in sorted(summaries.items()):
        for signal, n in s.signals.most_common():
            table.add_row(name, signal, str(n), f"{n / s.count:.1%}")
    return table
