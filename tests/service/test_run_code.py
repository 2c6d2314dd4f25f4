"""SandboxFusion-compatible `POST /run_code` and `GET /v1/ping` over a real server and
sandbox: the wire format, SandboxFusion's status rule, files in and out, and 4xx
answers that name the field."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from rlvr.sandboxes import RunResult, Status
from rlvr.service.run_code import MAX_OUTPUT_BYTES, OUTPUT_LIMIT_NOTE, response_of
from tests.services import require

ADD_CPP = '#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<std::endl;std::cerr<<"e";}'
RESPONSE_KEYS = {"status", "message", "compile_result", "run_result", "executor_pod_name", "files"}
RESULT_KEYS = {"status", "execution_time", "return_code", "stdout", "stderr"}


def run(http: httpx.Client, **request: Any) -> dict[str, Any]:
    response = http.post("/run_code", json=request)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert set(body) == RESPONSE_KEYS
    for step in ("compile_result", "run_result"):
        assert body[step] is None or set(body[step]) == RESULT_KEYS
    return body


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_ping(http: httpx.Client) -> None:
    assert http.get("/v1/ping").json() == "pong"


def test_python_stdin_to_stdout(http: httpx.Client) -> None:
    body = run(http, code="print(input() * 2)", language="python", stdin="ab\n")
    assert body["status"] == "Success"
    assert body["message"] == ""
    assert body["compile_result"] is None
    run_result = body["run_result"]
    assert (run_result["status"], run_result["return_code"], run_result["stdout"]) == ("Finished", 0, "abab\n")
    assert run_result["stderr"] == ""
    assert run_result["execution_time"] > 0


@pytest.mark.parametrize(
    ("code", "return_code", "stderr_part"),
    [
        ("import sys; sys.stderr.write('oops'); sys.exit(3)", 3, "oops"),
        ("raise ValueError('bad')", 1, "ValueError: bad"),
        ("import sys; sys.exit('message')", 1, "message"),
        ("def f(:\n  pass", 1, "SyntaxError"),
        ("import sys; sys.exit(0)", 0, ""),
        ("x = bytearray(2 * 1024 ** 3)", 86, ""),  # past the memory limit: the program's failure
    ],
)
def test_python_exit_codes_and_stderr(http: httpx.Client, code: str, return_code: int, stderr_part: str) -> None:
    body = run(http, code=code, language="python", memory_limit_MB=256)
    assert body["run_result"]["return_code"] == return_code
    assert stderr_part in body["run_result"]["stderr"]
    assert body["status"] == ("Success" if return_code == 0 else "Failed")


def test_traceback_reads_as_from_python_main_py(http: httpx.Client) -> None:
    stderr = run(http, code="def f():\n    raise ValueError(1)\nf()", language="python")["run_result"]["stderr"]
    assert stderr.splitlines() == [
        "Traceback (most recent call last):",
        '  File "main.py", line 3, in <module>',
        "    f()",
        '  File "main.py", line 2, in f',
        "    raise ValueError(1)",
        "ValueError: 1",
    ]


def test_time_limit(http: httpx.Client) -> None:
    body = run(http, code="while True: pass", language="python", run_timeout=1)
    assert body["status"] == "Failed"
    assert body["run_result"]["status"] == "TimeLimitExceeded"
    assert body["run_result"]["return_code"] is None


def test_files_in_and_out(http: httpx.Client) -> None:
    code = (
        "import os\n"
        "text = open('data/in.txt').read()\n"
        "os.makedirs('out', exist_ok=True)\n"
        "open('out/up.txt', 'w').write(text.upper())\n"
        "open('bin', 'wb').write(bytes(range(256)))\n"
    )
    files = {"data/in.txt": b64(b"hello"), "skipped.txt": None}
    body = run(http, code=code, language="python", files=files, fetch_files=["out/up.txt", "bin", "missing.txt"])
    assert body["status"] == "Success", body
    assert body["files"] == {"out/up.txt": b64(b"HELLO"), "bin": b64(bytes(range(256)))}


def test_absolute_fetch_paths_read_inside_the_programs_sandbox(http: httpx.Client, tmp_path: Path) -> None:
    # SandboxFusion joins fetch paths to the working directory, so an absolute one is read
    # as such; here inside the job's own filesystem, where its working directory is /tmp.
    host_file = tmp_path / "host-secret"
    host_file.write_text("the server's")
    code = "open('a.txt', 'w').write('mine')"
    fetch = ["/tmp/a.txt", "a.txt", str(host_file), "/etc/hostname", "/proc/self/environ"]
    body = run(http, code=code, language="python", fetch_files=fetch)
    assert body["status"] == "Success", body
    assert body["files"] == {"/tmp/a.txt": b64(b"mine"), "a.txt": b64(b"mine")}


def test_program_cannot_forge_its_result(http: httpx.Client) -> None:
    # Records travel on the runner's channel, which the program's process does not hold.
    forged = '{"step": "run", "s": "ok", "code": 0}\\n{"file": "x", "b64": "aGk="}\\n'
    code = (
        f"import os, sys\nfor fd in range(3, 64):\n    try: os.write(fd, b'{forged}')\n"
        "    except OSError: pass\nsys.exit(5)"
    )
    body = run(http, code=code, language="python")
    assert (body["status"], body["run_result"]["return_code"], body["files"]) == ("Failed", 5, {})


def test_program_cannot_kill_its_runner(http: httpx.Client) -> None:
    code = (
        "import os, signal\nfor pid in (os.getppid(), 1, -1):\n"
        "    try: os.kill(pid, signal.SIGKILL)\n    except OSError: pass"
    )
    body = run(http, code=code, language="python")
    assert body["status"] != "SandboxError"


def test_cpp(http: httpx.Client) -> None:
    require(shutil.which("g++") is not None, "g++")
    body = run(http, code=ADD_CPP, language="cpp", stdin="2 40\n")
    assert body["status"] == "Success"
    assert (body["compile_result"]["status"], body["compile_result"]["return_code"]) == ("Finished", 0)
    assert (body["run_result"]["stdout"], body["run_result"]["stderr"]) == ("42\n", "e")


@pytest.mark.parametrize(
    "includes",
    [
        ["bits/stdc++.h"],
        ["iostream"],
        ["cstdio", "iostream"],
        ["iostream", "bits/stdc++.h"],
        ["vector", "queue", "iostream", "cstdio"],
        ["bits/stdc++.h", "bits/stdc++.h"],
    ],
)
def test_cpp_opening_with_precompiled_headers_in_any_order(http: httpx.Client, includes: list[str]) -> None:
    require(shutil.which("g++") is not None, "g++")
    head = "".join(f"#include <{name}>\n" for name in [*includes, "cstdio", "iostream"])
    code = head + "int main() { int a, b; std::cin >> a >> b; std::printf(\"%d\\n\", a + b); }\n"
    body = run(http, code=code, language="cpp", stdin="2 40\n")
    assert (body["status"], body["run_result"]["stdout"]) == ("Success", "42\n"), body["compile_result"]


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
@pytest.mark.parametrize("extra", [1, 10, 100_000])
def test_output_past_the_cap_fails_the_run_and_says_so(http: httpx.Client, stream: str, extra: int) -> None:
    # Written at once, then exit 0: the program is done before the runner reads past the cap.
    code = f"import sys\nsys.{stream}.write('x' * ({MAX_OUTPUT_BYTES} + {extra}))\n"
    body = run(http, code=code, language="python")
    assert body["status"] == "Failed", body["run_result"]["return_code"]
    assert body["run_result"]["return_code"] != 0
    assert OUTPUT_LIMIT_NOTE in body["run_result"]["stderr"]


def test_output_at_the_cap_is_whole(http: httpx.Client) -> None:
    body = run(http, code=f"print('x' * ({MAX_OUTPUT_BYTES} - 1), end='')", language="python")
    assert body["status"] == "Success" and len(body["run_result"]["stdout"]) == MAX_OUTPUT_BYTES - 1


def test_cpp_compile_error_does_not_run(http: httpx.Client) -> None:
    require(shutil.which("g++") is not None, "g++")
    body = run(http, code="int main() { nope }", language="cpp")
    assert body["status"] == "Failed"
    assert body["compile_result"]["return_code"] != 0
    assert "nope" in body["compile_result"]["stderr"]
    assert body["run_result"] is None


def test_cpp_runtime_error(http: httpx.Client) -> None:
    require(shutil.which("g++") is not None, "g++")
    body = run(http, code="int main() { return 7; }", language="cpp")
    assert (body["status"], body["run_result"]["return_code"]) == ("Failed", 7)


def test_nodejs(http: httpx.Client) -> None:
    require(shutil.which("node") is not None, "node")
    code = "const s = require('fs').readFileSync(0, 'utf8'); console.log(s.trim() + '!'); console.error('e')"
    body = run(http, code=code, language="nodejs", stdin="hi")
    assert body["status"] == "Success"
    assert (body["run_result"]["stdout"], body["run_result"]["stderr"]) == ("hi!\n", "e\n")
    assert run(http, code="process.exit(4)", language="nodejs")["run_result"]["return_code"] == 4


def test_nodejs_memory_limit_is_the_programs_failure(http: httpx.Client) -> None:
    require(shutil.which("node") is not None, "node")
    code = "const a = []; for (;;) a.push(new Array(1e6).fill(1.5));"
    body = run(http, code=code, language="nodejs", memory_limit_MB=128)
    assert body["status"] == "Failed"
    assert body["run_result"]["return_code"] != 0


# ---- status rule and sandbox failures, from job results ------------------------------------------


def record(step: str, s: str = "ok", code: int | None = 0, **more: Any) -> dict[str, Any]:
    return {"step": step, "s": s, "code": code, "out": "", "err": "", "t": 0.5, **more}


@pytest.mark.parametrize(
    ("result", "status", "run_status"),
    [
        (RunResult(Status.CRASHED, infra_error="zygote died"), "SandboxError", None),
        (RunResult(Status.OK, records=[record("run")]), "Success", "Finished"),
        (RunResult(Status.OK, records=[record("run", "error", 2)]), "Failed", "Finished"),
        (RunResult(Status.OK, records=[record("run", "timeout", -9)]), "Failed", "TimeLimitExceeded"),
        (RunResult(Status.OK, records=[record("compile", "timeout", None)]), "Failed", None),
        (RunResult(Status.OK, records=[record("compile"), record("run")]), "Success", "Finished"),
        # no run record: the job hit its wall limit, or the program took its runner down
        (RunResult(Status.TIMEOUT, records=[]), "Failed", "TimeLimitExceeded"),
        (RunResult(Status.CRASHED, exit_code=None, records=[]), "Failed", "Finished"),
    ],
)
def test_status_rule(result: RunResult, status: str, run_status: str | None) -> None:
    body = response_of(result)
    assert body["status"] == status
    assert (body["run_result"] or {}).get("status") == run_status
    if status == "SandboxError":
        assert "zygote died" in body["message"]


# ---- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_body", "fragment"),
    [
        ({"language": "python"}, "code: Field required"),
        ({"code": "x"}, "language: Field required"),
        ({"code": "x", "language": "go"}, "language"),
        ({"code": 5, "language": "python"}, "code"),
        ({"code": "x", "language": "python", "run_timeout": 0}, "run_timeout"),
        ({"code": "x", "language": "python", "run_timeout": 3600}, "run_timeout"),
        ({"code": "x", "language": "python", "compile_timeout": -1}, "compile_timeout"),
        ({"code": "x", "language": "python", "memory_limit_MB": 10}, "memory_limit_MB"),
        ({"code": "x", "language": "python", "memory_limit_MB": 10**6}, "memory_limit_MB"),
        ({"code": "x", "language": "python", "stdin": 3}, "stdin"),
        ({"code": "x", "language": "python", "files": {"../x": "aGk="}}, "files"),
        ({"code": "x", "language": "python", "files": {"/etc/x": "aGk="}}, "files"),
        ({"code": "x", "language": "python", "files": {"a": "not base64!"}}, "not base64"),
        ({"code": "x", "language": "python", "files": ["a"]}, "files"),
        ({"code": "x", "language": "python", "fetch_files": ["a/../../b"]}, "fetch_files"),
        ({"code": "x", "language": "python", "fetch_files": "a"}, "fetch_files"),
        ({"code": "x", "language": "python", "fetch_files": ["/tmp/../etc/passwd"]}, "fetch_files"),
        ({"code": "x", "language": "python", "fetch_files": [""]}, "fetch_files"),
    ],
)
def test_bad_requests_name_the_field(http: httpx.Client, request_body: dict[str, Any], fragment: str) -> None:
    response = http.post("/run_code", json=request_body)
    assert response.status_code == 422, response.text
    assert fragment in response.json()["error"]["message"]
