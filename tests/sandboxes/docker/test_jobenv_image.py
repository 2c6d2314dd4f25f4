"""The sandbox image runs what host mode runs: the same job environment (package for
package) and the same toolchains. Its report (`rlvr.sandboxes.jobenv`, run inside the
image as the docker backend runs it) against this host's. A toolchain is compared where
the host installed it from the same Debian package version as the image (bookworm's
g++, rustc): a host whose node comes from elsewhere (NodeSource's 20, as on the hosts
CI runs on) runs another node than the image by its own choice, which dpkg tells."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from rlvr.sandboxes.config import DockerConfig
from rlvr.sandboxes.jobenv import IMAGE_PROBE, JobEnvironment, pinned, report

PROBE_TIMEOUT_S = 120
# Each tool's path, the package that owns it, and that package's version, as dpkg knows it.
PACKAGE_OF_TOOL = (
    'for tool in "$@"; do path=$(command -v "$tool") || continue; '
    'owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null) || continue; package=${owner%%:*}; '
    'echo "$tool $package $(dpkg-query -W -f \'${Version}\' "$package")"; done'
)
# Tools the host must have from the image's packages, so the comparison cannot be empty.
ALWAYS_DEBIANS = ("g++",)


def _image_report(config: DockerConfig) -> dict[str, Any]:
    command = ["docker", "run", "--rm", "--network", "none", "--read-only", "--user", config.user]
    command += ["--entrypoint", IMAGE_PROBE[0], config.image, *IMAGE_PROBE[1:]]
    done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=True)
    return dict(json.loads(done.stdout))


def _packages(output: str) -> dict[str, str]:
    """`tool package version` lines as {tool: "package version"}."""
    return {tool: rest for tool, rest in (line.split(" ", 1) for line in output.splitlines())}


def _image_packages(config: DockerConfig, tools: list[str]) -> dict[str, str]:
    command = ["docker", "run", "--rm", "--network", "none", "--read-only", "--user", config.user]
    command += ["--entrypoint", "sh", config.image, "-c", PACKAGE_OF_TOOL, "sh", *tools]
    done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=True)
    return _packages(done.stdout)


def _host_packages(tools: list[str]) -> dict[str, str]:
    done = subprocess.run(["sh", "-c", PACKAGE_OF_TOOL, "sh", *tools], capture_output=True, text=True, check=True)
    return _packages(done.stdout)


def test_the_image_has_the_pinned_environment(docker_config: DockerConfig) -> None:
    image = _image_report(docker_config)
    assert image["python_packages"] == pinned()
    assert image["missing"] == []
    assert image["node_packages"]["lodash"]


def test_the_image_runs_host_modes_versions(docker_config: DockerConfig) -> None:
    image, host = _image_report(docker_config), report(JobEnvironment())
    assert image["python_packages"] == host["python_packages"]
    assert image["node_packages"] == host["node_packages"]
    versions = {
        name: (tool["version"], host["toolchains"][name]["version"]) for name, tool in image["toolchains"].items()
    }
    # Python by its minor version (job frames are `marshal` data, the same within one).
    python = [".".join(v.split(".")[:2]) for v in versions.pop("python")]
    assert python[0] == python[1], versions
    # rustc and coq only where the image was built with them (TOOLCHAINS).
    for optional in ("rustc", "coqc", "coqchk"):
        if versions[optional][0] is None:
            versions.pop(optional)
    tools = sorted(versions)
    same_package = _image_packages(docker_config, tools).items() & _host_packages(tools).items()
    compared = {tool: versions[tool] for tool, _ in same_package}
    assert set(ALWAYS_DEBIANS) <= compared.keys(), (compared, versions)
    assert all(image_version == host_version for image_version, host_version in compared.values()), compared


def test_cpp_jobs_in_the_image_compile_through_its_precompiled_headers(docker_config: DockerConfig) -> None:
    script = (
        "import subprocess, sys; sys.path.insert(0, '/opt/rlvr'); from rlvr.sandboxes.runner import pch\n"
        "open('/tmp/main.cpp', 'w').write('#include <bits/stdc++.h>\\nint main() { std::cout << 5; }\\n')\n"
        "argv = pch.compile_argv('g++', 'c++20', '/tmp/main.cpp', '/tmp/main') + ['-H']\n"
        "done = subprocess.run(argv, capture_output=True, text=True)\n"
        "print(done.returncode, done.stderr.splitlines()[0])"
    )
    command = ["docker", "run", "--rm", "--network", "none", "--read-only", "--tmpfs", "/tmp", "--user"]
    command += [docker_config.user, "--entrypoint", "python3", docker_config.image, "-I", "-S", "-c", script]
    done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=True)
    assert done.stdout.strip() == "0 ! /pch/c++20/bits/stdc++.h.gch", done.stdout + done.stderr
