"""A program that rebinds what the runner calls (SandboxFusion's anti-hack header and the
`reliability_guard` its LiveCodeBench harness runs) breaks nothing that reports its own
result, in every mode; and a `/run_code` program imports the files sent beside it.

`SANDBOXFUSION_HEADER` is `PY_HEADER` of SandboxFusion's `sandbox/utils/antihack.py`
(github.com/bytedance/SandboxFusion, commit 469de0845cb7d665bc68044d541aa3aa28c5b30a,
Apache-2.0), verbatim. `RELIABILITY_GUARD` is the body of `reliability_guard` in its
`sandbox/datasets/live_code_bench.py` at that commit, run at a module's top level
(where `__builtins__` is the module, not its dict, so `help` is set through `builtins`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rlvr.sandboxes import Limits, RunSpec, Status
from rlvr.sandboxes.jobs import AssertSuite, CallJob, Job, ProgramJob, SplitJob, StdioJob, ValuesJob
from rlvr.sandboxes.local.sandbox import LocalSandbox, get_local_sandbox
from rlvr.sandboxes.program_steps import program_steps
from tests.services import require

SANDBOXFUSION_HEADER = """
# --- anti-hack code begin
import os
import sys
exit = None
os._exit = None
sys.exit = None
# --- anti-hack code end
"""

RELIABILITY_GUARD = """
import faulthandler
faulthandler.disable()

import builtins

builtins.exit = None
builtins.quit = None

import os

os.environ["OMP_NUM_THREADS"] = "1"

os.kill = None
os.system = None
os.putenv = None
os.remove = None
os.removedirs = None
os.rmdir = None
os.fchdir = None
os.setuid = None
os.fork = None
os.forkpty = None
os.killpg = None
os.rename = None
os.renames = None
os.truncate = None
os.replace = None
os.unlink = None
os.fchmod = None
os.fchown = None
os.chmod = None
os.chown = None
os.chroot = None
os.fchdir = None
os.lchflags = None
os.lchmod = None
os.lchown = None
os.getcwd = None
os.chdir = None

import shutil

shutil.rmtree = None
shutil.move = None
shutil.chown = None

import subprocess

subprocess.Popen = None  # type: ignore

builtins.help = None

import sys

sys.modules["ipdb"] = None
sys.modules["joblib"] = None
sys.modules["resource"] = None
sys.modules["psutil"] = None
sys.modules["tkinter"] = None
"""

HEADERS = {"sandboxfusion": SANDBOXFUSION_HEADER, "reliability_guard": RELIABILITY_GUARD}
FUNCTION = "def f(x):\n    return x * 2\n"
SCRIPT = "print(int(input()) * 2)\n"
LIMITS = Limits(wall_s=60, cpu_s=60)


@pytest.fixture(scope="module")
def box() -> Iterator[LocalSandbox]:
    sandbox = get_local_sandbox()
    if sandbox.isolation()["isolation"] != "full":
        require(False, "full isolation (run as root)")
    yield sandbox


def _program(code: str, **extra: Any) -> ProgramJob:
    fields: dict[str, Any] = {
        "language": "python",
        "code": code,
        "stdin": "",
        "files": {},
        "fetch_files": [],
        "compile_timeout_s": 10,
        "run_timeout_s": 10,
        "memory_mb": 512,
        "max_output": 1 << 16,
        "max_fetch_bytes": 1 << 16,
    }
    return ProgramJob(**(fields | extra))


def _tested(mode: str, header: str) -> tuple[Job, AssertSuite | None]:
    if mode == "call":
        return CallJob(code=header + FUNCTION, fn_name="f", inputs=[[1], [2]], timeout_s=5), None
    if mode == "values":
        return ValuesJob(code=header + FUNCTION, exprs=["f(1)", "f(2)"], timeout_s=5), None
    if mode == "split":
        return SplitJob(code=header + FUNCTION, timeout_s=5), AssertSuite(
            tests=["assert f(1) == 2", "assert f(2) == 4"]
        )
    return StdioJob(code=header + SCRIPT, inputs=["1\n", "2\n"], timeout_s=5, max_output=1 << 16), None


def _passed(mode: str, records: list[dict[str, Any]]) -> list[bool]:
    tests = sorted((r for r in records if type(r.get("i")) is int), key=lambda r: r["i"])
    if mode in ("call", "values"):
        from rlvr.sandboxes.runner import wire

        return [r.get("s") == "ok" and wire.decode(r["v"]) == 2 * (i + 1) for i, r in enumerate(tests)]
    if mode == "stdio":
        return [r.get("s") == "ok" and r.get("out") == f"{2 * (i + 1)}\n" for i, r in enumerate(tests)]
    return [r.get("s") == "pass" for r in tests]


@pytest.mark.parametrize("header", sorted(HEADERS))
@pytest.mark.parametrize("mode", ["call", "values", "stdio", "split"])
def test_a_header_breaks_no_tested_mode(box: LocalSandbox, mode: str, header: str) -> None:
    job, tests = _tested(mode, HEADERS[header])
    result = box.run(RunSpec(job, LIMITS, tests))
    assert result.status == Status.OK and result.exit_code == 0 and not result.infra_error, result
    assert _passed(mode, result.records) == [True, True], result
    assert "rlvr" not in result.stderr, result  # no traceback of the runner's own


@pytest.mark.parametrize("header", sorted(HEADERS))
def test_a_header_breaks_no_program_run(box: LocalSandbox, header: str) -> None:
    result = box.run(RunSpec(_program(HEADERS[header] + "print('hello')\n"), LIMITS))
    run = program_steps(result).get("run")
    assert result.status == Status.OK and run, result
    assert (run["s"], run["code"], run["out"], run["err"]) == ("ok", 0, "hello\n", ""), result


@pytest.mark.parametrize(
    "exit_call", ["exit(0)", "import os\nos._exit(0)", "import sys\nsys.exit(0)"], ids=["exit", "os_exit", "sys_exit"]
)
def test_an_exit_under_the_header_fails_as_the_program(box: LocalSandbox, exit_call: str) -> None:
    """SandboxFusion's own anti-hack test: each exit is then a TypeError, the program's
    failure (exit code 1, its traceback), never the runner's."""
    result = box.run(RunSpec(_program(SANDBOXFUSION_HEADER + exit_call + "\n"), LIMITS))
    run = [program_steps(result)["run"]]
    assert not result.infra_error and run[0]["code"] == 1, result
    assert "TypeError" in run[0]["err"] and "rlvr" not in run[0]["err"], result


def test_a_program_imports_a_file_sent_beside_it(box: LocalSandbox) -> None:
    code = "import sys\nimport helper\nprint(helper.double(21), sys.path[0])\n"
    job = _program(code, files={"helper.py": b"def double(x):\n    return 2 * x\n"})
    run = program_steps(box.run(RunSpec(job, LIMITS))).get("run")
    assert run and (run["s"], run["out"]) == ("ok", "42 /tmp\n"), run


def test_a_program_package_beside_it_imports_too(box: LocalSandbox) -> None:
    files = {"pkg/__init__.py": b"", "pkg/mod.py": b"VALUE = 7\n"}
    run = program_steps(box.run(RunSpec(_program("from pkg.mod import VALUE\nprint(VALUE)\n", files=files), LIMITS)))
    assert (run["run"]["s"], run["run"]["out"]) == ("ok", "7\n"), run


def test_the_split_tests_import_nothing_from_the_program_dir(box: LocalSandbox) -> None:
    """The program may write a module into /tmp; the trusted half's import path (the
    one that imports `math` for a test) still starts nowhere the program can write."""
    code = "open('/tmp/math.py', 'w').write('def sqrt(x):\\n    return 0\\n')\ndef f(x):\n    return x\n"
    tests = AssertSuite(tests=["import math\nassert math.sqrt(4) == 2"])
    result = box.run(RunSpec(SplitJob(code=code, timeout_s=5), LIMITS, tests))
    assert [r.get("s") for r in result.records if type(r.get("i")) is int] == ["pass"], result
