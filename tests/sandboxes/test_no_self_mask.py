"""Nothing a program does can make its job read as the sandbox's own failure
(`RunResult.infra_error`, which the grader masks): issue 10, class 4, and the caps of
class 9. Each family runs a generated set of hostile programs in every mode through
the real sandbox; a control shows that a job the runner never took is still one."""

from __future__ import annotations

import json
import signal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.sandboxes import Limits, RunResult, RunSpec, Status
from rlvr.sandboxes.jobs import AssertSuite, CallJob, NativeCallJob, SplitJob, StdioJob, ValuesJob, WireFrame
from rlvr.sandboxes.local import pacing, sandbox
from rlvr.sandboxes.local.sandbox import LocalSandbox
from rlvr.sandboxes.runner import core
from tests.sandboxes.jobs import native_job
from tests.services import require


def spec(mode: str, body: str, at_load: bool = False, wall_s: float = 5.0) -> RunSpec:
    """A job whose program runs `body` (Python) when it loads, or when called."""
    if mode == "stdio":
        return RunSpec(StdioJob(code=body, inputs=["1\n"], timeout_s=2, max_output=1 << 16))
    indented = "".join(f"    {line}\n" for line in body.splitlines())
    code = f"{body}\ndef f(*a):\n    return 1\n" if at_load else f"def f(*a):\n{indented}    return 1\n"
    limits = Limits(wall_s=wall_s, cpu_s=max(2, int(wall_s)))
    if mode == "call":
        return RunSpec(CallJob(code=code, fn_name="f", inputs=[[1], [2]], timeout_s=2), limits)
    if mode == "values":
        return RunSpec(ValuesJob(code=code, exprs=["f(1)", "f(2)"], timeout_s=2), limits)
    tests = AssertSuite(tests=["assert f(1) == 1", "assert f(2) == 1"], setup=None)
    return RunSpec(SplitJob(code=code, timeout_s=2), limits, tests)


def indent(body: str) -> str:
    return "\n".join("    " + line for line in body.splitlines())


def no_infra(results: list[RunResult]) -> None:
    failures = [(i, r.infra_error) for i, r in enumerate(results) if r.infra_error is not None]
    assert failures == []


MODES = ["call", "values", "stdio", "split"]
EXIT_CODES = [0, 1, 2, 3, 64, 69, 70, 71, core.EXIT_MEMORY, core.EXIT_BAD_JOB, 88, 126, 127, 128, 137, 139, 255]
WHERE = [False, True]


@pytest.mark.parametrize("at_load", WHERE)
@pytest.mark.parametrize("mode", MODES)
def test_no_exit_code_masks(sb: LocalSandbox, mode: str, at_load: bool) -> None:
    bodies = [f"import os\nos._exit({c})" for c in EXIT_CODES] + [f"import sys\nsys.exit({c})" for c in EXIT_CODES]
    no_infra(sb.run_many([spec(mode, body, at_load) for body in bodies]))


SIGNALS = [
    signal.SIGHUP,
    signal.SIGINT,
    signal.SIGQUIT,
    signal.SIGILL,
    signal.SIGABRT,
    signal.SIGBUS,
    signal.SIGFPE,
    signal.SIGKILL,
    signal.SIGUSR1,
    signal.SIGSEGV,
    signal.SIGUSR2,
    signal.SIGPIPE,
    signal.SIGALRM,
    signal.SIGTERM,
    signal.SIGXCPU,
    signal.SIGXFSZ,
    signal.SIGSYS,
]
TARGETS = ["os.getpid()", "1", "0", "-1", "os.getppid()"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("mode", MODES)
def test_no_signal_masks(sb: LocalSandbox, mode: str, target: str) -> None:
    # Killing pid 1 (the runner, in every mode but split) or the whole group included.
    bodies = [f"import os\nos.kill({target}, {int(s)})\nos._exit({core.EXIT_BAD_JOB})" for s in SIGNALS]
    no_infra(sb.run_many([spec(mode, body, wall_s=3) for body in bodies]))


FD_ATTACKS = [
    "os.close(3)",
    "os.close(0)\nos.close(1)\nos.close(2)\nos.close(3)",
    "import socket\nsocket.socket(fileno=3).shutdown(socket.SHUT_RDWR)",
    "os.dup2(os.open('/dev/null', os.O_WRONLY), 3)",
    "os.write(3, b'+\\n')",
    "os.write(3, b'+\\n' * 1000)",
    "os.write(3, b'\\xff\\xfe\\x00garbage')",
    'os.write(3, b\'{"load": "ok"\')',
    "os.write(3, b'[' * 200000 + b'\\n')",
    'os.write(3, b\'{"i": 0, "s": "ok", "v": \' + b\'9\' * 100000 + b\'}\\n\')',
    'os.write(3, b\'{"i": 0, "s": "ok", "v": {"$c": ["1e400", 0]}}\\n\')',
    "os.write(3, b'\\n' * 100000)",
    "os.write(3, b'{}\\n' * 200000)",
    "os.read(3, 1 << 20)",
    "os.read(0, 1 << 20)",
]


@pytest.mark.parametrize("code", [0, core.EXIT_BAD_JOB, 70])
@pytest.mark.parametrize("mode", MODES)
def test_no_channel_or_fd_trick_masks(sb: LocalSandbox, mode: str, code: int) -> None:
    bodies = [f"import os\ntry:\n{indent(a)}\nexcept OSError:\n    pass\nos._exit({code})" for a in FD_ATTACKS]
    no_infra(sb.run_many([spec(mode, body) for body in bodies]))


EXHAUSTION = [
    "x = bytearray(1 << 34)",
    "x = [0] * (1 << 33)",
    "while True:\n    os.fork()",
    "fds = [os.open('/dev/null', os.O_RDONLY) for _ in range(100000)]",
    "while True:\n    open(f'/tmp/{os.urandom(8).hex()}', 'w').write('x' * 65536)",
    "open('/tmp/big', 'wb').write(b'x' * (1 << 30))",
    "while True:\n    pass",
    "import sys\nsys.setrecursionlimit(10 ** 9)\ndef r(n):\n    return r(n + 1)\nr(0)",
    "while True:\n    os.write(1, b'x' * 65536)",
    "while True:\n    os.write(2, b'x' * 65536)",
    "import threading\nwhile True:\n    threading.Thread(target=lambda: __import__('time').sleep(9)).start()",
]


@pytest.mark.parametrize("mode", MODES)
def test_no_exhausted_limit_masks(sb: LocalSandbox, mode: str) -> None:
    bodies = [
        f"import os\ntry:\n{indent(a)}\nexcept BaseException:\n    os._exit({core.EXIT_BAD_JOB})" for a in EXHAUSTION
    ]
    results = sb.run_many([spec(mode, body, wall_s=3) for body in bodies])
    no_infra(results)


@pytest.mark.parametrize("mode", ["call", "values", "split"])
def test_tiny_record_floods_are_cut_off(sb: LocalSandbox, mode: str) -> None:
    body = (
        "import os\nfor _ in range(300):\n    os.write(3, b'{}\\n' * 1000)"
        if mode != "split"
        else "print('{}\\n' * 300000)"
    )
    limits = Limits(max_records=1000)
    job = spec(mode, body)
    result = sb.run(RunSpec(job.job, limits, job.tests))
    assert result.infra_error is None
    assert len(result.records) <= limits.max_records
    if mode != "split":  # the program half cannot reach the channel at all
        assert result.status == Status.OUTPUT_LIMIT


def test_a_job_the_runner_never_took_is_still_the_sandboxes_failure(sb: LocalSandbox) -> None:
    bogus = sb.run(RunSpec(WireFrame({"mode": "no such mode"})))
    assert bogus.infra_error and bogus.status == Status.CRASHED
    missing = RunSpec(SplitJob(code="def f():\n    return 1\n", timeout_s=1), tests=WireFrame({"kind": "asserts"}))
    assert sb.run(missing).infra_error


@pytest.mark.parametrize("mode", MODES)
def test_every_runner_says_it_took_the_job(sb: LocalSandbox, mode: str) -> None:
    [result] = sb.run_many([spec(mode, "pass")])
    assert result.infra_error is None and result.status == Status.OK
    assert len(result.records) == (1 if mode == "stdio" else 3)


@pytest.mark.parametrize(
    ("language", "code"),
    [
        ("cpp", "#include <cstdlib>\nint main() { std::exit(87); }"),
        ("cpp", "#include <signal.h>\n#include <unistd.h>\nint main() { kill(getppid(), SIGINT); _exit(87); }"),
        (
            "cpp",
            "#include <signal.h>\n#include <unistd.h>\nint main() { kill(-1, SIGTERM); kill(1, SIGALRM); _exit(87); }",
        ),
        ("cpp", '#include <unistd.h>\nint main() { close(3); write(3, "+\\n", 2); _exit(87); }'),
        ("cpp", "int main() { int *p = 0; return *p; }"),
        ("javascript", "process.exit(87)"),
        ("javascript", "process.kill(process.ppid, 'SIGINT'); process.exit(87)"),
        ("javascript", "require('fs').writeSync(3, '+\\n'); process.exit(87)"),
    ],
)
def test_no_native_program_masks(sb: LocalSandbox, language: str, code: str) -> None:
    import shutil

    tool = shutil.which("g++" if language == "cpp" else "node")
    require(tool is not None, f"{language} toolchain")
    job = native_job(language, code, ["1\n", "2\n"])
    result = sb.run(RunSpec(job, Limits(wall_s=40, cpu_s=40, memory_mb=4096)))
    assert result.infra_error is None, result


# ---------------------------------------------------------------- the record parser


HOSTILE_LINES = [b"+", b"{}", b"[" * 5000, b'{"i":0}', b"\xff", b'{"v":' + b"9" * 5000 + b"}", b'{"a":NaN}']


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=64), st.sampled_from(HOSTILE_LINES)), max_size=50))
def test_records_parser_is_total(lines: list[bytes]) -> None:
    data = b"\n".join(lines)
    records = sandbox._records(data, 0, 20)
    assert len(records) <= 20 and all(type(r) is dict for r, _ in records)
    ends = [end for _, end in records]
    assert ends == sorted(ends) and all(0 < end <= len(data) + 1 for end in ends)
    # Whatever the lines and whenever they came, the pacing check is total.
    arrivals = [(n * 7, n * 0.4) for n in range(len(data) // 7 + 2)]
    pacing.mark_late_tests(CallJob(code="", fn_name="f", inputs=[], timeout_s=0.1), records, arrivals)


@pytest.mark.parametrize("depth", [10, 1000, 100_000, 1_000_000])
def test_records_parser_survives_any_nesting(depth: int) -> None:
    for opener in (b"[", b'{"a":'):
        line = opener * depth + b"\n"
        data = line + json.dumps({"i": 0}).encode()
        assert sandbox._records(data, 0, 10) == [({"i": 0}, len(data) + 1)]


def test_records_parser_takes_at_most_its_limit() -> None:
    assert len(sandbox._records(b"{}\n" * 1000, 0, 10)) == 10


JS_FORGERIES = [
    '\'{"i":0,"s":"ok","v":NaN}\\n\'',
    "'[' .repeat(100000) + '\\n'",
    "'{}\\n'.repeat(100000)",
    "'+\\n'",
    "'\\u0000\\n'",
]


@pytest.mark.parametrize("forged", JS_FORGERIES)
def test_js_programs_forging_harness_records_do_not_mask(sb: LocalSandbox, forged: str) -> None:
    import shutil

    node = shutil.which("node")
    require(node is not None, "node")
    job = NativeCallJob(
        language="javascript",
        fn_name="f",
        code=f"function f(x) {{ process.mainModule.require('fs').writeSync(3, {forged}); return 1; }}",
        inputs=[[1], [2]],
        timeout_s=2,
        max_output=1 << 20,
        memory_mb=512,
        node=node,
        compile_timeout_s=30,
    )
    result = sb.run(RunSpec(job, Limits(wall_s=20, cpu_s=20, memory_mb=4096)))
    assert result.infra_error is None and result.status == Status.OK, result
    assert len([r for r in result.records if "i" in r]) <= len(job.inputs) + 1
