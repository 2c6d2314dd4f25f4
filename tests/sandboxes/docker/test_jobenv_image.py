"""The sandbox image runs what host mode runs: the same job environment (package for
package) and the same toolchains. Its report (`rlvr.sandboxes.jobenv`, run inside the
image as the docker backend runs it) against this host's: in CI, a bare Debian 12 whose
node, g++ and node-lodash come from Debian, as the image's do. A host whose node comes
from elsewhere (NodeSource's 20, say) fails here, as its /readyz shows."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from rlvr.sandboxes.config import DockerConfig
from rlvr.sandboxes.jobenv import IMAGE_PROBE, JobEnvironment, pinned, report

PROBE_TIMEOUT_S = 120


def _image_report(config: DockerConfig) -> dict[str, Any]:
    command = ["docker", "run", "--rm", "--network", "none", "--read-only", "--user", config.user]
    command += ["--entrypoint", IMAGE_PROBE[0], config.image, *IMAGE_PROBE[1:]]
    done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=True)
    return dict(json.loads(done.stdout))


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
    assert all(image_version == host_version for image_version, host_version in versions.values()), versions


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
