"""What a sandbox runs: one small frozen type per kind of job, each carrying what its
runner reads and nothing else.

    Job
    ├── CallJob          a Python function called on each input        (runner.python)
    ├── ValuesJob        Python expressions evaluated after a program  (runner.python)
    ├── StdioJob         a Python script fed each input on stdin       (runner.python)
    ├── SplitJob         a Python program, then trusted tests apart    (runner.split)
    ├── NativeCallJob    a C++/JavaScript function on each input       (runner.native)
    ├── NativeStdioJob   a C++/JavaScript program on each stdin        (runner.native)
    ├── ProgramJob       one program with files (SandboxFusion)        (runner.program)
    └── WireFrame        a frame sent as it is: for tests of how the
                         trusted side meets a malformed job

A `SplitJob`'s tests come apart from it (`RunSpec.tests`, an `AssertSuite` or a
`CheckSuite`): the runner reads them only after it has forked off the program.

On the wire a job is its `frame()`: a dict of its fields that are set, tagged with its
`MODE`, marshalled as it always was, so that what a forked job unmarshals is no larger.
The runners inside the job read that frame; `runner.entry` reads the tag, in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

__all__ = [
    "AssertSuite",
    "CallJob",
    "CheckSuite",
    "Job",
    "NativeCallJob",
    "NativeStdioJob",
    "ProgramJob",
    "SplitJob",
    "SplitTests",
    "StdioJob",
    "TestSuite",
    "TestedJob",
    "ValuesJob",
    "WireFrame",
]


class _Framed:
    """A job or suite whose wire frame is its set fields, tagged."""

    MODE: ClassVar[str]
    TAG: ClassVar[str] = "mode"

    def frame(self) -> dict[str, Any]:
        frame: dict[str, Any] = {self.TAG: self.MODE}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is not None:
                frame[f.name] = value
        return frame


@dataclass(frozen=True, slots=True)
class CallJob(_Framed):
    """`fn_name` (a function, or a method of `Solution`) called with each of `inputs`'
    argument lists. `environment`: what the program finds bound without importing it
    (`runner.preludes`). `watch`: whether the program runs under the audit hook that
    notes what it does (`runner.audit`; None: it does)."""

    MODE: ClassVar[str] = "call"
    code: str
    fn_name: str
    inputs: list[Any]
    timeout_s: float
    max_output: int | None = None
    stop_on_failure: bool | None = None
    environment: str | None = None
    watch: bool | None = None


@dataclass(frozen=True, slots=True)
class ValuesJob(_Framed):
    """Each of `exprs` evaluated after the program (and the trusted `prelude`), its
    value sent back for the grader to compare outside. `watch` as `CallJob`'s."""

    MODE: ClassVar[str] = "values"
    code: str
    exprs: list[str]
    timeout_s: float
    max_output: int | None = None
    stop_on_failure: bool | None = None
    environment: str | None = None
    prelude: str | None = None
    watch: bool | None = None


@dataclass(frozen=True, slots=True)
class StdioJob(_Framed):
    """The program run as a script once per input, the input on its stdin. `watch` as
    `CallJob`'s."""

    MODE: ClassVar[str] = "stdio"
    code: str
    inputs: list[str]
    timeout_s: float
    max_output: int | None = None
    stop_on_failure: bool | None = None
    memory_mb: int | None = None
    watch: bool | None = None


@dataclass(frozen=True, slots=True)
class SplitJob(_Framed):
    """The program in one process, the trusted tests (`RunSpec.tests`) in another that
    imports the program's names; see `runner.split`. `watch` as `CallJob`'s."""

    MODE: ClassVar[str] = "split"
    code: str
    timeout_s: float
    max_output: int | None = None
    stop_on_failure: bool | None = None
    environment: str | None = None
    prelude: str | None = None
    watch: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class _NativeJob(_Framed):
    """A C++ or JavaScript program run on each input, after it is built (`gxx`, `node`:
    the toolchains' paths)."""

    language: str
    code: str
    inputs: list[Any]
    timeout_s: float
    max_output: int
    memory_mb: int
    compile_timeout_s: float
    gxx: str | None = None
    node: str | None = None
    stop_on_failure: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NativeCallJob(_NativeJob):
    """`fn_name` called with each of `inputs`' argument lists."""

    MODE: ClassVar[str] = "native_call"
    fn_name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class NativeStdioJob(_NativeJob):
    """The program run once per input, the input on its stdin."""

    MODE: ClassVar[str] = "native_stdio"


@dataclass(frozen=True, slots=True)
class ProgramJob(_Framed):
    """One run of a program with its files, as SandboxFusion's `/run_code` runs it:
    compile (C++), run on `stdin`, then send back the `fetch_files`."""

    MODE: ClassVar[str] = "program"
    language: str
    code: str
    stdin: str
    files: dict[str, bytes]
    fetch_files: list[str]
    compile_timeout_s: float
    run_timeout_s: float
    memory_mb: int
    max_output: int
    max_fetch_bytes: int
    gxx: str | None = None
    node: str | None = None


@dataclass(frozen=True, slots=True)
class AssertSuite(_Framed):
    """A `SplitJob`'s tests: assert statements, after an optional `setup`."""

    TAG: ClassVar[str] = "kind"
    MODE: ClassVar[str] = "asserts"
    tests: list[str]
    setup: str | None = None


@dataclass(frozen=True, slots=True)
class CheckSuite(_Framed):
    """A `SplitJob`'s tests: a HumanEval `check(candidate)` called on `entry_point`,
    with the prompt's trusted `helpers`."""

    TAG: ClassVar[str] = "kind"
    MODE: ClassVar[str] = "check"
    test: str
    entry_point: str
    helpers: str | None = None


@dataclass(frozen=True, slots=True)
class WireFrame:
    """A frame sent exactly as given, valid or not: what tests of the client's, the
    zygote's and the runners' defences send. A verifier never builds one."""

    data: dict[str, Any]

    def frame(self) -> dict[str, Any]:
        return dict(self.data)


# A program run against tests, one record each: what the `code` verifier grades.
TestedJob = CallJob | ValuesJob | StdioJob | SplitJob | NativeCallJob | NativeStdioJob
Job = TestedJob | ProgramJob | WireFrame
SplitTests = AssertSuite | CheckSuite
TestSuite = SplitTests | WireFrame
