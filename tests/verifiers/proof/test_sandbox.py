"""Where the sandbox fails, the item is masked; where the tool fails on the response,
it is not (the shared toolchain seam, `verifiers.compile.steps`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rlvr.sandboxes import RunResult, SandboxUnavailable, Status
from rlvr.verifiers.base import GradeInput, Outcome
from rlvr.verifiers.compile import steps
from rlvr.verifiers.programs import ProgramRunner
from rlvr.verifiers.proof import ProofGroundTruth, ProofParams, ProofVerifier
from tests.verifiers.proof.conftest import ADD_COMM

pytestmark = pytest.mark.usefixtures("coq")
PROOF = "Proof. intros. apply Nat.add_comm. Qed."


class _Sandbox:
    """A sandbox at some isolation level whose runs end as given."""

    backend = "local"

    def __init__(self, level: str, result: RunResult | Exception) -> None:
        self.level = level
        self.result = result

    def isolation(self) -> dict[str, Any]:
        return {"isolation": self.level}

    def run(self, spec: Any) -> RunResult:
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def _grade_on(sandbox: _Sandbox) -> Outcome:
    verifier = ProofVerifier(ProgramRunner(sandbox=sandbox))
    params = ProofParams()
    prepared = verifier.prepare(params, ProofGroundTruth(**ADD_COMM))
    return verifier.verify(GradeInput("", PROOF), params, prepared)


@pytest.mark.parametrize(
    "result",
    [
        RunResult(Status.CRASHED, infra_error="zygote died before the job started"),
        SandboxUnavailable("no user namespaces"),
    ],
    ids=["infra_error", "unavailable"],
)
def test_sandbox_that_fails_to_start_masks(result: Any) -> None:
    out = _grade_on(_Sandbox("full", result))
    assert (out.verdict, out.mask) == ("error", True) and "sandbox" in out.reason


def test_isolation_below_the_policy_masks() -> None:
    out = _grade_on(_Sandbox("rlimits", RunResult(Status.OK)))
    assert (out.verdict, out.mask) == ("error", True) and "rlimits" in out.reason


@pytest.mark.parametrize("tool", ["/nonexistent/coqc", "no-such-tool"])
def test_tool_that_cannot_start_masks(tool: str) -> None:
    run = steps.ToolSandbox(ProgramRunner(), 1024).run([steps.Step("s", [tool], "/tmp", 5)])
    assert run.stopped is not None and run.stopped.mask and "cannot run the tool" in run.stopped.reason


@pytest.mark.parametrize(
    ("result", "verdict"),
    [
        (RunResult(Status.TIMEOUT, records=[{"i": 0, "s": "timeout", "code": None, "out": ""}]), "timeout"),
        (RunResult(Status.OK, records=[{"i": 0, "s": "memory", "code": 86, "out": ""}]), "incorrect"),
        (RunResult(Status.OK, records=[{"i": 0, "s": "ok", "code": 0, "out": "not json"}]), "incorrect"),
        (RunResult(Status.OUTPUT_LIMIT, records=[]), "incorrect"),
    ],
    ids=["timeout", "memory", "garbled", "flood"],
)
def test_job_that_ends_without_a_report_is_not_masked(result: RunResult, verdict: str) -> None:
    run = steps.read_report(result)
    assert run.stopped is not None and run.stopped.verdict == verdict and not run.stopped.mask


def test_report_is_read() -> None:
    report = {"steps": [{"name": "a", "status": "ok", "code": 0, "out": "fine"}]}
    run = steps.read_report(RunResult(Status.OK, records=[{"i": 0, "s": "ok", "out": json.dumps(report) + "\n"}]))
    assert run.stopped is None and run.steps == [steps.StepResult("a", "ok", "fine")]


def test_availability_reports_coq_and_its_version() -> None:
    availability = ProofVerifier().availability()
    assert availability["languages"] == {"coq": True}
    assert availability["coq_version"].startswith("The Coq Proof Assistant, version 8.")
