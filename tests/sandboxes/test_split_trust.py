"""Split jobs: the trusted test half takes nothing from the program but what the test
format says. Each family is generated from a class of attack (issue 10, classes 1-3),
run through the real sandbox; every test there can fail, since the program really did
what it attacks with (checked by a test that must pass alongside)."""

from __future__ import annotations

import builtins
import os
import sys
from typing import Any

import pytest

from rlvr.sandboxes import RunSpec, Status
from rlvr.sandboxes.jobs import AssertSuite, CheckSuite, SplitJob
from rlvr.sandboxes.local import isolate, zygote
from rlvr.sandboxes.local.sandbox import LocalSandbox
from rlvr.sandboxes.runner import link, split


def run_split(sb: LocalSandbox, code: str, tests: list[str], setup: str | None = None) -> list[dict[str, Any]]:
    """Run `tests` (assert kind) against `code`; the per-test records, in test order."""
    result = sb.run(RunSpec(SplitJob(code=code, timeout_s=5), tests=AssertSuite(tests=tests, setup=setup)))
    assert result.infra_error is None and result.status == Status.OK, result
    by_index = {r["i"]: r for r in result.records if "i" in r}
    assert [r for r in result.records if "load" in r] == [{"load": "ok"}], result.records
    return [by_index.get(i, {"s": "missing"}) for i in range(len(tests))]


def statuses(records: list[dict[str, Any]]) -> list[str]:
    return [r["s"] for r in records]


# ---------------------------------------------------------------- class 1: imports and /tmp

# Names a test might import that the zygote has not loaded, and one it has.
HIJACKED = ["random", "statistics", "fractions", "decimal", "solution", "helpers", "testlib", "numpy", "string"]
# How the program can leave a module in its /tmp.
PLANTS = {
    "module": "open('/tmp/{m}.py', 'w').write(BODY)",
    "package": "os.mkdir('/tmp/{m}')\nopen('/tmp/{m}/__init__.py', 'w').write(BODY)",
    "bytecode": "import marshal, importlib.util\n"
    "data = importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(compile(BODY, '{m}', 'exec'))\n"
    "open('/tmp/{m}.pyc', 'wb').write(data)",
    "namespace": "os.makedirs('/tmp/tmp/{m}')\nopen('/tmp/tmp/{m}/__init__.py', 'w').write(BODY)",
}
BODY = "import builtins\nPWNED = True\nbuiltins.PWNED = True\n"


@pytest.mark.parametrize("plant", sorted(PLANTS))
@pytest.mark.parametrize("module", HIJACKED)
def test_program_cannot_plant_a_module_for_the_tests(sb: LocalSandbox, module: str, plant: str) -> None:
    code = (
        f"import os\nBODY = {BODY!r}\n"
        + PLANTS[plant].format(m=module)
        + "\ndef planted():\n    return sorted(os.listdir('/tmp'))\n"
    )
    imported = (
        f"try:\n    import {module}\nexcept ImportError:\n    pass\n"
        f"else:\n    assert not getattr({module}, 'PWNED', False)\n"
    )
    tests = [
        "assert planted() != []",
        imported,
        "import builtins\nassert not hasattr(builtins, 'PWNED')",
        f"import importlib\ntry:\n    importlib.import_module('tmp.{module}')\n"
        "except ImportError:\n    pass\nelse:\n    assert False",
    ]
    assert statuses(run_split(sb, code, tests)) == ["pass"] * 4


@pytest.mark.parametrize("setup", [None, "import random", "import os\nos.chdir('/tmp')"])
def test_the_test_half_shares_no_writable_place_with_the_program(sb: LocalSandbox, setup: str | None) -> None:
    code = "import os\nopen('/tmp/left', 'w').write('x')\ndef mine():\n    return os.listdir('/tmp')\n"
    tests = [
        "assert mine() == ['left']",
        "import os\nassert os.listdir('/tmp') == []",
        "try:\n    open('/tmp/x', 'w')\nexcept OSError:\n    pass\nelse:\n    assert False",
        "import os\nassert not os.access('/tmp', os.W_OK)",
        "import sys\nassert '' not in sys.path and all(p.startswith('/') and p != '/' for p in sys.path)",
        "import os, sys\nassert all(os.statvfs(p).f_flag & os.ST_RDONLY for p in sys.path)",
        "import sys\nassert not [p for p in sys.path if p == '/tmp' or p.startswith('/tmp/')]",
    ]
    if setup is None or "chdir" not in setup:
        tests.append("import os\nassert os.getcwd() == '/'")
    assert statuses(run_split(sb, code, tests, setup)) == ["pass"] * len(tests)


def test_the_program_half_has_no_working_directory_on_its_path(sb: LocalSandbox) -> None:
    code = (
        "import os, sys\nopen('/tmp/mymod.py', 'w').write('X = 1')\n"
        "def path():\n    return [p for p in sys.path if not p.startswith('/') or p.startswith('/tmp')]\n"
        "def imports():\n    try:\n        import mymod\n    except ImportError:\n        return False\n"
        "    return True\n"
    )
    assert statuses(run_split(sb, code, ["assert path() == []", "assert imports() is False"])) == ["pass"] * 2


@pytest.fixture
def tmp_link(tmp_path: Any) -> str:
    link = tmp_path / "to-tmp"
    link.symlink_to("/tmp")
    return str(link)


@pytest.mark.parametrize(
    "entry",
    ["", ".", "relative/dir", "./x", "/", "/tmp", "/tmp/", "/tmp/site", "/tmp/../tmp", "/nonexistent-rlvr", "TMP_LINK"],
)
def test_checked_sys_path_drops_what_a_job_could_write(entry: str, tmp_link: str) -> None:
    entry = tmp_link if entry == "TMP_LINK" else entry
    good = os.path.dirname(os.__file__)
    assert zygote.checked_sys_path([entry, good, entry], None) == [os.path.realpath(good)]


def test_checked_sys_path_keeps_only_read_only_mounts_once_the_root_is() -> None:
    caps = isolate.Capabilities(root=True)
    caps.readonly_root = True
    writable = [d for d in ("/dev/shm", "/run") if os.path.isdir(d) and os.access(d, os.W_OK)]
    if not writable:
        pytest.skip("no writable directory off /tmp here")
    assert zygote.checked_sys_path(writable, caps) == []
    assert zygote.checked_sys_path(writable, None) == [os.path.realpath(d) for d in writable]


@pytest.mark.parametrize("entry", ["", ".", "rel", "/", "/tmp", "/tmp/x"])
def test_the_test_half_checks_its_own_path(entry: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", [entry, "/usr/lib", entry])
    split.trusted_sys_path()
    assert sys.path == ["/usr/lib"]


# ---------------------------------------------------------------- class 2: names

# Less what `site` adds (copyright, exit, help...): jobs run without it.
SITE_NAMES = {"copyright", "credits", "license", "exit", "quit", "help"}
BUILTIN_NAMES = sorted(
    n
    for n, v in vars(builtins).items()
    if not n.startswith("_") and n not in ("True", "False", "None", "Ellipsis") and callable(v) and n not in SITE_NAMES
)
# Hostile stand-ins a program may bind a name to.
STAND_INS = {
    "function": "def {n}(*a, **k):\n    return 0\n",
    "class": "class {n}:\n    def __init__(self, *a, **k):\n        pass\n"
    "    def __eq__(self, o):\n        return True\n",
    "value": "{n} = 0\n",
    "lambda": "{n} = lambda *a, **k: True\n",
}


@pytest.mark.parametrize("kind", sorted(STAND_INS))
@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_program_cannot_replace_a_builtin_the_tests_use(sb: LocalSandbox, name: str, kind: str) -> None:
    code = (
        STAND_INS[kind].format(n=name)
        + "def names():\n    import sys\n    return [k for k in sys._getframe().f_globals if k[:2] != '__']\n"
    )
    tests = [f"assert {name!r} in names()", f"assert {name} is __import__('builtins').{name}"]
    assert statuses(run_split(sb, code, tests)) == ["pass", "pass"]


MODULES = [
    "math",
    "re",
    "collections",
    "itertools",
    "functools",
    "string",
    "os",
    "sys",
    "json",
    "random",
    "heapq",
    "fractions",
]
FAKE_MODULES = {
    "object": "class _M:\n    def __getattr__(self, a):\n        return lambda *x, **k: 0\n{n} = _M()\n",
    "other module": "import cmath as {n}\n",
    "function": "def {n}(*a):\n    return 0\n",
    "own module": "import types\n{n} = types.ModuleType({n!r})\n{n}.sqrt = lambda x: 0\n",
}


@pytest.mark.parametrize("fake", sorted(FAKE_MODULES))
@pytest.mark.parametrize("module", MODULES)
def test_program_cannot_stand_in_for_a_module_the_tests_use(sb: LocalSandbox, module: str, fake: str) -> None:
    code = FAKE_MODULES[fake].format(n=module) + "def has(name):\n    return name in globals()\n"
    # The tests use the module without importing it: it is theirs all the same.
    tests = [f"assert has({module!r})", f"assert {module} is __import__('sys').modules[{module!r}]"]
    assert statuses(run_split(sb, code, tests)) == ["pass", "pass"]


STAR_CHECKS = {
    "abs": "assert abs is __import__('builtins').abs",
    "sorted": "assert sorted is __import__('builtins').sorted",
    "len": "assert len is __import__('builtins').len",
    "math": "assert math is __import__('sys').modules['math']",
    "helper": "assert helper() == 0",
}


@pytest.mark.parametrize("name", sorted(STAR_CHECKS))
def test_star_import_from_solution_brings_no_builtin_or_module(sb: LocalSandbox, name: str) -> None:
    code = f"import math\ndef {name}(*a):\n    return 0\ndef add(a, b):\n    return a + b\n"
    tests = ["assert add(1, 2) == 3", STAR_CHECKS[name], "import solution\nassert hasattr(solution, 'add')"]
    records = run_split(sb, code, tests, setup="from solution import *")
    assert statuses(records) == ["pass", "pass", "pass"]


@pytest.mark.parametrize(
    "line", ["from solution import add", "import solution\nadd = solution.add", "from solution import *"]
)
def test_setup_lines_get_the_program_from_the_sandbox_not_disk(sb: LocalSandbox, line: str) -> None:
    plant = "import os\nopen('/tmp/solution.py', 'w').write('def add(a, b):\\n    return 3\\n')\n"
    code = plant + "def add(a, b):\n    return a + b\n"
    records = run_split(sb, code, ["assert add(1, 2) == 3", "assert add(2, 2) == 4"], setup=line)
    assert statuses(records) == ["pass", "pass"]


@pytest.mark.parametrize("name", ["sum", "sorted", "max", "filter", "add"])
def test_the_entry_point_comes_from_the_program_whatever_its_name(sb: LocalSandbox, name: str) -> None:
    code = f"def {name}(x):\n    return x * 2\n"
    tests = CheckSuite(entry_point=name, test="def check(candidate):\n    assert candidate(2) == 4\n")
    result = sb.run(RunSpec(SplitJob(code=code, timeout_s=5), tests=tests))
    assert result.records == [{"load": "ok"}, {"i": 0, "s": "pass"}]


@pytest.mark.parametrize(
    "used",
    [
        "poly([1, 2], 3) == 7",
        "[poly(c, 1) for c in ([1], [2])] == [1, 2]",
        "(lambda: poly([1], 0))() == 1",
        "C().v == 1",
    ],
)
def test_helpers_the_tests_call_still_come_from_the_program(sb: LocalSandbox, used: str) -> None:
    code = "def poly(cs, x):\n    return sum(c * x**i for i, c in enumerate(cs))\nclass C:\n    v = 1\n"
    assert statuses(run_split(sb, code, [f"assert {used}"])) == ["pass"]


def test_names_the_tests_bind_are_their_own(sb: LocalSandbox) -> None:
    code = "def helper():\n    return 'program'\ndef f():\n    return 1\n"
    tests = ["def helper():\n    return 'test'\nassert helper() == 'test' and f() == 1"]
    assert statuses(run_split(sb, code, tests)) == ["pass"]


def test_a_test_that_does_not_compile_fails_alone(sb: LocalSandbox) -> None:
    records = run_split(sb, "def f():\n    return 1\n", ["assert f() == 1", "assert f( == 1", "assert f() == 1"])
    assert statuses(records) == ["pass", "error", "pass"]


# ---------------------------------------------------------------- class 3: exceptions

EXCEPTIONS = sorted(n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException))
RAISES = {
    "builtin": "def f(*a):\n    raise {e}('x')\n",
    "subclass": "class E({e}):\n    pass\ndef f(*a):\n    raise E('x')\n",
    "namesake": "class {e}(Exception):\n    pass\ndef f(*a):\n    raise {e}('x')\n",
    "base namesake": "class {e}(BaseException):\n    pass\ndef f(*a):\n    raise {e}('x')\n",
}
# Test shapes that would pass if the program's exception were taken for control flow.
SWALLOWING = [
    "assert list(map(f, [1])) == []",
    "assert next(map(f, [1]), 'none') == 'none'",
    "assert dict(zip(['a'], map(f, [1]))) == {}",
    "assert min(map(f, [1]), default=0) == 0",
    "assert all(map(f, [1]))",
    "assert not any(filter(f, [1]))",
    "assert sum(map(f, [1])) == 0",
    "for _ in map(f, [1]):\n    pass",
]


@pytest.mark.parametrize("how", sorted(RAISES))
@pytest.mark.parametrize("exc", EXCEPTIONS)
def test_no_program_exception_is_swallowed_as_control_flow(sb: LocalSandbox, exc: str, how: str) -> None:
    code = "import builtins\n" + RAISES[how].format(e=exc)
    records = run_split(sb, code, SWALLOWING)
    assert "pass" not in statuses(records), records


CONTROL_FLOW = [
    "StopIteration",
    "StopAsyncIteration",
    "GeneratorExit",
    "KeyboardInterrupt",
    "SystemExit",
    "AssertionError",
]


@pytest.mark.parametrize("how", sorted(RAISES))
@pytest.mark.parametrize("exc", CONTROL_FLOW)
def test_control_flow_exceptions_escape_except_exception(sb: LocalSandbox, exc: str, how: str) -> None:
    code = RAISES[how].format(e=exc)
    tests = [
        "try:\n    f(1)\nexcept Exception:\n    pass",
        "import contextlib\nwith contextlib.suppress(Exception):\n    f(1)",
        "try:\n    f(1)\nexcept AssertionError:\n    pass",
        "try:\n    f(1)\nexcept StopIteration:\n    pass",
    ]
    if how in ("namesake",):
        tests = tests[2:]  # a plain Exception subclass: `except Exception` may take it, by the test's choice
    assert "pass" not in statuses(run_split(sb, code, tests))


ORDINARY = [
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "ZeroDivisionError",
    "ArithmeticError",
    "LookupError",
    "RuntimeError",
    "NotImplementedError",
    "OverflowError",
]


@pytest.mark.parametrize("exc", ORDINARY)
def test_ordinary_exceptions_still_reach_tests_that_expect_them(sb: LocalSandbox, exc: str) -> None:
    code = RAISES["builtin"].format(e=exc)
    tests = [
        f"try:\n    f(1)\nexcept {exc}:\n    pass\nelse:\n    assert False",
        f"try:\n    f(1)\nexcept Exception as e:\n    assert type(e) is {exc}",
    ]
    assert statuses(run_split(sb, code, tests)) == ["pass", "pass"]


@pytest.mark.parametrize(
    "answer",
    [
        {"err": "StopIteration", "base": True},
        {"err": "AssertionError", "base": True},
        {"err": "StopAsyncIteration", "base": True},
        {"err": "SystemExit", "base": False},
        {"err": "ValueError", "base": False},
        {"err": "UnicodeDecodeError", "base": True},
        {"err": "ExceptionGroup", "base": True},
        {"err": "print", "base": True},
        {"err": "__class__", "base": True},
        {"err": None, "base": "yes"},
        {},
    ],
)
def test_program_exception_is_never_control_flow(answer: dict[str, Any]) -> None:
    exc = link.program_exception({**answer, "msg": "m"})
    assert not isinstance(
        exc, StopIteration | StopAsyncIteration | AssertionError | GeneratorExit | KeyboardInterrupt | SystemExit
    )
    assert isinstance(exc, link.ProgramAborted | link.ProgramError)


def test_the_halves_see_different_tmp_filesystems(sb: LocalSandbox) -> None:
    code = "import os\ndef dev():\n    return [os.stat('/tmp').st_dev, os.readlink('/proc/self/ns/mnt')]\n"
    tests = [
        "import os\nassert dev()[0] != os.stat('/tmp').st_dev",
        "import os\nassert dev()[1] != os.readlink('/proc/self/ns/mnt')",
    ]
    assert statuses(run_split(sb, code, tests)) == ["pass", "pass"]


def test_no_tests_namespace_is_no_isolation_level() -> None:
    caps = isolate.Capabilities(root=True)
    caps.mount_ns = caps.readonly_root = caps.pid_ns = caps.net_ns = caps.uts_ns = caps.ipc_ns = True
    caps.uid_drop = caps.seccomp = True
    caps.cgroups = "v1"
    caps.minimal_root = caps.own_pid_ns = True
    caps.tests_mnt = 11
    assert caps.level == "full" and caps.to_dict()["tests_private_tmp"] is True
    caps.tests_mnt = -1
    assert caps.level == "rlimits" and caps.to_dict()["tests_private_tmp"] is False
