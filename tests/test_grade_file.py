"""`rlvr grade IN.jsonl -o OUT.jsonl`: a mixed file, field mapping, resume, bad lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rlvr.cli import main

GOOD = "<think>a</think><answer>4</answer>"
# A data set's own layout: `completion` and `answer`, the verifier from the flag unless a
# line names its own.
LINES: list[dict[str, Any]] = [
    {"completion": "so \\boxed{4}", "answer": "4"},
    {"completion": "so \\boxed{5}", "answer": "4", "uid": 7},
    {"completion": GOOD, "verifier": "format"},
    {"completion": "fine", "verifier": "crashy"},
    {"completion": "raise", "verifier": "crashy"},  # the grader fails: masked
    {"completion": GOOD, "verifier": [{"name": "format", "weight": 0.5}, {"name": "crashy", "weight": 0.5}]},
]
EXPECTED = [(1.0, False), (0.0, False), (1.0, False), (1.0, False), (0.0, True), (1.0, False)]
FLAGS = ["--response-field", "completion", "--truth-field", "answer", "--id-field", "uid", "--verifier", "math"]


def write_input(path: Path) -> Path:
    # A blank line is skipped, and line numbers still count it.
    text = "\n".join(json.dumps(line) for line in LINES[:3]) + "\n\n" + "\n".join(json.dumps(x) for x in LINES[3:])
    path.write_text(text + "\n")
    return path


def grade(args: list[str]) -> int:
    return main(["grade", *args, "--no-progress", "--batch-size", "2"])


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_mixed_file(live_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out = write_input(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"
    assert grade([str(src), "-o", str(out), "--url", live_server, *FLAGS]) == 0
    results = read(out)
    assert [(r["reward"], r["mask"]) for r in results] == EXPECTED
    assert [r["line"] for r in results] == [1, 2, 3, 5, 6, 7]
    assert [r["verifier"] for r in results] == ["math", "math", "format", "crashy", "crashy", "format+crashy"]
    assert results[1]["id"] == "7"
    table = capsys.readouterr().err
    for name in ("math", "format", "crashy", "p99 ms"):
        assert name in table
    assert "incorrect 1" in table  # math's verdicts
    assert "signals" not in table  # none raised: no table of them


def test_the_summary_counts_each_signal(live_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hedges = ["\\boxed{3} or \\boxed{4}", "it is 4, or maybe \\boxed{3} or \\boxed{4}"]
    lines = [{"completion": c, "answer": "4"} for c in [*hedges, "\\boxed{4}", "<think>\\boxed{4}</think>Done."]]
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert grade([str(src), "-o", str(out), "--url", live_server, *FLAGS]) == 0
    assert [r["signals"] for r in read(out)] == [["hedge"], ["hedge"], [], ["answer_in_thinking_only"]]
    table = capsys.readouterr().err
    rows = [line.replace("│", " ").split() for line in table.splitlines()]
    assert ["math", "hedge", "2", "50.0%"] in rows, table
    assert ["math", "answer_in_thinking_only", "1", "25.0%"] in rows, table


def test_resume_after_a_stop_mid_write(live_server: str, tmp_path: Path) -> None:
    src, out = write_input(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"
    assert grade([str(src), "-o", str(out), "--url", live_server, *FLAGS]) == 0
    full = read(out)
    # Stopped after three results, in the middle of writing the fourth.
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:3]) + lines[3][:10])
    assert grade([str(src), "-o", str(out), "--url", live_server, *FLAGS]) == 0
    resumed = read(out)
    assert resumed[:3] == full[:3]
    assert [(r["line"], r["reward"], r["mask"]) for r in resumed] == [(r["line"], r["reward"], r["mask"]) for r in full]
    # Each line once: the torn line was cut off and graded again, nothing else twice.
    assert len(resumed) == len(full)


def test_bad_lines_name_the_line_and_field(live_server: str, tmp_path: Path) -> None:
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps({"response": "x", "verifier": "math"}) + "\n" + json.dumps({"response": 3}) + "\n")
    with pytest.raises(SystemExit, match=r"line 2: no field 'verifier'"):
        grade([str(src), "-o", str(out), "--url", live_server])
    src.write_text(json.dumps({"response": "x", "verifier": "math"}) + "\n{not json\n")
    with pytest.raises(SystemExit, match=r"line 2: not valid JSON"):
        grade([str(src), "-o", str(out), "--url", live_server])
    src.write_text(json.dumps({"completion": "x", "verifier": "math"}) + "\n")
    with pytest.raises(SystemExit, match=r"no field 'response'"):
        grade([str(src), "-o", str(out), "--url", live_server])
    src.write_text("\n" + json.dumps({"response": 3, "verifier": "math"}) + "\n")
    with pytest.raises(SystemExit, match=r"line 2\.response"):
        grade([str(src), "-o", str(out), "--url", live_server])


def test_in_process_when_no_url(tmp_path: Path) -> None:
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps({"response": GOOD, "verifier": "format"}) + "\n")
    assert grade([str(src), "-o", str(out)]) == 0
    assert [(r["reward"], r["verdict"]) for r in read(out)] == [(1.0, "correct")]


@pytest.mark.parametrize(
    ("input_name", "output_name", "message"),
    [
        ("missing.jsonl", "out.jsonl", r"input: no such file: .*missing\.jsonl"),
        (".", "out.jsonl", r"input: no such file"),  # a directory
        ("in.jsonl", "no/such/dir/out.jsonl", r"--output: cannot write a file at"),
        ("in.jsonl", ".", r"--output: cannot write a file at"),
    ],
)
def test_unusable_paths_are_named_not_a_traceback(
    tmp_path: Path, input_name: str, output_name: str, message: str
) -> None:
    (tmp_path / "in.jsonl").write_text('{"response": "4", "verifier": "format"}\n')
    with pytest.raises(SystemExit, match=message):
        main(["grade", str(tmp_path / input_name), "-o", str(tmp_path / output_name), "--no-progress"])


def test_check_lists_invalid_lines_and_grades_nothing(
    live_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "dataset.jsonl"
    rows = [
        {"prompt": "p", "verifier": "format"},  # no response yet: a dataset before training
        {"prompt": "p", "verifier": "format", "params": {"preset": "nope"}},
        {"prompt": "p", "verifier": "exact_match", "ground_truth": {"a": 1}},
    ]
    src.write_text("\n".join(json.dumps(r) for r in rows[:2]) + "\n\n" + json.dumps(rows[2]) + "\n")
    assert grade([str(src), "--check", "--url", live_server]) == 1
    printed = capsys.readouterr()
    reports = printed.out.splitlines()
    assert len(reports) == 2
    assert reports[0].startswith(f"{src}:2: format: params.preset")
    assert reports[1].startswith(f"{src}:4: exact_match: ground_truth")
    assert "3 lines, 2 invalid" in printed.err
    src.write_text(json.dumps(rows[0]) + "\n")
    assert grade([str(src), "--check", "--url", live_server]) == 0
    # A request the service cannot grade at all is an error naming the line.
    src.write_text(json.dumps(rows[0]) + "\n" + json.dumps({"verifier": "nope"}) + "\n")
    with pytest.raises(SystemExit, match=r"line 2\.verifier: unknown verifier 'nope'"):
        grade([str(src), "--check", "--url", live_server])


def test_an_invalid_line_is_masked_or_stops_a_strict_run(live_server: str, tmp_path: Path) -> None:
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    lines = [{"response": GOOD, "verifier": "format"}, {"response": GOOD, "verifier": "format", "params": {"x": 1}}]
    src.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert grade([str(src), "-o", str(out), "--url", live_server]) == 0
    results = read(out)
    assert [(r["reward"], r["verdict"], r["mask"]) for r in results] == [(1.0, "correct", False), (0.0, "error", True)]
    assert "params.x: Extra inputs are not permitted" in results[1]["reason"]
    out.unlink()
    with pytest.raises(SystemExit, match=r"line 2\.params\.x: Extra inputs"):
        grade([str(src), "-o", str(out), "--url", live_server, "--strict"])


def test_output_is_required_unless_checking(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_text('{"response": "4", "verifier": "format"}\n')
    with pytest.raises(SystemExit, match="--output is required"):
        main(["grade", str(tmp_path / "in.jsonl")])
