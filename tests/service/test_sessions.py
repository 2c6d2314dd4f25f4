"""`/v1/sessions` over real HTTP against `rlvr serve`: the lifecycle, the bounds (a
maximum of live sessions, idle TTLs, ending by tag prefix) and every bad request's
answer."""

from __future__ import annotations

import concurrent.futures
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.services import Server


@pytest.fixture(scope="module")
def small(plugin_dir: Path) -> Iterator[str]:
    """A server that holds at most 3 sessions."""
    with Server(plugin_dir, "--workers", "1", "--max-sessions", "3") as server:
        yield server.url


def open_session(http: httpx.Client, **body: Any) -> str:
    r = http.post("/v1/sessions", json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def call(http: httpx.Client, session: str, code: str, **body: Any) -> httpx.Response:
    return http.post(f"/v1/sessions/{session}/run", json={"code": code, **body})


def test_a_session_keeps_its_state_until_it_is_deleted(http: httpx.Client) -> None:
    session = open_session(http, tag="t/1")
    assert call(http, session, "import collections\ncounts = collections.Counter('abca')").json()["status"] == "ok"
    r = call(http, session, "print(counts['a']); counts.most_common(1)")
    assert r.json() | {"execution_time": 0} == {
        "status": "ok",
        "stdout": "2\n",
        "stderr": "",
        "value": "[('a', 2)]",
        "error": None,
        "traceback": None,
        "limit": None,
        "execution_time": 0,
        "stdout_bytes": 2,
        "stderr_bytes": 0,
    }
    assert http.delete(f"/v1/sessions/{session}").status_code == 204
    gone = call(http, session, "counts")
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "session_not_found"
    assert http.delete(f"/v1/sessions/{session}").status_code == 404


def test_an_error_and_a_timeout_leave_the_session_alive(http: httpx.Client) -> None:
    session = open_session(http)
    call(http, session, "x = 1")
    error = call(http, session, "x / 0").json()
    timeout = call(http, session, "while True:\n    pass", timeout_s=0.3).json()
    assert (error["status"], error["error"]) == ("error", "ZeroDivisionError: division by zero")
    assert "x / 0" in error["traceback"]
    assert timeout["status"] == "timeout"
    assert call(http, session, "x + 1").json()["value"] == "2"
    http.delete(f"/v1/sessions/{session}")


def test_a_killed_session_says_why_and_is_gone(http: httpx.Client) -> None:
    session = open_session(http)
    uid = int(call(http, session, "import os; os.getuid()").json()["value"])
    killed = call(http, session, "import os; os._exit(1)").json()
    assert (killed["status"], killed["limit"]) == ("killed", "exited")
    assert call(http, session, "1").status_code == 404
    assert not any(os.stat(f"/proc/{p}").st_uid == uid for p in os.listdir("/proc") if p.isdigit() and _exists(p))


def _exists(pid: str) -> bool:
    return os.path.exists(f"/proc/{pid}")


def test_past_the_maximum_a_new_session_waits_for_a_free_one(small: str) -> None:
    with httpx.Client(base_url=small, timeout=30) as http:
        ids = [open_session(http) for _ in range(3)]
        full = http.post("/v1/sessions", json={})
        assert full.status_code == 429 and full.json()["error"]["code"] == "overloaded"
        assert int(full.headers["Retry-After"]) >= 1
        http.delete(f"/v1/sessions/{ids[0]}")
        ids[0] = open_session(http)
        for session in ids:
            http.delete(f"/v1/sessions/{session}")


def test_idle_sessions_are_reaped_after_their_ttl(small: str) -> None:
    with httpx.Client(base_url=small, timeout=30) as http:
        idle = open_session(http, idle_ttl_s=0.5)
        busy = open_session(http, idle_ttl_s=0.5)
        long_call = concurrent.futures.ThreadPoolExecutor(1).submit(
            call, http, busy, "import time; time.sleep(3); 'done'", timeout_s=10
        )
        time.sleep(2.5)
        assert call(http, idle, "1").status_code == 404
        # A session in a call is never idle.
        assert long_call.result().json()["value"] == "'done'"
        http.delete(f"/v1/sessions/{busy}")


def test_deleting_by_prefix_ends_only_that_batch(http: httpx.Client) -> None:
    batch = [open_session(http, tag=f"step-7/traj-{i}") for i in range(3)]
    other = open_session(http, tag="step-8/traj-0")
    ended = http.request("DELETE", "/v1/sessions", params={"prefix": "step-7/"})
    assert ended.json() == {"ended": 3}
    assert all(call(http, s, "1").status_code == 404 for s in batch)
    assert call(http, other, "1").json()["value"] == "1"
    http.delete(f"/v1/sessions/{other}")


def test_a_call_while_another_runs_is_refused(http: httpx.Client) -> None:
    session = open_session(http)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        slow = pool.submit(call, http, session, "import time; time.sleep(1)")
        time.sleep(0.3)
        busy = call(http, session, "1")
        assert busy.status_code == 409 and busy.json()["error"]["code"] == "session_busy"
        assert slow.result().json()["status"] == "ok"
    http.delete(f"/v1/sessions/{session}")


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/sessions", {"language": "javascript"}, "body.language"),
        ("/v1/sessions", {"memory_mb": 1}, "body.memory_mb"),
        ("/v1/sessions", {"idle_ttl_s": 0}, "body.idle_ttl_s"),
        ("/v1/sessions", {"limits": {}}, "body.limits"),
        ("/v1/sessions", {"tag": "x" * 600}, "body.tag"),
        ("/v1/sessions/{id}/run", {}, "body.code"),
        ("/v1/sessions/{id}/run", {"code": 1}, "body.code"),
        ("/v1/sessions/{id}/run", {"code": "1", "timeout_s": 10_000}, "body.timeout_s"),
        ("/v1/sessions/{id}/run", {"code": "1", "timeout_s": -1}, "body.timeout_s"),
        ("/v1/sessions/{id}/run", {"code": "1", "stdin": None}, "body.stdin"),
    ],
)
def test_a_bad_request_names_its_field(http: httpx.Client, path: str, body: Any, field: str) -> None:
    session = open_session(http)
    r = http.post(path.format(id=session), json=body)
    assert r.status_code == 422 and field in r.json()["error"]["message"]
    http.delete(f"/v1/sessions/{session}")


def test_deleting_by_an_empty_prefix_is_refused(http: httpx.Client) -> None:
    r = http.request("DELETE", "/v1/sessions", params={"prefix": ""})
    assert r.status_code == 422 and "prefix" in r.json()["error"]["message"]


def test_a_file_the_session_wrote_is_graded_by_the_verifier_outside_it(http: httpx.Client) -> None:
    session = open_session(http)
    solution = "def add(a, b):\n    return a + b\n"
    call(http, session, f"open('solution.py', 'w').write({solution!r})")
    truth = {"fn_name": "add", "inputs": [[1, 2], [5, 5]], "outputs": [3, 10]}
    item = {"response_file": "solution.py", "verifier": "code", "ground_truth": truth}
    graded = http.post(f"/v1/sessions/{session}/grade", json=item).json()
    assert graded["results"][0]["verdict"] == "correct" and graded["results"][0]["reward"] == 1.0
    # The session cannot grade itself: its own patched builtins stay in it.
    call(http, session, "import builtins; builtins.abs = lambda x: 0")
    call(http, session, "open('wrong.py', 'w').write('def add(a, b):\\n    return 0\\n')")
    wrong = http.post(f"/v1/sessions/{session}/grade", json=item | {"response_file": "/tmp/wrong.py"}).json()
    assert wrong["results"][0]["verdict"] == "incorrect"
    # The session's state is untouched by the read.
    assert call(http, session, "'solution' in dir(), len(open('solution.py').read())").json()["value"] == "(False, 32)"
    http.delete(f"/v1/sessions/{session}")


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"response_file": "missing.py", "verifier": "format"}, 422, "session_file"),
        ({"response_file": "/etc/shadow", "verifier": "format"}, 422, "session_file"),
        ({"response_file": "big.txt", "verifier": "format"}, 422, "session_file"),
        ({"response_file": "bin.dat", "verifier": "format"}, 422, "invalid_request"),
        ({"response_file": "ok.txt", "verifier": "no_such_verifier"}, 422, "invalid_request"),
        ({"verifier": "format"}, 422, "invalid_request"),
        ({"response_file": "\ud800.txt", "verifier": "format"}, 422, "invalid_request"),
    ],
)
def test_grading_a_session_file_that_cannot_be_read_names_why(
    http: httpx.Client, body: dict[str, Any], status: int, code: str
) -> None:
    session = open_session(http)
    call(http, session, "open('big.txt', 'w').write('x' * (5 * 1024 * 1024))")
    call(http, session, "open('bin.dat', 'wb').write(b'\\xff\\xfe')")
    call(http, session, "open('ok.txt', 'w').write('<think>a</think><answer>b</answer>')")
    r = http.post(
        f"/v1/sessions/{session}/grade", content=json.dumps(body), headers={"content-type": "application/json"}
    )
    assert (r.status_code, r.json()["error"]["code"]) == (status, code), r.text
    assert "items[" not in r.text
    assert call(http, session, "2 * 21").json()["value"] == "42"
    http.delete(f"/v1/sessions/{session}")


def test_readyz_and_metrics_count_sessions(http: httpx.Client) -> None:
    session = open_session(http)
    call(http, session, "1")
    call(http, session, "1/0")
    sessions = http.get("/readyz").json()["backends"]["sessions"]
    assert sessions["live"] >= 1 and sessions["opened"] >= 1 and sessions["max"] == 2048
    metrics = http.get("/metrics").text
    assert 'rlvr_session_calls{status="ok"}' in metrics and 'rlvr_session_calls{status="error"}' in metrics
    assert "rlvr_sessions_live " in metrics
    http.delete(f"/v1/sessions/{session}")


def test_deleting_a_session_during_a_call_answers_the_call(http: httpx.Client) -> None:
    session = open_session(http)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(call, http, session, "import time; time.sleep(60)", timeout_s=120)
        time.sleep(0.5)
        assert http.delete(f"/v1/sessions/{session}").status_code == 204
        answer = running.result(timeout=30).json()  # a bound for a hang, not a timing
    assert (answer["status"], answer["limit"]) == ("killed", "ended")
    assert call(http, session, "1").status_code == 404


def test_an_invalid_ground_truth_masks_the_graded_file_as_grade_does(http: httpx.Client) -> None:
    session = open_session(http)
    call(http, session, "open('ok.py', 'w').write('def f():\\n    return 1\\n')")
    item = {"response_file": "ok.py", "verifier": "code", "ground_truth": {"fn_name": 1}}
    result = http.post(f"/v1/sessions/{session}/grade", json=item).json()["results"][0]
    assert result["mask"] is True and "ground_truth" in result["reason"] and "items[" not in result["reason"]
    http.delete(f"/v1/sessions/{session}")
