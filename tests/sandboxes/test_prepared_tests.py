"""`split.prepare_tests`: the trusted client works out once what every split job with
the same tests would otherwise work out in its own forked pages (the names the tests
read from the program, their code objects). The job must behave exactly as it does
when it works them out itself."""

from __future__ import annotations

from types import CodeType
from typing import Any

import pytest

from rlvr.sandboxes import RunSpec, Status
from rlvr.sandboxes.jobs import AssertSuite, CheckSuite, SplitJob, SplitTests
from rlvr.sandboxes.local.sandbox import LocalSandbox
from rlvr.sandboxes.runner import names, python, split

PROGRAM = "import math\ndef f(x):\n    return x * 2\ndef helper():\n    return 7\nsorted = None\n"
TESTS: list[SplitTests] = [
    CheckSuite(test="def check(candidate):\n    assert candidate(2) == 4\n", entry_point="f"),
    CheckSuite(test="import math\ndef check(c):\n    assert c(3) == 6 and math.pi > 3\n", entry_point="f"),
    AssertSuite(tests=["assert f(2) == 4", "assert helper() == 7", "assert sorted([2, 1]) == [1, 2]"]),
    AssertSuite(tests=["assert g(2) == 4"], setup="from solution import f as g"),
    AssertSuite(tests=["x = f(1)\nassert x == 2", "assert f(2) == 4 == x"]),
    AssertSuite(tests=["assert f(2) == 4", "assert f(2 ==", "assert f(3) == 6"]),
    AssertSuite(tests=["import solution\nassert solution.f(1) == 2", "from solution import *\nassert f(5) == 10"]),
    AssertSuite(tests=["assert f(1) == 2  # " + "x" * (python.PRECOMPILE_MAX_CHARS + 1)]),
]


@pytest.mark.parametrize("suite", TESTS)
def test_prepared_tests_carry_the_reads_and_code_the_job_would_work_out(suite: SplitTests) -> None:
    tests = suite.frame()  # what the runner's side reads
    prepared = split.prepare_tests(tests)
    sources = split._sources(tests)
    assert prepared["reads"] == names.global_reads(sources)
    assert prepared["entry"] == (tests["entry_point"] if tests["kind"] == "check" else names.assert_entry(sources))
    assert len(prepared["code"]) == len(sources)
    for code, (source, filename) in zip(prepared["code"], sources, strict=True):
        try:
            expected = python.compile_source(source, filename) if len(source) <= python.PRECOMPILE_MAX_CHARS else None
        except SyntaxError:
            expected = None
        assert (type(code) is CodeType) == (expected is not None)
        if expected is not None:
            assert code.co_code == expected.co_code and code.co_filename == filename
    assert {k: v for k, v in prepared.items() if k not in ("reads", "entry", "code")} == tests
    assert split.prepare_tests(dict(tests)) is prepared  # the G responses to one prompt share it


@pytest.mark.parametrize("tests", TESTS)
def test_a_job_with_prepared_tests_records_what_one_without_does(sb: LocalSandbox, tests: SplitTests) -> None:
    """The client always sends prepared tests; a tests frame without them (an older
    client) is worked out in the job. Both give the same records."""
    spec = RunSpec(SplitJob(code=PROGRAM, timeout_s=5), tests=tests)
    prepared = sb.run(spec)
    monkey = pytest.MonkeyPatch()
    monkey.setattr(split, "prepare_tests", lambda t: t)
    try:
        unprepared = sb.run(spec)
    finally:
        monkey.undo()
    assert prepared.status == unprepared.status == Status.OK
    assert prepared.records == unprepared.records


@pytest.mark.parametrize("bad", [{}, {"kind": "asserts"}, {"kind": "check"}, {"kind": "asserts", "tests": 5}])
def test_tests_it_cannot_read_go_as_they_are(bad: dict[str, Any]) -> None:
    assert split.prepare_tests(bad) is bad


def test_the_cache_of_prepared_tests_is_bounded() -> None:
    for i in range(split.PREPARED_TESTS_ENTRIES * 2):
        split.prepare_tests({"kind": "asserts", "tests": [f"assert f({i}) == {2 * i}"]})
    assert len(split._prepared_tests) <= split.PREPARED_TESTS_ENTRIES
