"""JavaScript call jobs get each test's input only once that test's clock has started
(issue 30, class 3), on both backends: one node process runs every test, and a worker
thread of it that found a slow test's input early could work on it while the fast
tests before it idle just under their limit, each record coming in time.

Each hostile program here starts a worker at load that hunts for the slow test's input
by one route (the job file the harness reads, the other processes' `/proc` files, the
pipe the inputs come on, read ahead) and, once it has it, is busy on it for longer than
a test's limit; each fast test idles just under the limit meanwhile. Fed every input at
once, the slow test would find its answer ready; fed in lockstep, the hunt finds the
input only when its test starts, and the test times out. Asserted: the slow test is not
passed, and nothing is masked. No assertion on the machine's speed: the slow work is
longer than the limit on any machine, and the fast tests' idling longer than it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from rlvr.sandboxes import RunSpec, Sandbox, Status
from rlvr.sandboxes.base import Limits, RunResult
from rlvr.sandboxes.docker.sandbox import DockerSandbox
from rlvr.sandboxes.jobs import NativeCallJob
from rlvr.sandboxes.runner import core
from tests.sandboxes.backends import BACKENDS, open_backend
from tests.services import require

LIMIT_S = 1.0
# The slow test's work, in wall time (what the runner's clock counts): past its limit,
# and within what the fast tests' idling (`FAST_TESTS` x `IDLE_S`) would give a worker
# that had its input from the start.
SLOW_S = LIMIT_S + 0.6
IDLE_S = 0.75 * LIMIT_S
FAST_TESTS = 3
MARK = 987654321
WALL = Limits(wall_s=20, cpu_s=40, memory_mb=4096)

# Placeholders, not `str.format`: the program is all braces.
HUNTER = r"""
const { Worker } = require('worker_threads');
// Made at run time: no needle in the program's own text.
const MARK = Number('__HEAD__') * 1000 + __TAIL__;
const shared = new Int32Array(new SharedArrayBuffer(8));
const WORKER = String.raw`
const { workerData } = require('worker_threads');
const fs = require('fs');
const MARK = workerData.mark;
const shared = workerData.shared;
const packed = Buffer.alloc(4);
packed.writeInt32LE(MARK);
const NEEDLES = [Buffer.from(String(MARK)), packed];
const has = (buf) => NEEDLES.some((n) => buf.indexOf(n) >= 0);
const nap = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function readSome(path, flags) {
  let fd;
  try {
    fd = fs.openSync(path, flags === undefined ? fs.constants.O_RDONLY | fs.constants.O_NONBLOCK : flags);
  } catch (e) {
    return Buffer.alloc(0);
  }
  try {
    const buf = Buffer.alloc(1 << 20);
    const n = fs.readSync(fd, buf, 0, buf.length, null);
    return buf.subarray(0, n);
  } catch (e) {
    return Buffer.alloc(0);
  } finally {
    fs.closeSync(fd);
  }
}

function memory(pid) {
  let maps, fd;
  try {
    maps = fs.readFileSync('/proc/' + pid + '/maps', 'utf8');
    fd = fs.openSync('/proc/' + pid + '/mem', 'r');
  } catch (e) {
    return false;
  }
  try {
    for (const line of maps.split('\n')) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) r/.exec(line);
      if (!m) continue;
      const start = parseInt(m[1], 16), end = parseInt(m[2], 16);
      for (let at = start; at < end; at += 1 << 22) {
        const buf = Buffer.alloc(Math.min(1 << 22, end - at));
        let n = 0;
        try { n = fs.readSync(fd, buf, 0, buf.length, at); } catch (e) { break; }
        if (has(buf.subarray(0, n))) return true;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return false;
}

function others() {
  const pids = new Set([String(process.ppid)]);
  try {
    for (const name of fs.readdirSync('/proc')) if (/^[0-9]+$/.test(name)) pids.add(name);
  } catch (e) {}
  // This process, as the /proc mounted here numbers it (which may not be node's own
  // namespace): its own memory holds the needles.
  pids.delete(String(process.pid));
  try { pids.delete(fs.readlinkSync('/proc/self')); } catch (e) {}
  return [...pids];
}

function fds(pid) {
  try {
    return fs.readdirSync('/proc/' + pid + '/fd').map((fd) => '/proc/' + pid + '/fd/' + fd);
  } catch (e) {
    return [];
  }
}

const ROUTES = {
  job_file: () => ['/tmp/job.json', '/tmp/harness.js'].some((p) => has(readSome(p))),
  proc_files: () => others().some((pid) => ['environ', 'cmdline'].some((f) => has(readSome('/proc/' + pid + '/' + f)))
    || fds(pid).some((p) => has(readSome(p)))),
  proc_memory: () => others().some(memory),
  // The pipe the inputs come on, and stdin, read ahead; what is read is written back
  // (through the pipe reopened for writing), so that the harness still gets it.
  read_ahead: () => [0, 4].some((fd) => {
    const data = readSome('/proc/self/fd/' + fd);
    if (data.length) {
      try {
        const back = fs.openSync('/proc/self/fd/' + fd, 'w');
        fs.writeSync(back, data);
        fs.closeSync(back);
      } catch (e) {}
    }
    return has(data);
  }),
};

while (!ROUTES['__ROUTE__']()) nap(2);
const end = Date.now() + __SLOW_MS__;
while (Date.now() < end) {}
Atomics.store(shared, 0, 1);
Atomics.notify(shared, 0);
`;
new Worker(WORKER, { eval: true, workerData: { mark: MARK, shared } }).unref();

function f(n) {
  if (n !== MARK) {
    Atomics.wait(shared, 1, 0, __IDLE_MS__);
    return n * 2;
  }
  while (Atomics.load(shared, 0) === 0) Atomics.wait(shared, 0, 0, 50);
  return n * 2;
}
"""

ROUTES = ("job_file", "proc_files", "proc_memory", "read_ahead")
# Routes that take data off the pipe: what is written back may come after the runner
# closed the pipe, and the harness, at its end, then leaves the slow test unrun.
STEALING = ("read_ahead",)


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    require(shutil.which("node") is not None, "node")
    yield from open_backend(request.param)


def hunter(route: str) -> str:
    fields = {
        "__HEAD__": str(MARK // 1000),
        "__TAIL__": str(MARK % 1000),
        "__ROUTE__": route,
        "__SLOW_MS__": str(int(SLOW_S * 1000)),
        "__IDLE_MS__": str(int(IDLE_S * 1000)),
    }
    code = HUNTER
    for key, value in fields.items():
        code = code.replace(key, value)
    return code


def call_job(code: str, backend: Sandbox) -> NativeCallJob:
    # The local backend runs the host's node; the Docker image fills in its own.
    node = shutil.which("node") if not isinstance(backend, DockerSandbox) else None
    return NativeCallJob(
        language="javascript",
        code=code,
        fn_name="f",
        inputs=[[n] for n in range(1, FAST_TESTS + 1)] + [[MARK]],
        timeout_s=LIMIT_S,
        max_output=1 << 20,
        memory_mb=512,
        compile_timeout_s=30,
        node=node,
    )


def unmasked(result: RunResult) -> None:
    assert result.infra_error is None, result
    assert result.status in (Status.OK, Status.TIMEOUT), result
    assert result.records[:1] == [{"load": "ok"}], result.records


def slow_test(result: RunResult) -> list[dict[str, object]]:
    return [r for r in result.records if r.get("i") == FAST_TESTS]


def test_the_hunt_needs_no_needle_in_the_program() -> None:
    # What makes the hunts meaningful: the program's own text does not hold the input.
    for route in ROUTES:
        assert str(MARK) not in hunter(route)


@pytest.mark.parametrize("route", ROUTES)
def test_a_worker_gets_no_later_test_input_early(backend: Sandbox, route: str) -> None:
    result = backend.run(RunSpec(call_job(hunter(route), backend), WALL))
    unmasked(result)
    slow = slow_test(result)
    if route in STEALING:
        assert all(r.get("s") != "ok" for r in slow), result.records
        return
    assert slow and slow[0]["s"] == "timeout", result.records


def test_the_same_work_in_line_times_out(backend: Sandbox) -> None:
    # The hunt's verdict without a worker: what the hostile programs must not beat.
    code = f"function f(n) {{\n  const end = Date.now() + (n === {MARK} ? {int(SLOW_S * 1000)} : 0);\n"
    code += "  while (Date.now() < end) {}\n  return n * 2;\n}\n"
    result = backend.run(RunSpec(call_job(code, backend), WALL))
    unmasked(result)
    assert [r["s"] for r in result.records[1:]] == ["ok"] * FAST_TESTS + ["timeout"], result.records


def test_honest_programs_pass_every_test(backend: Sandbox) -> None:
    # Reading stdin at load gets nothing, and waits for nothing: the tests' inputs are
    # not on it.
    code = "const fs = require('fs');\nif (fs.readFileSync(0).length !== 0) throw new Error('stdin');\n"
    code += "function f(n) { return n * 2; }\n"
    result = backend.run(RunSpec(call_job(code, backend), WALL))
    unmasked(result)
    assert result.status == Status.OK, result
    assert [r["s"] for r in result.records[1:]] == ["ok"] * (FAST_TESTS + 1), result.records
    assert [r.get("j") for r in result.records[1:]] == [n * 2 for n in (*range(1, FAST_TESTS + 1), MARK)]


def test_a_program_that_takes_the_inputs_pipe_fails_alone(backend: Sandbox) -> None:
    # The pipe the inputs come on, read dry and closed: the harness gets no further
    # input, which costs the program its tests, never the item.
    code = f"const fs = require('fs');\nfunction f(n) {{\n  fs.closeSync({core.FEED_FD});\n  return n * 2;\n}}\n"
    result = backend.run(RunSpec(call_job(code, backend), WALL))
    unmasked(result)
    assert not [r for r in result.records if r.get("i") == FAST_TESTS and r.get("s") == "ok"], result.records
