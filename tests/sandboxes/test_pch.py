"""The precompiled headers of C++ jobs (`runner.pch`): g++ takes them for the argv jobs
compile with, and a program compiles to the same result with them as without."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rlvr.sandboxes.jobenv import JobEnvironment
from rlvr.sandboxes.runner import pch
from rlvr.sandboxes.runner.native import CODE_STD
from rlvr.sandboxes.runner.program import RUN_CODE_STD
from tests.services import require

SUM = "int main() { long long a = 2, b = 3; std::cout << a + b << std::endl; }\n"
# One program per header: each opens the file, the only place g++ takes a PCH.
PROGRAMS = {
    "bits/stdc++.h": SUM,
    "iostream": SUM,
    "cstdio": 'int main() { std::printf("%d\\n", 2 + 3); }\n',
    "vector": "#include <iostream>\nint main() { std::vector<int> v{2, 3}; std::cout << v[0] + v[1] << std::endl; }\n",
}


@pytest.fixture(scope="module")
def built() -> str:
    found = JobEnvironment().pch_path
    require(found is not None and shutil.which("g++") is not None, "the precompiled headers (make job-env, with g++)")
    assert found is not None
    return found


def _compile(tmp_path: Path, std: str, source: str, root: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "main.cpp"
    path.write_text(source)
    argv = pch.compile_argv("g++", std, str(path), str(tmp_path / "main"), root=root)
    return subprocess.run([*argv, "-H"], capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("std", [RUN_CODE_STD, CODE_STD])
@pytest.mark.parametrize("header", pch.HEADERS)
def test_jobs_compile_through_the_pch_of_their_first_header(built: str, tmp_path: Path, std: str, header: str) -> None:
    done = _compile(tmp_path, std, f"#include <{header}>\n{PROGRAMS[header]}", built)
    assert done.returncode == 0, done.stderr
    # `-H` marks a PCH g++ used with `!`, and lists every header it read instead.
    assert f"! {os.path.join(built, std, header)}.gch" in done.stderr.splitlines()
    assert subprocess.run([tmp_path / "main"], capture_output=True, text=True, check=True).stdout == "5\n"


def test_a_pch_is_not_taken_past_the_first_line_of_code(built: str, tmp_path: Path) -> None:
    done = _compile(tmp_path, RUN_CODE_STD, f"int x;\n#include <iostream>\n{SUM}", built)
    assert done.returncode == 0, done.stderr
    assert not any(line.startswith("! ") for line in done.stderr.splitlines())


def test_the_same_errors_with_and_without_the_pch(built: str, tmp_path: Path) -> None:
    # `count` clashes with std::count once `using namespace std` brings it in.
    program = "#include <bits/stdc++.h>\nusing namespace std;\nint count;\nint main() { return count; }\n"
    with_pch = _compile(tmp_path, RUN_CODE_STD, program, built)
    without = _compile(tmp_path, RUN_CODE_STD, program, str(tmp_path / "none"))
    assert with_pch.returncode == without.returncode != 0

    def first_error(stderr: str) -> str:
        return next(line for line in stderr.splitlines() if "error:" in line)

    assert first_error(with_pch.stderr) == first_error(without.stderr)
    assert "count" in first_error(with_pch.stderr) and "is ambiguous" in first_error(with_pch.stderr)


# Headers that include a precompiled one again, or are one: after a PCH, g++ opens the
# header it replaced by that header's path, so each must be there (issue 33's red team).
THEN = ("cstdio", "iostream", "bits/stdc++.h", "vector", "queue", "random", "algorithm", "map", "sstream", "cmath")


@pytest.mark.parametrize("first", pch.HEADERS)
def test_any_header_after_a_precompiled_one_compiles_as_without_it(built: str, tmp_path: Path, first: str) -> None:
    for then in THEN:
        source = f"#include <{first}>\n#include <{then}>\n#include <{first}>\nint main() {{ return 0; }}\n"
        with_pch = _compile(tmp_path, RUN_CODE_STD, source, built)
        assert with_pch.returncode == 0, (then, with_pch.stderr[-2000:])
        assert f"! {os.path.join(built, RUN_CODE_STD, first)}.gch" in with_pch.stderr.splitlines()


@pytest.mark.parametrize("std", [RUN_CODE_STD, CODE_STD])
def test_a_pch_that_does_not_fit_the_flags_leaves_the_real_header(built: str, tmp_path: Path, std: str) -> None:
    # `-O0` is not what the PCHs were built with: g++ reads the stub, which reads the header.
    path = tmp_path / "main.cpp"
    path.write_text(f"#include <bits/stdc++.h>\n#include <cstdio>\n{SUM}")
    argv = [a for a in pch.compile_argv("g++", std, str(path), str(tmp_path / "main"), root=built) if a != pch.OPTIMIZE]
    done = subprocess.run([*argv, "-O0", "-H"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert not any(line.startswith("! ") for line in done.stderr.splitlines())
    assert subprocess.run([tmp_path / "main"], capture_output=True, text=True, check=True).stdout == "5\n"


def test_no_include_directory_where_none_was_built(tmp_path: Path) -> None:
    argv = pch.compile_argv("g++", "c++17", "main.cpp", "main", root=str(tmp_path))
    assert argv == ["g++", pch.OPTIMIZE, "-std=c++17", "-pipe", "-o", "main", "main.cpp"]
