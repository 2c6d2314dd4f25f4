"""The verifier seam, params, caching and details; DoS inputs in a subprocess."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from rlvr.service.work import Unit, UnitRunner, canonical, prepared_key, unit_key
from rlvr.verifiers.base import GradeInput, Outcome, Verdict
from rlvr.verifiers.math import MathParams, MathVerifier, PreparedGold, compare, symbolic, verifier
from rlvr.verifiers.math.compare import view
from rlvr.verifiers.registry import Registry

SRC = Path(__file__).resolve().parents[3] / "src"
V = MathVerifier()


def grade(gold: object, response: str, **params: Any) -> Outcome:
    p = MathParams(**params)
    return V.verify(GradeInput("", response), p, V.prepare(p, gold))


def test_registry_loads_math() -> None:
    loaded = Registry(use_entry_points=False).get("math")
    assert loaded.prepare is not None
    assert loaded.default_deadline_s == 2.0
    assert "extraction" in loaded.schemas["params"]["properties"]


def test_params_reject_unknown_and_bad_values() -> None:
    with pytest.raises(ValidationError):
        MathParams(unknown=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        MathParams(extraction="lenient")
    with pytest.raises(ValidationError):
        MathParams(rel_tol=float("nan"))
    with pytest.raises(ValidationError):
        MathParams(rel_tol=-1)


def test_ground_truth_accepts_numbers() -> None:
    adapter: TypeAdapter[object] = TypeAdapter(MathVerifier.ground_truth_model)
    assert adapter.validate_python(7) == 7
    assert grade(7, r"\boxed{7}").verdict is Verdict.CORRECT
    assert grade(0.5, r"\boxed{\frac12}").verdict is Verdict.CORRECT
    assert grade(1e-7, r"\boxed{10^{-7}}").verdict is Verdict.CORRECT
    assert grade("7", r"\boxed{7}").verdict is Verdict.CORRECT


def test_empty_ground_truth_is_a_masked_error() -> None:
    out = grade("   ", r"\boxed{7}")
    assert out.verdict is Verdict.ERROR and out.mask


def test_prepare_is_cached_per_gold_string() -> None:
    verifier.prepare_gold.cache_clear()
    a = V.prepare(MathParams(), r"The sum is $\boxed{12}$.")
    b = V.prepare(MathParams(extraction="boxed"), r"The sum is $\boxed{12}$.")
    assert isinstance(a, PreparedGold) and a is b and a.answer == "12"
    assert verifier.prepare_gold.cache_info().hits >= 1


def test_verify_accepts_raw_or_prepared_gold() -> None:
    item = GradeInput("", r"\boxed{\dfrac{1}{2}}")
    raw = V.verify(item, MathParams(), r"\frac{1}{2}")
    prepared = V.verify(item, MathParams(), V.prepare(MathParams(), r"\frac{1}{2}"))
    assert raw.verdict is prepared.verdict is Verdict.CORRECT
    assert raw.details == prepared.details


@pytest.mark.parametrize(
    ("gold", "answer", "stage"),
    [
        ("12", "12", "string"),
        ("12", "12.0", "numeric"),
        (r"\frac12", "0.5", "numeric"),
        ("(1, 2)", "(1,2.0)", "structure"),
        (r"2\sqrt{3}", r"\sqrt{12}", "symbolic"),
    ],
)
def test_details_name_the_deciding_stage(gold: str, answer: str, stage: str) -> None:
    out = grade(gold, f"so \\boxed{{{answer}}}.")
    assert out.verdict is Verdict.CORRECT
    details = out.details
    assert details["stage"] == stage
    assert details["extracted"] == answer
    assert details["extraction"] == "boxed"
    assert "normalized" in details and "gold_normalized" in details


def test_hedge_is_flagged_in_details() -> None:
    out = grade("4", r"\boxed{3} or \boxed{4}")
    assert out.verdict is Verdict.INCORRECT and out.details["hedge"] is True
    out = grade("4", r"\boxed{3 \text{ or } 4}")
    assert out.verdict is Verdict.INCORRECT and out.details["hedge"] is True
    assert "hedging" in out.reason


def test_length_caps_are_params() -> None:
    long_answer = "1" * 50
    assert grade(long_answer, f"\\boxed{{{long_answer}}}").verdict is Verdict.CORRECT
    out = grade(long_answer, f"\\boxed{{{long_answer}}}", max_answer_chars=20)
    assert out.verdict is Verdict.INCORRECT and out.details["stage"] == "guard"
    out = grade("1", "x" * 100 + r"\boxed{1}", max_response_chars=50)
    assert out.verdict is Verdict.INCORRECT


def test_views_are_cached() -> None:
    view.cache_clear()
    view(r"\frac{1}{2}")
    view(r"\frac{1}{2}")
    assert view.cache_info().hits == 1


def test_through_the_unit_runner() -> None:
    """As a worker runs it: params validated, gold prepared once, Outcome converted."""
    runner = UnitRunner(Registry(use_entry_points=False))
    results = []
    for response in (r"\boxed{4}", r"\boxed{5}", "no answer"):
        pk = prepared_key("math", MathVerifier.version, canonical({}), canonical("4"))
        unit = Unit(unit_key(pk, "", response), pk, "math", {}, "4", "", response, 2.0)
        results.append(runner.run(unit))
    assert [r.verdict for r in results] == ["correct", "incorrect", "no_answer"]
    assert all(not r.mask for r in results)


def test_symbolic_budget_gives_timeout() -> None:
    # Parses and decisions are cached per process; start cold so the budget is needed.
    symbolic.to_sympy.cache_clear()
    compare.decide_cached.cache_clear()
    out = grade("x^2+2x+1", r"\boxed{(x+1)^2}", symbolic_budget_s=1e-9)
    assert out.verdict is Verdict.TIMEOUT and out.score == 0.0 and not out.mask
    # Numbers never touch the symbolic stage, so no budget can time them out.
    assert grade("12", r"\boxed{12.0}", symbolic_budget_s=1e-9).verdict is Verdict.CORRECT
    assert grade("x^2+2x+1", r"\boxed{(x+1)^2}").verdict is Verdict.CORRECT


DOS_SCRIPT = textwrap.dedent(
    r"""
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from rlvr.verifiers.base import GradeInput
    from rlvr.verifiers.math import MathParams, MathVerifier
    v, p = MathVerifier(), MathParams()
    inputs = [
        r"\boxed{9^{9^{9^{9}}}}",
        r"\boxed{1000000!}",
        r"\boxed{(10^{10^{10}})!}",
        r"\boxed{" + "{" * 5000 + "3" + "}" * 5000 + "}",
        r"\boxed{" + "{" * 400 + "3" + "}" * 400 + "}",
        r"\boxed{" + r"\sqrt{" * 150 + "3" + "}" * 150 + "}",
        "\\boxed{" * 50000 + "3" + "}" * 50000,
        "{" * 1_000_000,
        "a" * 1_000_000 + r"\boxed{3}",
        r"\boxed{" + "x^" * 300 + "2}",
        r"\boxed{" + "+".join(["x"] * 300) + "}",
        r"\boxed{\sin(10^{10^{5}})}",
        r"\boxed{\binom{10^{9}}{5 \cdot 10^{8}}}",
        r"\boxed{2^{2^{2^{2^{2^{2}}}}}}",
        # latex2sympy's ANTLR parser is exponential on these; the budget stops it.
        r"\boxed{" + "|x|" * 20 + "}",
        r"\boxed{" + "x^2_" * 20 + "1}",
        r"\boxed{" + "+".join(["x^{x^{x^{x^{x^{x}}}}}"] * 10) + "}",
    ]
    worst = 0.0
    for r in inputs:
        t = time.process_time()
        out = v.verify(GradeInput("", r), p, v.prepare(p, "3"))
        worst = max(worst, time.process_time() - t)
        assert out.verdict.value in ("incorrect", "no_answer", "timeout"), (r[:40], out)
    # Inside the dispatcher's deadline of 2 s of CPU, so it never has to kill.
    assert worst < 1.9, worst
    print("ok", worst)
    """
)


def test_pathological_inputs_finish_by_themselves() -> None:
    """Each returns a non-correct verdict on its own, without the dispatcher's kill."""
    proc = subprocess.run([sys.executable, "-c", DOS_SCRIPT, str(SRC)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("ok")
