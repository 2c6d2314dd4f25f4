"""docker-compose.yml for real (issue 14): the stack comes up from the image built from
this checkout, grades through its published port, scales, survives a killed worker,
and `down` leaves nothing of the project. The tests share one stack and run in order;
the last one takes it down."""

from __future__ import annotations

import subprocess
import threading
from typing import Any

import httpx
import pytest

from rlvr.sandboxes.local.zygote import SHARED_UID_BASE
from rlvr.service import redis_keys
from tests.deploy.stack import TEST_TIMEOUT_S, Stack, docker_exec, inspect

# Prints what a job really holds: graded as a stdin/stdout test, it earns 1 only if a
# job has no effective capability and no_new_privs set.
STATUS_PROGRAM = """```python
for line in open('/proc/self/status'):
    if line.startswith(('CapEff:', 'NoNewPrivs:')):
        print(*line.split())
```"""
JOB_STATUS = "CapEff: 0000000000000000\nNoNewPrivs: 1\n"
ISOLATION = "import json; from rlvr.sandboxes import isolation_report; print(json.dumps(isolation_report()))"
KILL_BATCH = 300
pytestmark = pytest.mark.timeout(TEST_TIMEOUT_S)


def grade(api: httpx.Client, items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    r = api.post("/v1/grade", json={"items": items})
    assert r.status_code == 200, r.text[:2000]
    return {x["id"]: x for x in r.json()["results"]}


def explain(results: dict[str, dict[str, Any]], stack: Stack) -> str:
    """Why a batch came back wrong, short enough for CI's excerpt of the output: each
    result's verdict and reason (the same reason once), then the stack's recent logs."""
    seen: dict[str, list[str]] = {}
    for key, r in results.items():
        seen.setdefault(f"{r['verdict']} mask={r['mask']} reward={r['reward']}: {r['reason'][:300]}", []).append(key)
    lines = [f"{', '.join(keys[:8])}{' ...' if len(keys) > 8 else ''} -> {what}" for what, keys in seen.items()]
    return "\n".join([*lines, "--- logs ---", stack.logs("worker", "api")])


def stdio(id_: str, program: str, stdin: str, stdout: str, language: str = "python") -> dict[str, Any]:
    fence = {"python": "python", "cpp": "cpp", "javascript": "javascript"}[language]
    return {
        "id": id_,
        "verifier": "code",
        "response": f"```{fence}\n{program}\n```",
        "ground_truth": {"language": language, "inputs": [stdin], "outputs": [stdout]},
    }


def test_readyz_reports_full_isolation_inside_the_container(stack: Stack) -> None:
    sandbox = stack.wait_ready()["backends"]["sandbox"]
    assert sandbox["isolation"] == "full", sandbox
    assert sandbox["errors"] == []


def test_a_mixed_batch_is_graded_through_the_published_port(stack: Stack, api: httpx.Client) -> None:
    cpp = "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<std::endl;}"
    items = [
        {"id": "math-right", "verifier": "math", "response": "so \\boxed{4}", "ground_truth": "4"},
        {"id": "math-wrong", "verifier": "math", "response": "so \\boxed{5}", "ground_truth": "4"},
        stdio("py", "print(sum(map(int, input().split())))", "1 2\n", "3\n"),
        stdio("py-wrong", "print(0)", "1 2\n", "3\n"),
        stdio("cpp", cpp, "40 2\n", "42\n", "cpp"),
        {
            "id": "js",
            "verifier": "code",
            "response": "```javascript\nfunction add(a, b) { return a + b; }\n```",
            "ground_truth": {"language": "javascript", "fn_name": "add", "inputs": [[1, 2], [3, 4]], "outputs": [3, 7]},
        },
        {"id": "format", "verifier": "format", "response": "<think>2+2</think><answer>4</answer>"},
        {"id": "format-wrong", "verifier": "format", "response": "4"},
    ]
    results = grade(api, items)
    rewards = {k: v["reward"] for k, v in results.items()}
    assert rewards == {
        "math-right": 1.0,
        "math-wrong": 0.0,
        "py": 1.0,
        "py-wrong": 0.0,
        "cpp": 1.0,
        "js": 1.0,
        "format": 1.0,
        "format-wrong": 0.0,
    }, explain(results, stack)
    assert not any(v["mask"] for v in results.values()), explain(results, stack)


def test_jobs_run_without_capabilities_and_with_no_new_privs(stack: Stack, api: httpx.Client) -> None:
    item: dict[str, Any] = {"id": "status", "verifier": "code", "response": STATUS_PROGRAM}
    item["ground_truth"] = {"inputs": [""], "outputs": [JOB_STATUS]}
    results = grade(api, [item])
    assert (results["status"]["reward"], results["status"]["mask"]) == (1.0, False), explain(results, stack)


def test_jobs_in_a_container_take_uids_above_every_host_range(stack: Stack, api: httpx.Client) -> None:
    """Pids start again from 1 in each container: the jobs' uids come from the zygote's
    PID namespace as well, above what any host zygote takes (`zygote.uid_base`)."""
    program = f"import os\nprint({SHARED_UID_BASE} <= os.getuid() < 2**32 - 2)"
    results = grade(api, [stdio("uid", program, "", "True\n")])
    assert (results["uid"]["reward"], results["uid"]["mask"]) == (1.0, False), explain(results, stack)


def test_the_worker_container_has_the_sandbox_and_the_seccomp_profile(stack: Stack) -> None:
    (worker,) = stack.running("worker")
    config = inspect(worker)["HostConfig"]
    assert config["Privileged"] is False
    assert sorted(c.removeprefix("CAP_") for c in config["CapAdd"]) == [
        "KILL",
        "SETGID",
        "SETUID",
        "SYS_ADMIN",
        "SYS_CHROOT",
    ]
    assert config["CapDrop"] in (["ALL"], ["CAP_ALL"])
    # In the cgroup namespace the entrypoint gives the worker (docker exec joins none).
    report = docker_exec(worker, "unshare", "--cgroup", "python", "-c", ISOLATION)
    assert '"isolation": "full"' in report.stdout, report
    # The profile is applied, not Docker's default: namespaces yes, user namespaces no.
    assert docker_exec(worker, "unshare", "--mount", "--pid", "--fork", "true").returncode == 0
    denied = docker_exec(worker, "unshare", "--user", "true")
    assert denied.returncode != 0 and "Operation not permitted" in denied.stderr, denied


def test_workers_scale_to_two(stack: Stack, api: httpx.Client) -> None:
    stack.up("--scale", "worker=2", "--no-recreate")
    assert len(stack.running("worker")) == 2
    results = grade(api, [stdio(f"s{i}", "print(int(input()) * 2)", f"{i}\n", f"{2 * i}\n") for i in range(40)])
    assert all(r["reward"] == 1.0 and not r["mask"] for r in results.values()), explain(results, stack)


def test_a_worker_killed_mid_batch_loses_no_item(stack: Stack, api: httpx.Client) -> None:
    """Each program spends a little CPU so that the batch is still running when one of
    the two workers is killed; its entries are reclaimed by the other."""
    workers = stack.running("worker")
    assert len(workers) == 2
    # Even items add (right), odd ones multiply (wrong: i*(i+1) is never 2i+1).
    program = "a, b = map(int, input().split()); sum(range(3_000_000)); print(a {} b)"
    items = [
        stdio(f"k{i}", program.format("+" if i % 2 == 0 else "*"), f"{i} {i + 1}\n", f"{2 * i + 1}\n")
        for i in range(KILL_BATCH)
    ]
    answer: dict[str, dict[str, Any]] = {}
    batch = threading.Thread(target=lambda: answer.update(grade(api, items)))
    processed_before = processed_units(stack)
    batch.start()
    while processed_units(stack) < processed_before + 10 and batch.is_alive():
        batch.join(0.2)
    assert batch.is_alive(), "the batch finished before a worker could be killed"
    subprocess.run(["docker", "kill", workers[0]], check=True, capture_output=True)
    batch.join()
    assert len(answer) == KILL_BATCH
    assert not [k for k, v in answer.items() if v["mask"]], explain(answer, stack)
    wrong = {k: v["reward"] for k, v in answer.items() if v["reward"] != (1.0 if int(k[1:]) % 2 == 0 else 0.0)}
    assert not wrong, explain({k: answer[k] for k in wrong}, stack)


def processed_units(stack: Stack) -> int:
    (redis,) = stack.running("redis")
    out = docker_exec(redis, "redis-cli", "HGET", redis_keys.STATS, "processed_units").stdout.strip()
    return int(out or 0)


def test_down_leaves_no_container_network_or_volume(stack: Stack) -> None:
    containers = stack.containers()
    assert containers
    volumes = [m["Name"] for c in containers for m in inspect(c)["Mounts"] if m["Type"] == "volume"]
    stack.down()
    label = f"label=com.docker.compose.project={stack.project}"
    assert stack.containers() == []
    networks = subprocess.run(["docker", "network", "ls", "-q", "--filter", label], capture_output=True, text=True)
    assert networks.stdout.split() == []
    left = subprocess.run(["docker", "volume", "ls", "-q", "--filter", label], capture_output=True, text=True)
    assert left.stdout.split() == []
    # Anonymous volumes carry no project label: the stack must have made none.
    assert volumes == []
