"""The deployment files hold what the compose tests rely on, checked without Docker:
every setting reaches the containers, the sandboxed containers get only the named
grants, and the seccomp profile refuses what it must and allows what the local sandbox
needs."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest
import yaml

from rlvr.service.settings import Settings
from tests.services import ROOT, require

COMPOSE = ROOT / "docker-compose.yml"
DOCKER_SANDBOX = ROOT / "docker-compose.docker-sandbox.yml"
PROFILE = ROOT / "docker" / "seccomp-worker.json"
# Set by the compose commands themselves (published port, container address, Redis).
SET_BY_COMMAND = {"host", "port", "redis_url"}
GRANTS = ["SYS_ADMIN", "SYS_CHROOT", "SETUID", "SETGID", "KILL"]
CLONE_NEWUSER = 0x10000000
ENOSYS, EPERM = 38, 1


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load(COMPOSE.read_text()))


def profile() -> dict[str, Any]:
    return dict(json.loads(PROFILE.read_text()))


def rules_for(name: str) -> list[dict[str, Any]]:
    return [r for r in profile()["syscalls"] if name in r["names"]]


def test_every_setting_is_passed_to_the_containers() -> None:
    expected = {f"RLVR_{name.upper()}" for name in Settings.model_fields if name not in SET_BY_COMMAND}
    for service in ("api", "worker"):
        env = compose()["services"][service]["environment"]
        assert set(env) >= expected, (service, sorted(expected - set(env)))


@pytest.mark.parametrize("service", ["api", "worker"])
def test_sandboxed_services_get_the_named_grants_only(service: str) -> None:
    spec = compose()["services"][service]
    assert "privileged" not in spec
    assert spec["cap_drop"] == ["ALL"] and spec["cap_add"] == GRANTS
    assert spec["security_opt"] == ["no-new-privileges:true", f"seccomp:{PROFILE.relative_to(ROOT)}"]
    assert spec["read_only"] is True
    assert "healthcheck" in spec and "restart" in spec


def test_every_service_has_a_health_check_and_a_restart_policy() -> None:
    for name, spec in compose()["services"].items():
        assert "healthcheck" in spec and spec["restart"] == "unless-stopped", name


def test_profile_refuses_by_default_and_names_each_syscall_once() -> None:
    p = profile()
    assert (p["defaultAction"], p["defaultErrnoRet"]) == ("SCMP_ACT_ERRNO", ENOSYS)
    assert [a["architecture"] for a in p["archMap"]] == ["SCMP_ARCH_X86_64"]
    names = [n for rule in p["syscalls"] for n in rule["names"]]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    "name",
    ["ptrace", "bpf", "io_uring_setup", "keyctl", "init_module", "kexec_load", "open_by_handle_at",
     "userfaultfd", "perf_event_open", "process_vm_readv", "move_mount", "fsopen", "reboot"],
)  # fmt: skip
def test_profile_refuses_kernel_attack_surface(name: str) -> None:
    (rule,) = rules_for(name)
    assert (rule["action"], rule["errnoRet"]) == ("SCMP_ACT_ERRNO", EPERM)


@pytest.mark.parametrize(
    "name", ["mount", "umount2", "setns", "seccomp", "prctl", "setresuid", "setresgid", "mount_setattr", "chroot"]
)
def test_profile_allows_what_the_local_sandbox_needs(name: str) -> None:
    (rule,) = rules_for(name)
    assert rule["action"] == "SCMP_ACT_ALLOW" and "args" not in rule


@pytest.mark.parametrize("name", ["clone", "unshare"])
def test_namespaces_yes_user_namespaces_no(name: str) -> None:
    (rule,) = rules_for(name)
    assert rule["action"] == "SCMP_ACT_ALLOW"
    assert rule["args"] == [{"index": 0, "value": CLONE_NEWUSER, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]


def test_clone3_falls_back_to_the_filtered_clone() -> None:
    # Its flags are in memory, out of seccomp's reach: ENOSYS sends glibc to clone.
    (rule,) = rules_for("clone3")
    assert (rule["action"], rule["errnoRet"]) == ("SCMP_ACT_ERRNO", ENOSYS)


def test_docker_sandbox_override_mounts_the_socket_into_the_worker_only() -> None:
    override = yaml.safe_load(DOCKER_SANDBOX.read_text())["services"]
    assert override["worker"]["environment"]["RLVR_SANDBOX"] == "docker"
    assert override["worker"]["volumes"] == ["/var/run/docker.sock:/var/run/docker.sock"]
    assert "volumes" not in override.get("api", {})


@pytest.mark.parametrize("files", [[COMPOSE], [COMPOSE, DOCKER_SANDBOX]], ids=["default", "docker-sandbox"])
def test_docker_compose_1_29_accepts_the_files(files: list[Any]) -> None:
    require(shutil.which("docker-compose") is not None, "docker-compose")
    args = [a for f in files for a in ("-f", str(f))]
    out = subprocess.run(["docker-compose", *args, "config", "-q"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
