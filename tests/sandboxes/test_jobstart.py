"""A job's first steps (`rlvr.sandboxes.local.jobstart`): the `_jobstart` extension and
the Python steps leave a job in the same state (`sb` runs each test both ways), and a
step that fails in C ends the job, before any of its code, naming the step."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from rlvr.sandboxes import Limits, RunSpec, Status
from rlvr.sandboxes.jobs import CallJob
from rlvr.sandboxes.local import isolate, jobstart
from rlvr.sandboxes.local.control import JobLimits
from rlvr.sandboxes.local.sandbox import LocalSandbox
from tests.sandboxes.jobs import returned
from tests.services import require

STATE = """\
import resource
with open('/proc/net/dev') as f:
    net = sorted(line.split(':')[0].strip() for line in f.readlines()[2:])
with open('/proc/self/oom_score_adj') as f:
    oom = f.read().strip()
with open('/proc/self/cgroup') as f:
    cgroups = sorted({line.split(':', 2)[2].strip() for line in f})
limits = {name: resource.getrlimit(getattr(resource, name)) for name in LIMITS}
return {
    'cwd': os.getcwd(), 'pid': os.getpid(), 'sid': os.getsid(0), 'pgid': os.getpgid(0),
    'fds': sorted(int(fd) for fd in os.listdir('/proc/self/fd'))[:4], 'tmp': os.listdir('/tmp'),
    'net': net, 'oom': oom, 'cgroups': cgroups, 'limits': limits,
}"""
LIMITS = ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE", "RLIMIT_NPROC")


def test_the_job_joins_its_slot_with_its_limits_and_fds(sb: LocalSandbox) -> None:
    state = returned(sb, f"LIMITS = {LIMITS!r}\n" + STATE)
    limits, mib = Limits(), 1024 * 1024
    expected_limits = {
        "RLIMIT_CPU": limits.cpu_s,
        "RLIMIT_AS": limits.memory_mb * mib,
        "RLIMIT_FSIZE": limits.fsize_mb * mib,
        "RLIMIT_NOFILE": limits.nofile,
        "RLIMIT_CORE": 0,
        "RLIMIT_NPROC": limits.nproc,
    }
    assert state.pop("limits") == {name: (value, value) for name, value in expected_limits.items()}
    assert state == {
        "cwd": "/tmp",  # the slot's own /tmp, empty
        "tmp": [],
        "pid": 1,  # pid 1 of its own PID namespace, and so its own session
        "sid": 0,
        "pgid": 0,
        "fds": [0, 1, 2, 3],
        "net": ["lo"],  # the slot's network namespace
        "oom": "1000",  # the OOM killer's first choice
        "cgroups": ["/"],  # the root of a cgroup namespace at the slot's cgroups
    }


def test_both_ways_report_which_one_ran(sb: LocalSandbox) -> None:
    report = sb.isolation()
    assert report["job_start"] in ("native", "python")
    assert report["isolation"] == "full"


def test_the_python_way_is_chosen_on_request() -> None:
    assert jobstart.load_native(wanted=False) is None
    box = LocalSandbox(native_start=False)
    try:
        if os.geteuid() != 0:
            require(False, "root")
        assert box.isolation()["job_start"] == "python"
    finally:
        box.close()


def test_rlimits_are_pairs_of_every_limit() -> None:
    limits = JobLimits(cpu_s=7, memory_mb=300, nproc=64, fsize_mb=16, nofile=128, tmp_mb=32)
    pairs = jobstart.rlimits(limits)
    assert dict(zip(pairs[::2], pairs[1::2], strict=True)) == {
        resource.RLIMIT_CPU: 7,
        resource.RLIMIT_AS: 300 << 20,
        resource.RLIMIT_FSIZE: 16 << 20,
        resource.RLIMIT_NOFILE: 128,
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_NPROC: 64,
    }


# ------------------------------------------------------------ the extension on its own


@pytest.fixture(scope="module")
def native() -> jobstart.Native:
    loaded = jobstart.load_native()
    require(loaded is not None, "the _jobstart extension (a C compiler and Python headers)")
    assert loaded is not None
    return loaded


# A fresh interpreter starts one job with one broken step; the child must exit 70 before
# returning to Python, and say which step failed on its stderr.
FAILING_START = """\
import json, os, sys
from rlvr.sandboxes.local import _jobstart
step = sys.argv[1]
r, w = os.pipe()
null = os.open('/dev/null', os.O_RDWR)
pipe_r, pipe_w = os.pipe()
args = dict(procs=(), cgroup_ns=False, new_session=False, proc=-1, net=-1, mnt=-1)
if step == 'cgroup':
    args['procs'] = (os.open('/dev/null', os.O_RDONLY),)  # not writable
elif step == 'net':
    args['net'] = pipe_r  # not a namespace
elif step == 'mnt':
    args['mnt'] = pipe_r
elif step == 'net-closed':
    args['net'] = 999
elif step == 'cgroup-closed':
    args['procs'] = (998,)
started = _jobstart.start_jobs(0, [(
    args['procs'], args['cgroup_ns'], args['new_session'], args['proc'], b'1000',
    args['net'], args['mnt'], (), (null, null, w), (0, 1, 2, 3),
)])
if started == 0:
    os.write(w, b'RETURNED TO PYTHON')
    os._exit(0)
[(pid, pidfd)] = started
os.close(w)
_, status = os.waitpid(pid, 0)
print(json.dumps({'code': os.waitstatus_to_exitcode(status), 'stderr': os.read(r, 4096).decode(), 'pidfd': pidfd}))
"""


@pytest.mark.parametrize(
    ("step", "named"),
    [
        ("cgroup", "joining the slot's cgroup"),
        ("cgroup-closed", "joining the slot's cgroup"),
        ("net", "setns(net)"),
        ("net-closed", "setns(net)"),
        ("mnt", "setns(mnt)"),
    ],
)
def test_a_failed_step_ends_the_child_before_python(native: jobstart.Native, step: str, named: str) -> None:
    if os.geteuid() != 0:
        require(False, "root")
    out = subprocess.run(
        [sys.executable, "-c", FAILING_START, step], capture_output=True, text=True, timeout=30, check=True
    )
    report = json.loads(out.stdout)
    assert report["code"] == 70
    assert report["stderr"].startswith(f"sandbox job setup failed: {named}: "), report
    assert "RETURNED TO PYTHON" not in report["stderr"]
    assert report["pidfd"] >= 0  # the parent got a pidfd with the pid


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((0, tuple(range(40)), False, False, -1, b"1000", -1, -1, (), (0, 1, 2), (0,)), ValueError),
        ((0, (), False, False, -1, b"1000", -1, -1, tuple(range(34)), (0, 1, 2), (0,)), ValueError),
        ((0, (), False, False, -1, b"1000", -1, -1, (), (0, 1), (0,)), TypeError),
        ((0, (), False, False, -1, b"1000", -1, -1, (), (0, 1, 2, 3), (0,)), TypeError),
        ((0, ("x",), False, False, -1, b"1000", -1, -1, (), (0, 1, 2), (0,)), TypeError),
        ((0, (), False, False, -1, "1000", -1, -1, (), (0, 1, 2), (0,)), TypeError),
        ((0, 5, False, False, -1, b"1000", -1, -1, (), (0, 1, 2), (0,)), TypeError),
        ((0, (), False, False, -1, b"1000", -1, -1, (), (0, 1, 2)), TypeError),
    ],
)
def test_bad_arguments_raise_before_any_clone(native: jobstart.Native, args: tuple[Any, ...], error: type) -> None:
    good = ((), False, False, -1, b"1000", -1, -1, (), (0, 1, 2), (0,))
    pid, before = os.getpid(), _children()
    for jobs in ([args[1:]], [good, args[1:]], [good, good, args[1:], good]):  # wherever the bad one is
        with pytest.raises(error):
            native.start_jobs(args[0], jobs)
        assert os.getpid() == pid
        assert _children() == before  # not one clone, the good jobs' neither


def _children() -> set[int]:
    found: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as f:
            found.update(int(pid) for pid in f.read().split())
    return found


@pytest.mark.parametrize("jobs", [5, "x", [[(), False]], [None]])
def test_jobs_that_are_no_sequence_of_tuples_raise(native: jobstart.Native, jobs: Any) -> None:
    with pytest.raises(TypeError):
        native.start_jobs(0, jobs)


def test_more_jobs_than_a_call_takes_raise(native: jobstart.Native) -> None:
    job = ((), False, False, -1, b"1000", -1, -1, (), (0, 1, 2), (0,))
    with pytest.raises(ValueError):
        native.start_jobs(0, [job] * 5000)


# A fresh interpreter starts a batch of jobs in one call: each child finds its own index
# and its own fds (its channel as fd 3), and the parent one (pid, pidfd) per job.
BATCH_START = """import json, os, sys
from rlvr.sandboxes.local import _jobstart
n = int(sys.argv[1])
null = os.open('/dev/null', os.O_RDWR)
pipes = [os.pipe() for _ in range(n)]
jobs = [((), False, True, -1, b'1000', -1, -1, (), (w, null, null), (0, 1, 2, 3)) for _, w in pipes]
started = _jobstart.start_jobs(0, jobs)
if isinstance(started, int):
    os.write(3, json.dumps({'index': started, 'sid': os.getsid(0) == os.getpid()}).encode())
    os._exit(0)
for _, w in pipes:
    os.close(w)
out = [json.loads(os.read(r, 4096)) for r, _ in pipes]
codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid, _ in started]
print(json.dumps({'out': out, 'codes': codes, 'pidfds': [pidfd >= 0 for _, pidfd in started]}))
"""


@pytest.mark.parametrize("n", [1, 2, 7, 64])
def test_a_batch_starts_each_job_with_its_own_index_and_fds(native: jobstart.Native, n: int) -> None:
    if os.geteuid() != 0:
        require(False, "root")
    out = subprocess.run([sys.executable, "-c", BATCH_START, str(n)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["out"] == [{"index": i, "sid": True} for i in range(n)]
    assert report["codes"] == [0] * n
    assert all(report["pidfds"])


@pytest.mark.parametrize("native_start", [True, False])
@pytest.mark.parametrize("n", [1, 3])
def test_a_clone_that_fails_is_an_oserror_per_job(native_start: bool, n: int) -> None:
    """CLONE_THREAD without CLONE_SIGHAND and CLONE_VM: EINVAL, with or without a pidfd."""
    native = jobstart.load_native(wanted=native_start)
    require(native is not None or not native_start, "the _jobstart extension")
    caps = isolate.Capabilities()
    slot = isolate.Slot(caps, 0, isolate.UID_BASE, None)
    jobs = [(slot, JobLimits(cpu_s=1, memory_mb=64, nproc=4, fsize_mb=1, nofile=16, tmp_mb=1), [0, 1, 2])] * n
    clone_thread = 0x00010000
    started = jobstart.start(native, clone_thread, caps, jobs, (0, 1, 2, 3))
    assert isinstance(started, list) and len(started) == n
    assert all(isinstance(outcome, OSError) and outcome.errno == 22 for outcome in started)


def test_the_python_steps_match_the_c_steps_in_order() -> None:
    """Both ways take the same steps in the same order: the C source lists them as
    `enter_job` and `place_fds` do (a change to one must reach the other)."""
    source = isolate.__file__.rsplit("/", 1)[0] + "/_jobstart.c"
    with open(source) as f:
        c = f.read()
    order = [
        "cgroup_procs",
        "CLONE_NEWCGROUP",
        "setsid",
        "PR_SET_PDEATHSIG",
        "oom_score_adj",
        "CLONE_NEWNET",
        "CLONE_NEWNS",
        'chdir("/tmp")',
        "setrlimit",
        "dup2",
        "SYS_close_range",
    ]
    body = c[c.index("static void set_up_child") :]
    positions = [body.index(step) for step in order]
    assert positions == sorted(positions)
    py = textwrap.dedent(open(jobstart.__file__).read())
    py_body = py[py.index("def enter_job") :]
    py_order = ["join()", "CLONE_NEWCGROUP", "setsid", "PR_SET_PDEATHSIG", "OOM_JOB", "CLONE_NEWNET", "CLONE_NEWNS",
                'chdir("/tmp")', "setrlimit", "dup2", "close_fds_except"]  # fmt: skip
    py_positions = [py_body.index(step) for step in py_order]
    assert py_positions == sorted(py_positions)


def test_a_job_runs_the_same_both_ways() -> None:
    if os.geteuid() != 0:
        require(False, "root")
    boxes = [LocalSandbox(native_start=True), LocalSandbox(native_start=False)]
    program = "import os, sys\ndef f(x):\n    print('out', x)\n    print('err', x, file=sys.stderr)\n    return x * 2\n"
    try:
        results = [
            box.run(RunSpec(CallJob(code=program, fn_name="f", inputs=[[1], [2]], timeout_s=2))) for box in boxes
        ]
    finally:
        for box in boxes:
            box.close()
    for result in results:
        assert result.status == Status.OK
        assert [r.get("v") for r in result.records[1:]] == [2, 4]
        assert result.stdout == "out 1\nout 2\n" and result.stderr == "err 1\nerr 2\n"


# `drop` in a fresh interpreter (as root): what it leaves, or the step that failed.
DROP = """\
import json, os, sys
from rlvr.sandboxes.local import _jobstart, linux, seccomp
uid, dumpable, with_filter, twice = (int(a) for a in sys.argv[1:])
linux.prctl(linux.PR_SET_NO_NEW_PRIVS, 1)
filter_ = seccomp.filter_address('job') if with_filter else 0
report = {}
try:
    _jobstart.drop(uid, bool(dumpable), filter_)
    if twice:
        _jobstart.drop(uid + 1, True, 0)
except OSError as exc:
    report['error'] = str(exc)
status = dict(line.split(':', 1) for line in open('/proc/self/status').read().splitlines())
report.update(
    resuid=os.getresuid(), resgid=os.getresgid(), groups=os.getgroups(),
    dumpable=linux.prctl(3), seccomp=status['Seccomp'].strip(),
)
try:  # allowed to any process, but not by the jobs' filter
    linux.unshare(linux.CLONE_NEWUSER)
    report['userns'] = 'allowed'
except OSError as exc:
    report['userns'] = exc.errno
print(json.dumps(report))
"""


def dropped(*args: int) -> dict[str, Any]:
    if os.geteuid() != 0:
        require(False, "root")
    out = subprocess.run(
        [sys.executable, "-c", DROP, *map(str, args)], capture_output=True, text=True, timeout=30, check=True
    )
    report: dict[str, Any] = json.loads(out.stdout)
    return report


@pytest.mark.parametrize("uid", [isolate.UID_BASE + 7, isolate.UID_BASE + 511, 2**31 + 5])
@pytest.mark.parametrize("dumpable", [0, 1])
def test_drop_becomes_the_uid_for_good(native: jobstart.Native, uid: int, dumpable: int) -> None:
    report = dropped(uid, dumpable, 0, 0)
    assert "error" not in report
    assert report["resuid"] == [uid] * 3 and report["resgid"] == [uid] * 3
    assert report["groups"] == []
    if not dumpable:  # else the kernel's choice for a process that changed uid
        assert report["dumpable"] == 0
    assert report["seccomp"] == "0" and report["userns"] == "allowed"


def test_drop_installs_the_jobs_filter(native: jobstart.Native) -> None:
    report = dropped(isolate.UID_BASE + 3, 1, 1, 0)
    assert "error" not in report
    assert report["seccomp"] == "2"  # filter mode
    assert report["userns"] == 1  # EPERM: the jobs' filter refuses new namespaces


def test_drop_names_the_step_that_failed(native: jobstart.Native) -> None:
    # Once dropped, no uid can be taken again: the second drop fails at its first step.
    report = dropped(isolate.UID_BASE + 9, 1, 0, 1)
    assert report["error"].startswith("setgroups: "), report
    assert report["resuid"] == [isolate.UID_BASE + 9] * 3


def test_the_configs_limit_in_flight_is_the_zygotes_slots() -> None:
    from rlvr.sandboxes.config import MAX_JOBS_IN_FLIGHT_LIMIT
    from rlvr.sandboxes.local.isolate import MAX_SLOTS

    assert MAX_JOBS_IN_FLIGHT_LIMIT == MAX_SLOTS
