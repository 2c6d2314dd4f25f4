"""The verifier seam: what a plugin declares and what `verify` returns.

A verifier is a plain class with class attributes and one method. It runs inside a
worker process (never on the event loop), so it may be CPU-bound; the dispatcher kills
it at the item's deadline.

A complete plugin::

    >>> from pydantic import BaseModel
    >>> from rlvr import GradeInput, Outcome, Verdict
    >>> class ExactParams(BaseModel):
    ...     strip: bool = True
    >>> class Exact:
    ...     name = "exact"
    ...     version = "1.0.0"
    ...     description = "Response equals the ground-truth string."
    ...     params_model = ExactParams
    ...     ground_truth_model = str
    ...     def verify(self, item: GradeInput, params: ExactParams, ground_truth: str) -> Outcome:
    ...         response = item.response.strip() if params.strip else item.response
    ...         ok = response == ground_truth
    ...         return Outcome(score=float(ok), verdict=Verdict.CORRECT if ok else Verdict.INCORRECT)
    >>> Exact().verify(GradeInput(prompt="2+2?", response=" 4 "), ExactParams(), "4").verdict
    <Verdict.CORRECT: 'correct'>
    >>> Exact().verify(GradeInput(prompt="2+2?", response=" 4 "), ExactParams(strip=False), "4").score
    0.0

Besides `Verifier`, a plugin may implement any of the optional protocols below
(`Preparing`, `BatchVerifying`, `DeadlineVerifying`, `Availability`, `HasDescription`,
`HasDefaultDeadline`, `HasSignals`); the registry recognises them when it loads the plugin. A verifier
class that runs programs implements `RunsPrograms`: the registry then builds it with the
host's `ProgramRunner` (its sandbox, limits and isolation check) instead of calling it
with no arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from rlvr.results import Details, Verdict

__all__ = [
    "Availability",
    "BatchEntry",
    "BatchVerifying",
    "DeadlineVerifying",
    "Details",
    "GradeInput",
    "HasDefaultDeadline",
    "HasDescription",
    "HasSignals",
    "NoParams",
    "Outcome",
    "Preparing",
    "RunsPrograms",
    "Signal",
    "Verdict",
    "Verifier",
]

if TYPE_CHECKING:
    from rlvr.verifiers.programs import ProgramRunner


class NoParams(BaseModel):
    """Params model for verifiers that take none; unknown keys are rejected."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True)
class GradeInput:
    """What a verifier sees of one item."""

    prompt: str
    response: str


@dataclass(slots=True)
class Outcome:
    """A verifier's judgement of one item.

    `score` is in [0, 1]. `mask=True` means the grader itself failed (sandbox died,
    infrastructure missing): the trainer must drop the item, not learn a 0 from it.
    """

    score: float
    verdict: Verdict
    reason: str = ""
    details: Details = field(default_factory=dict)
    mask: bool = False
    # Names from the verifier's `signals` (`HasSignals`): what the response tried that
    # the verifier guards against. Telemetry: they never change the score or verdict.
    signals: tuple[str, ...] = ()


@runtime_checkable
class Verifier(Protocol):
    """What every verifier has; the registry refuses a plugin that lacks any of it."""

    name: ClassVar[str]
    version: ClassVar[str]
    # A pydantic model class for `params`.
    params_model: ClassVar[type[BaseModel]]
    # Anything pydantic's TypeAdapter accepts: a model, `str`, a union, `None`...
    ground_truth_model: ClassVar[Any]

    def verify(self, item: GradeInput, params: Any, ground_truth: Any) -> Outcome: ...


@runtime_checkable
class Preparing(Protocol):
    """Optional hook: turn (params, ground truth) into a reusable object once.

    Workers cache the result per (verifier, params, ground truth), so the G responses
    of one prompt share one parsed ground truth. When a verifier has `prepare`, its
    `verify` receives the prepared object as `ground_truth`.
    """

    def prepare(self, params: Any, ground_truth: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class BatchEntry:
    """One item of a `verify_many` batch, with its params and (prepared) ground truth:
    what `verify` would have been called with; and its deadline, in seconds of CPU,
    which the batch must hold it to (alone, the worker does)."""

    item: GradeInput
    params: Any
    ground_truth: Any
    deadline_s: float


@runtime_checkable
class BatchVerifying(Protocol):
    """Optional hook: verify many items at once, e.g. with all their sandbox jobs in
    flight together, where `verify` would wait for each in turn.

    A worker hands a batch of at most `max_batch` items of this verifier to
    `verify_many`, which returns one entry per item, in order: its `Outcome`, or None
    when the batch cannot judge the item fairly (a run that timed out while sharing
    the machine with the rest of the batch): the worker then calls `verify` for it
    alone, under its own deadline. Each item's deadline must hold inside the batch (the
    code verifier caps every job's CPU and wall time at it, and leaves a job stopped
    there to `verify`). The worker's backstop stops a batch that used the CPU of all its
    deadlines, or that is past the stall limit of the longest with nothing of its own
    running, and verifies its items again one at a time.
    """

    max_batch: ClassVar[int]

    def verify_many(self, entries: Sequence[BatchEntry]) -> list[Outcome | None]: ...


@runtime_checkable
class DeadlineVerifying(Protocol):
    """Optional hook: `verify`, told the item's deadline (`entry.deadline_s`, seconds,
    which the worker holds it to). A verifier that bounds its own work to end inside
    the deadline (the code verifier stops a job in time to grade what it did) must
    otherwise assume its default one, and so would cut short an item whose request
    asked for longer. When a verifier has it, the worker calls it instead of `verify`.
    """

    def verify_within(self, entry: BatchEntry) -> Outcome: ...


@runtime_checkable
class Availability(Protocol):
    """Optional hook: report what parts of the verifier work on this host
    (e.g. which language toolchains are installed). Shown by `GET /v1/verifiers`."""

    def availability(self) -> dict[str, Any]: ...


@runtime_checkable
class HasDescription(Protocol):
    """Optional: one line for `GET /v1/verifiers`."""

    description: ClassVar[str]


@dataclass(frozen=True, slots=True)
class Signal:
    """One name of a verifier's signal vocabulary, as `GET /v1/verifiers` lists it: what
    it means, in one line, and a response (or program) that raises it."""

    description: str
    example: str


@runtime_checkable
class HasSignals(Protocol):
    """Optional: the signals the verifier may put in an `Outcome` (name -> `Signal`).
    Names are lower snake case; a name an outcome carries that is not here is dropped."""

    signals: ClassVar[Mapping[str, Signal]]


@runtime_checkable
class HasDefaultDeadline(Protocol):
    """Optional: the item deadline, in seconds, when the request sets none (the
    service's default applies otherwise)."""

    default_deadline_s: ClassVar[float | None]


@runtime_checkable
class RunsPrograms(Protocol):
    """A verifier class whose instances run programs: the registry builds it with
    `from_runner(runner)`, handing it the host's `ProgramRunner`
    (`rlvr.verifiers.programs`), and calls no other constructor."""

    @classmethod
    def from_runner(cls, runner: ProgramRunner) -> Verifier: ...
