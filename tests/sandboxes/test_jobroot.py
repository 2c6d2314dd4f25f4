"""What a job can see of the host: its minimal root has no /run (no host Unix socket to
connect to), no /sys (no network interfaces, MACs or cgroup tree), no host directory
but the toolchains' and the interpreter's, a /etc of its own, and a /proc of the
zygote's PID namespace with nothing of the host's (pids, kernel command line, cgroup
paths)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from typing import Any

import pytest

from rlvr.sandboxes.jobenv import JobEnvironment
from rlvr.sandboxes.local import isolate, jobroot, wiring, zygote
from rlvr.sandboxes.local.sandbox import LocalSandbox, get_local_sandbox
from rlvr.sandboxes.runner import pch
from tests.sandboxes.jobs import returned
from tests.services import require


@pytest.fixture(scope="module")
def sb() -> LocalSandbox:
    box = get_local_sandbox()
    require(box.isolation().get("minimal_root") is True, "the minimal job root (run as root)")
    return box


def look(sb: LocalSandbox, body: str) -> Any:
    return returned(sb, body)


def host_sockets() -> list[str]:
    """Unix sockets the host has under /run and /var/run (and well-known ones)."""
    found = {"/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock"}
    found.add("/run/dbus/system_bus_socket")
    for top in ("/run", "/var/run"):
        for dir_, _dirs, files in os.walk(top):
            for name in files:
                path = os.path.join(dir_, name)
                try:
                    if stat.S_ISSOCK(os.lstat(path).st_mode):
                        found.add(path)
                except OSError:
                    continue
    return sorted(found)


CONNECT = (
    "out = {}\nfor path in PATHS:\n    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect(path)\n"
    "        out[path] = 'connected'\n    except OSError as e:\n        out[path] = e.errno\n    finally:\n"
    "        s.close()\nreturn out"
)


def test_no_host_unix_socket_is_reachable(sb: LocalSandbox) -> None:
    paths = host_sockets()
    got = look(sb, f"PATHS = {paths!r}\n" + CONNECT)
    assert "connected" not in got.values(), got
    assert look(sb, "return [os.path.exists(p) for p in ('/run', '/var/run', '/var')]") == [False, False, False]


def test_no_host_network_interfaces_or_sys(sb: LocalSandbox) -> None:
    body = "lines = open('/proc/self/net/dev').read().splitlines()[2:]\n"
    body += "return [os.path.exists('/sys'), [line.split(':')[0].strip() for line in lines]]"
    assert look(sb, body) == [False, ["lo"]]


def test_proc_tells_nothing_of_the_host(sb: LocalSandbox) -> None:
    with open("/proc/cmdline") as f:
        assert f.read().strip()  # the host's is not empty: the job's must be
    body = (
        "cmdline = open('/proc/cmdline').read()\n"
        "cgroups = open('/proc/self/cgroup').read().split()\n"
        "nspid = [l.split()[1:] for l in open('/proc/self/status') if l.startswith('NSpid')][0]\n"
        "pids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
        "owners = {os.stat('/proc/' + p).st_uid for p in pids}\n"
        "return [cmdline, [c.rsplit(':', 1)[1] for c in cgroups], len(nspid), nspid[-1], owners == {os.getuid()}, pids]"
    )
    cmdline, cgroup_paths, levels, own_pid, owners_ok, pids = look(sb, body)
    assert cmdline == ""
    assert set(cgroup_paths) == {"/"}, cgroup_paths  # no host cgroup path
    # A procfs of the zygote's namespace (the job's pid there, then 1), not the host's.
    assert levels == 2 and own_pid == "1" and owners_ok
    assert str(sb._hello["pid"]) not in pids


def test_the_root_holds_only_what_jobs_need(sb: LocalSandbox) -> None:
    top = set(look(sb, "return os.listdir('/')"))
    assert {"usr", "etc", "dev", "tmp", "proc"} <= top
    assert not top & {"run", "var", "sys", "srv", "home", "boot", "media", "old_root"}, top
    if "opt" in top:  # only where the job environment lives there (a checkout under /tmp)
        assert look(sb, "return os.listdir('/opt')") == ["rlvr-jobs"]
    assert look(sb, "return os.path.realpath('/mnt')") == "/tmp"  # the host's /mnt is not there
    etc = set(look(sb, "return sorted(os.listdir('/etc'))"))
    assert {"passwd", "group", "ld.so.cache"} <= etc
    assert not etc & {"shadow", "gshadow", "sudoers", "ssh", "machine-id", "resolv.conf"}, etc
    assert look(sb, "return os.listdir('/etc/ssl')") == ["openssl.cnf"]  # no private keys


def test_the_job_has_a_name_and_the_host_users_are_gone(sb: LocalSandbox) -> None:
    body = "import pwd\nnames = {p.pw_name for p in pwd.getpwall()}\n"
    body += "return [pwd.getpwuid(os.getuid()).pw_name, sorted(n for n in names if not n.startswith('job'))]"
    name, others = look(sb, body)
    assert name.startswith("job") and others == ["nobody", "root"]


def test_devices_are_the_harmless_ones(sb: LocalSandbox) -> None:
    body = (
        "devs = sorted(os.listdir('/dev'))\nopen('/dev/null', 'w').write('x')\n"
        "return [devs, len(open('/dev/urandom', 'rb').read(8)), open('/dev/zero', 'rb').read(2)]"
    )
    devs, random_bytes, zeros = look(sb, body)
    assert set(devs) == {*jobroot.DEVICES, *jobroot.DEV_LINKS, "shm"}
    assert random_bytes == 8 and zeros == b"\0\0"


def test_the_level_needs_the_minimal_root_and_own_pid_namespace() -> None:
    caps = isolate.Capabilities(root=True)
    caps.mount_ns = caps.readonly_root = caps.pid_ns = caps.net_ns = caps.uts_ns = caps.ipc_ns = True
    caps.uid_drop = caps.seccomp = True
    caps.tests_mnt, caps.cgroups = 11, "v1"
    caps.minimal_root = caps.own_pid_ns = True
    assert caps.level == "full"
    caps.minimal_root = False
    assert caps.level == "namespaces"
    caps.minimal_root, caps.own_pid_ns = True, False
    assert caps.level == "namespaces"


def test_the_report_names_import_paths_jobs_do_not_get(sb: LocalSandbox) -> None:
    """A service installed under /tmp (a venv in a clone there): a job's own /tmp covers
    its site-packages, so the isolation report lists them rather than leaving programs
    to fail on their imports unexplained."""
    under_tmp = tempfile.mkdtemp(prefix="site-", dir="/tmp")
    try:
        command = wiring.zygote_command("--probe")
        assert command[-2] == "--site"
        command[-1] = os.pathsep.join([under_tmp, command[-1]])
        done = subprocess.run(command, env=wiring.zygote_env(), capture_output=True, text=True, timeout=120)
        report = json.loads(done.stdout.splitlines()[-1])
    finally:
        shutil.rmtree(under_tmp)
    # This checkout's own: all there, unless it is itself installed under /tmp.
    own_under_tmp = [d for d in JobEnvironment().python_path if os.path.realpath(d).startswith("/tmp/")]
    assert report["hidden_import_paths"] == [under_tmp, *own_under_tmp]
    assert sb.isolation()["hidden_import_paths"] == own_under_tmp


@pytest.mark.parametrize(
    ("wanted", "kept", "hidden"),
    [
        (["/usr/lib/python3.11", "/tmp"], ["/usr/lib/python3.11"], ["/tmp"]),
        (["/usr/lib/python3.11", "/usr/lib"], ["/usr/lib"], ["/usr/lib/python3.11"]),
        (["/usr/lib/python3.11"], ["/usr/lib/python3.11"], []),
        (["/usr/../usr/lib/python3.11"], ["/usr/lib/python3.11"], []),
    ],
)
def test_hidden_paths(wanted: list[str], kept: list[str], hidden: list[str]) -> None:
    assert zygote.hidden_paths(wanted, kept) == hidden


def test_cpp_jobs_see_the_precompiled_headers_and_cannot_change_them(sb: LocalSandbox) -> None:
    require(JobEnvironment().pch_path is not None, "the precompiled headers (make job-env, with g++)")
    body = (
        "found = sorted(os.path.relpath(os.path.join(d, f), '/pch') for d, _, fs in os.walk('/pch') for f in fs)\n"
        "try:\n    open('/pch/c++17/iostream.gch', 'r+b').write(b'x')\n    wrote = True\n"
        "except OSError:\n    wrote = False\n"
        "return [found, wrote]"
    )
    found, wrote = look(sb, body)
    expected = {f"{std}/{header}.gch" for std in pch.STANDARDS for header in pch.HEADERS}
    assert expected <= set(found), found
    assert wrote is False
