"""The wheel installs one top-level package, `rlvr`, and works next to the PyPI projects
that own the generic names `verifiers`, `trainer`, `service` and `sandboxes`, whichever
is installed first, and after they are uninstalled again.

Slow (a fresh venv with every dependency): about a minute.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tarfile
import textwrap
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
# Projects on PyPI whose top-level package has the name of one of our root folders.
# `sandboxes` has no release that installs on Python 3.11, so a stand-in plays it.
NEIGHBOURS = ("verifiers", "trainer", "service", "sandboxes")
STAND_INS = ("sandboxes",)
SERVE_TIMEOUT_S = 90.0
CODE = "```python\ndef add(a, b):\n    return a + b\n```"
ADD_TESTS = {"tests": ["assert add(1, 2) == 3"]}
PUBLIC_NAMES = ("GradeInput", "NoParams", "Outcome", "Verdict", "Verifier", "RewardClient", "PluginError")

# format: right, wrong; math: right; code: right.
GRADED = [1.0, 0.0, 1.0, 1.0]

pytestmark = pytest.mark.slow


def _pip(python: Path | str, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", "-q", *args], check=True, cwd="/")


def _stand_in(name: str, where: Path) -> Path:
    """A minimal project that installs the top-level package `name`, for a name that
    has no installable release here."""
    project = where / f"stand-in-{name}"
    (project / name).mkdir(parents=True)
    (project / name / "__init__.py").write_text(f"OWNER = 'stand-in {name}'\n")
    (project / "pyproject.toml").write_text(
        textwrap.dedent(f"""
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "{name}"
        version = "0.0.1"
        [tool.setuptools]
        packages = ["{name}"]
        """)
    )
    return project


def _neighbour_wheel(name: str, wheels: Path, scratch: Path) -> None:
    """The PyPI project's own wheel (built from its sdist if need be), or a stand-in."""
    source = str(_stand_in(name, scratch)) if name in STAND_INS else name
    _pip(sys.executable, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), source)


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("wheels")
    scratch = tmp_path_factory.mktemp("scratch")
    _pip(sys.executable, "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(ROOT))
    for name in NEIGHBOURS:
        _neighbour_wheel(name, out, scratch)
    found: dict[str, Path] = {}
    for wheel in out.glob("*.whl"):
        project = wheel.name.split("-")[0].lower()
        found[project] = wheel
    assert set(found) == {"rlvr", *NEIGHBOURS}, found
    return found


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheels: dict[str, Path]) -> Path:
    """A fresh venv with rlvr's wheel and its dependencies."""
    where = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    python = where / "bin" / "python"
    _pip(python, "install", str(wheels["rlvr"]))
    return python


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(venv: Path) -> Iterator[str]:
    """`rlvr serve` from the venv's own console script, run from outside the checkout."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RLVR_", "PYTHON"))}
    command = [str(venv.parent / "rlvr"), "serve", "--port", str(port), "--workers", "1"]
    proc = subprocess.Popen(command, env=env, cwd="/")
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVE_TIMEOUT_S
        while not _ready(url):
            assert proc.poll() is None, "rlvr serve exited"
            assert time.monotonic() < deadline, "rlvr serve never became ready"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _ready(url: str) -> bool:
    try:
        return httpx.get(url + "/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _check_installed(venv: Path, url: str | None) -> dict[str, str]:
    """Imports the public names in the venv, grades through `url` with the public
    client, and says where each neighbour's top-level package is loaded from."""
    script = textwrap.dedent(f"""
        import importlib.util, json, sys
        import rlvr
        from rlvr import {", ".join(PUBLIC_NAMES)}
        from rlvr.service.app import create_app
        from rlvr.sandboxes.local.wiring import zygote_command
        result = {{"rlvr": rlvr.__file__}}
        for name in {NEIGHBOURS!r}:
            spec = importlib.util.find_spec(name)
            result[name] = spec.origin if spec else None
        url = {url!r}
        if url:
            with RewardClient(url) as client:
                out = client.rewards(["<think>a</think><answer>4</answer>", "4"], verifier="format")
                math = client.rewards(["so \\\\boxed{{4}}"], verifier="math", ground_truths=["4"])
                # Runs in the sandbox's zygote, which starts `python -S` and must find rlvr.
                code = client.rewards([{CODE!r}], verifier="code", ground_truths=[{ADD_TESTS!r}])
            result["rewards"] = out.values + math.values + code.values
            result["reasons"] = [r.reason for r in out.results + math.results + code.results]
        print(json.dumps(result))
    """)
    done = subprocess.run([str(venv), "-c", script], capture_output=True, text=True, cwd="/")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_the_wheel_holds_only_rlvr(wheels: dict[str, Path]) -> None:
    names = zipfile.ZipFile(wheels["rlvr"]).namelist()
    assert {n.split("/")[0] for n in names} == {"rlvr", "rlvr-0.1.0.dist-info"}
    for module in ("service/app.py", "verifiers/math/verifier.py", "sandboxes/local/zygote.py", "client.py"):
        assert f"rlvr/{module}" in names
    top_level = [n for n in names if n.endswith("top_level.txt")]
    assert not top_level or zipfile.ZipFile(wheels["rlvr"]).read(top_level[0]).split() == [b"rlvr"]


def test_the_sdist_holds_the_same_single_tree(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    [sdist] = tmp_path.glob("rlvr-*.tar.gz")
    with tarfile.open(sdist) as tar:
        members = tar.getmembers()
    assert not [m.name for m in members if m.issym() or m.islnk()]
    tops = {m.name.split("/")[1] for m in members if m.name.count("/") >= 1}
    assert not tops & {"rlvr", *NEIGHBOURS}, tops  # the package is under src/ only
    names = {m.name.split("/", 1)[1] for m in members if "/" in m.name}
    for module in ("service/app.py", "verifiers/math/verifier.py", "sandboxes/local/_jobstart.c", "client.py"):
        assert f"src/rlvr/{module}" in names


def test_the_checkout_has_no_symlinks() -> None:
    listed = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert not [line for line in listed.splitlines() if line.startswith("120000")]


def test_a_bare_import_from_the_checkout_finds_none_of_ours() -> None:
    # From the root, where `make test` runs: PyPI's `verifiers` or nothing, never our folder.
    for name in NEIGHBOURS:
        done = subprocess.run(
            [sys.executable, "-c", f"import importlib.util as u; s = u.find_spec({name!r}); print(s and s.origin)"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        origin = done.stdout.strip()
        assert origin == "None" or not origin.startswith(str(ROOT)), (name, origin)


# The tests below run in order on one venv: each installs or removes what the next expects.


def test_rlvr_first_then_the_neighbours(venv: Path, wheels: dict[str, Path]) -> None:
    _pip(venv, "install", "--no-deps", *(str(wheels[n]) for n in NEIGHBOURS))
    with serving(venv) as url:
        found = _check_installed(venv, url)
    assert found["rewards"] == GRADED, found["reasons"]
    for name in NEIGHBOURS:
        assert found[name] is not None and "/rlvr/" not in found[name], (name, found[name])


def test_uninstalling_the_neighbours_leaves_rlvr_whole(venv: Path) -> None:
    _pip(venv, "uninstall", "-y", *NEIGHBOURS)
    found = _check_installed(venv, None)
    assert all(found[name] is None for name in NEIGHBOURS), found


def test_the_neighbours_first_then_rlvr(venv: Path, wheels: dict[str, Path]) -> None:
    _pip(venv, "uninstall", "-y", "rlvr")
    _pip(venv, "install", "--no-deps", *(str(wheels[n]) for n in NEIGHBOURS))
    _pip(venv, "install", "--no-deps", str(wheels["rlvr"]))
    with serving(venv) as url:
        found = _check_installed(venv, url)
    assert found["rewards"] == GRADED, found["reasons"]
    for name in NEIGHBOURS:
        assert found[name] is not None and "/rlvr/" not in found[name], (name, found[name])
