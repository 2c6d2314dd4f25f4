"""What a program can cost the trusted side (issue 10, class 9): the client compiles
only small, shallow programs, refuses oversized ones as the program's own failure,
and everything else compiles inside the job, where a crash or a slow compile is the
program's problem. Families are generated over the shapes that make CPython's
compiler slow or deep."""

from __future__ import annotations

import pytest

from rlvr.sandboxes import Limits, RunSpec, Status
from rlvr.sandboxes.jobs import AssertSuite, CallJob, SplitJob, ValuesJob, WireFrame
from rlvr.sandboxes.local.sandbox import LocalSandbox
from rlvr.sandboxes.runner import core, python


def fill(prefix: str, unit: str, suffix: str, size: int) -> str:
    return prefix + unit * max(1, (size - len(prefix) - len(suffix)) // len(unit)) + suffix


# Shapes whose compile time or depth grows fastest with their size.
SHAPES = {
    "lambdas": ("x = ", "lambda: ", "1"),
    "fstring": ("x = f'", "{1}", "'"),
    "unary": ("x = ", "-", "1"),
    "not": ("x = ", "not ", "1"),
    "binop": ("x = ", "1+", "1"),
    "power": ("x = ", "2**", "2"),
    "attributes": ("x = a", ".b", ""),
    "calls": ("x = f", "()", ""),
    "subscripts": ("x = a", "[0]", ""),
    "ifexp": ("x = ", "1 if a else ", "1"),
    "compare": ("x = ", "1<", "1"),
    "boolop": ("x = ", "a and ", "1"),
    "tuple": ("x = (", "1,", ")"),
    "strings": ("x = (", "'a' ", ")"),
    "elif": ("if a: pass\n", "elif a: pass\n", ""),
}
MODES = ["call", "values", "split"]


def job(mode: str, code: str) -> RunSpec:
    limits = Limits(wall_s=15, cpu_s=15)
    if mode == "call":
        return RunSpec(CallJob(code, "f", [[]], timeout_s=5), limits)
    if mode == "values":
        return RunSpec(ValuesJob(code, ["f()"], timeout_s=5), limits)
    return RunSpec(SplitJob(code, timeout_s=5), limits, AssertSuite(tests=["assert f() == 1"], setup=None))


@pytest.mark.parametrize("size", [python.PRECOMPILE_MAX_CHARS + 1, 64 * 1024, 256 * 1024])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_client_leaves_big_programs_to_the_job(shape: str, size: int) -> None:
    spec = {"mode": "call", "code": fill(*SHAPES[shape], size) + "\ndef f():\n    return 1\n"}
    assert python.precompile(spec) is None
    assert "program" not in spec


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_client_compiles_small_programs(shape: str) -> None:
    prefix, unit, suffix = SHAPES[shape]
    code = prefix + unit * 3 + suffix + "\ndef f():\n    return 1\n"
    spec = {"mode": "call", "code": code}
    if python.precompile(spec) is None:  # else a load error, known without running
        assert "program" in spec


@pytest.mark.parametrize("count", [python.PRECOMPILE_MAX_LAMBDAS + 1, 500])
def test_nested_lambdas_compile_in_the_job_even_when_short(count: int) -> None:
    spec = {"mode": "call", "code": "x = " + "lambda: " * count + "1\n"}
    assert len(spec["code"]) < python.PRECOMPILE_MAX_CHARS
    assert python.precompile(spec) is None and "program" not in spec


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_hostile_shapes_compile_in_the_job_without_masking(sb: LocalSandbox, shape: str, mode: str) -> None:
    code = fill(*SHAPES[shape], 200 * 1024) + "\ndef f():\n    return 1\n"
    result = sb.run(job(mode, code))
    assert result.infra_error is None, result
    assert result.records, result  # a load error, a crash of the compiler or the value: the program's


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("size", [python.PRECOMPILE_MAX_CHARS + 1, 100_000, 1_000_000])
def test_big_correct_programs_still_pass(sb: LocalSandbox, mode: str, size: int) -> None:
    helpers = "".join(f"def g{i}(a):\n    return a + {i}\n" for i in range(size // 28 + 10))
    code = helpers + "def f():\n    return 1\n"
    assert len(code) > python.PRECOMPILE_MAX_CHARS
    result = sb.run(job(mode, code))
    assert result.status == Status.OK and result.infra_error is None
    last = result.records[-1]
    assert last.get("s") in ("ok", "pass") and last.get("v", 1) == 1, result.records


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where", ["start", "end"])
def test_big_broken_programs_fail_to_load_in_the_job(sb: LocalSandbox, mode: str, where: str) -> None:
    body = fill("", "def g(a):\n    return a\n", "", 40_000)
    code = ("def f(:\n" + body) if where == "start" else (body + "def f(:\n    return 1\n")
    result = sb.run(job(mode, code))
    assert result.infra_error is None and result.status == Status.OK
    loads = [r for r in result.records if "load" in r]
    assert loads and loads[-1]["load"] == "error" and "SyntaxError" in loads[-1]["e"]


@pytest.mark.parametrize("mode", [*MODES, "stdio", "native_stdio"])
def test_oversized_programs_are_the_programs_failure(sb: LocalSandbox, mode: str) -> None:
    code = "# " + "x" * core.MAX_PROGRAM_CHARS + "\ndef f():\n    return 1\n"
    spec = job(mode, code) if mode in MODES else RunSpec(WireFrame({"mode": mode, "code": code, "inputs": ["1\n"]}))
    result = sb.run(spec)
    assert result.infra_error is None and result.status == Status.OK
    [record] = result.records
    assert record["load"] == "error" and "longer than" in record["e"]


def test_a_program_at_the_size_cap_runs(sb: LocalSandbox) -> None:
    tail = "\ndef f():\n    return 1\n"
    code = "#" + "x" * (core.MAX_PROGRAM_CHARS - len(tail) - 1) + tail
    assert len(code) == core.MAX_PROGRAM_CHARS
    result = sb.run(job("call", code))
    assert result.infra_error is None and result.records[-1] == {"i": 0, "s": "ok", "v": 1}
