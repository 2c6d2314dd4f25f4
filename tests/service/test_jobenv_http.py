"""The job environment over HTTP, against a real `rlvr serve`: programs that import
numpy, pandas, scipy and sortedcontainers, and node programs that require lodash, pass;
one that imports a module the environment lacks scores 0, unmasked; /readyz and
/v1/verifiers report the packages and the toolchains' versions. RLVR_JOB_PYTHON_PATH
names the environment (here the checkout's, which `make test` builds)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pydantic
import pytest

from rlvr.sandboxes.jobenv import default_python_path, pinned
from rlvr.service.settings import Settings
from tests.services import Server, in_ci, require
from tests.verifiers.code.test_jobenv_programs import CALLS, JS_CALLS, NODE_CALL, PYTHON_CALL

MISSING = "```python\nimport sklearn\ndef f(xs):\n    return 0\n```"


def _job_python_path() -> str:
    """Where `make job-env` built it: the checkout's .venv-jobs, or /opt/rlvr-jobs for a
    checkout under /tmp (see the Makefile)."""
    built = default_python_path()
    require(bool(built), "the job environment (make job-env)")
    return built[0]


def _server(plugin_dir: Path, python_path: str) -> Iterator[httpx.Client]:
    with (
        Server(plugin_dir, "--workers", "1", job_python_path=python_path) as server,
        httpx.Client(base_url=server.url, timeout=120) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def api(plugin_dir: Path) -> Iterator[httpx.Client]:
    yield from _server(plugin_dir, _job_python_path())


@pytest.fixture(scope="module")
def bare(plugin_dir: Path) -> Iterator[httpx.Client]:
    """A service configured with no Python packages for jobs."""
    yield from _server(plugin_dir, "")


def _grade(client: httpx.Client, response: str, ground_truth: dict[str, Any]) -> dict[str, Any]:
    item = {"verifier": "code", "response": response, "ground_truth": ground_truth, "params": {"timeout_s": 20}}
    r = client.post("/v1/grade", json={"items": [item]})
    assert r.status_code == 200, r.text
    return dict(r.json()["results"][0])


def _isolated(client: httpx.Client) -> None:
    sandbox = client.get("/readyz").json()["backends"]["sandbox"]
    ok = sandbox.get("isolation") in ("namespaces", "full")
    require(ok, f"namespace isolation (here only {sandbox.get('isolation')!r}; run as root)")


def test_a_program_uses_the_environment(api: httpx.Client) -> None:
    _isolated(api)
    result = _grade(api, PYTHON_CALL, CALLS)
    assert result["reward"] == 1.0 and not result["mask"], result


@pytest.mark.skipif(shutil.which("node") is None and not in_ci(), reason="node not installed")
def test_a_node_program_requires_lodash(api: httpx.Client) -> None:
    _isolated(api)
    result = _grade(api, NODE_CALL, JS_CALLS)
    assert result["reward"] == 1.0 and not result["mask"], result


def test_a_missing_module_is_the_programs_failure(api: httpx.Client) -> None:
    _isolated(api)
    result = _grade(api, MISSING, CALLS)
    assert result["reward"] == 0.0 and not result["mask"] and "sklearn" in result["reason"], result


def test_readyz_and_verifiers_report_the_environment(api: httpx.Client) -> None:
    readyz = api.get("/readyz").json()["backends"]["sandbox"]["job_environment"]
    assert readyz["python_path"] == [_job_python_path()]
    assert {name: readyz["python_packages"].get(name) for name in pinned()} == pinned()
    assert readyz["missing"] == []
    assert readyz["node_packages"]["lodash"]
    for tool in ("python", "g++", "node"):
        assert readyz["toolchains"][tool]["version"], readyz["toolchains"]
    (code,) = [v for v in api.get("/v1/verifiers").json()["verifiers"] if v["name"] == "code"]
    assert code["availability"]["sandbox"]["job_environment"] == readyz


def test_a_service_without_the_environment_says_so_and_still_never_masks(bare: httpx.Client) -> None:
    _isolated(bare)
    readyz = bare.get("/readyz").json()["backends"]["sandbox"]["job_environment"]
    assert readyz["python_packages"] == {} and "numpy==" + pinned()["numpy"] in readyz["missing"]
    result = _grade(bare, PYTHON_CALL, CALLS)
    assert result["reward"] == 0.0 and not result["mask"] and "numpy" in result["reason"], result


@pytest.mark.parametrize("setting", ["job_python_path", "job_node_path"])
@pytest.mark.parametrize("value", ["/nonexistent", "relative/dir", "/usr:/nonexistent"])
def test_a_job_environment_folder_that_is_not_there_is_refused_by_name(setting: str, value: str) -> None:
    """Else every program importing from it would get a silent 0."""
    with pytest.raises(pydantic.ValidationError, match=setting):
        Settings(**{setting: value})
    assert getattr(Settings(**{setting: ""}), setting) == ""  # empty: none, as documented
