"""C++ and JavaScript jobs: compile (or syntax-check) once, then run once per test.

``native_stdio`` records each run's stdout; ``native_call`` (JavaScript) runs one node
process that calls the function on every input and writes each value, as JSON, on its
fd 3. Either way the records carry only what the program produced.

Each test of a ``native_call`` job has its own time limit, as each run of a
``native_stdio`` one does, though one node process runs them all: the runner relays each
record as it comes, and stops node when the record of the test that is due comes later
than the limit after the one before (`_Relay`). A clock kept outside node is sound only
if the program cannot work on a test before that test's clock starts (a worker thread on
the slow input while the fast tests idle): node gets each test's input on its stdin only
then (on a pipe, `core.FEED_FD`), and the runner, which holds them all, is closed to it (`core.undumpable`).
"""

from __future__ import annotations

import json
import os
import re
import resource
import time
from collections.abc import Callable

from rlvr.sandboxes.runner import core, pch
from rlvr.sandboxes.runner.inputs import job_inputs

MODES = ("native_stdio", "native_call")
# The `code` verifier's C++: what judges compile today.
CODE_STD = "c++20"
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
# The job environment's node packages (`rlvr.sandboxes.jobenv`), as the sandbox set it.
ENV |= {name: os.environ[name] for name in ("NODE_PATH",) if name in os.environ}
MAX_COMPILE_OUTPUT = 64 * 1024
# What runs each test: argv and the address-space cap in MiB (None: no cap).
Program = tuple[list[str], int | None]

JS_CALL_HARNESS = r"""
'use strict';
const fs = require('fs');
const vm = require('vm');
// Only what is no test's input: each test's arguments come on fd 0, one JSON line,
// on fd 4 (`core.FEED_FD`), once that test's clock has started (`_Relay`).
const job = JSON.parse(fs.readFileSync('/tmp/job.json', 'utf8'));
// Telemetry for the `sandbox_denied` signal (`a` in the records): a host path the
// program opens, reads or lists through `fs`, however it built the path. The calls go
// through as they were; the sandbox's walls decide what they get.
const HOST = /^\/(?:etc|root|home|proc|sys|var|run|boot|srv|mnt|media|dev)(?:\/|$)/;
const OWN = /^\/(?:proc\/self|dev\/(?:null|zero|u?random|std(?:in|out|err)|fd))(?:\/|$)/;
const resolvePath = require('path').resolve;
let reached = false;
for (const name of ['readFileSync', 'readdirSync', 'openSync', 'existsSync', 'statSync', 'lstatSync', 'accessSync',
  'readlinkSync', 'opendirSync', 'readFile', 'readdir', 'open', 'stat', 'lstat', 'access', 'createReadStream']) {
  const original = fs[name];
  fs[name] = function (path, ...rest) {
    try {
      const full = resolvePath(path instanceof URL ? path.pathname : String(path));
      if (full === '/' || (HOST.test(full) && !OWN.test(full))) reached = true;
    } catch (e) {}
    return original.call(this, path, ...rest);
  };
}
// What a CommonJS file has at its top level, so that a program may export its function
// or require a module; it is not the main module (`require.main === module` is false),
// as for a judge's harness that requires it.
const programModule = { exports: {}, id: '/tmp/main.js', filename: '/tmp/main.js' };
Object.assign(globalThis, {
  require, module: programModule, exports: programModule.exports, __filename: '/tmp/main.js', __dirname: '/tmp',
});
// What a returned value holds beyond plain data: CONVERTING where an object in it, or a
// class it is of, defines its own conversion (`valueOf`, `toJSON`, `toString`,
// `Symbol.toPrimitive`) or a getter, which would decide what the test compares (a
// failed test); CLASSED where it is of another class than a plain object or array
// (telemetry for the `custom_equality` signal). Bound here, before the program runs and
// may replace what it uses.
const protoOf = Object.getPrototypeOf, ownKeys = Reflect.ownKeys, describe = Object.getOwnPropertyDescriptor;
const PLAIN = new Set([Object.prototype, Array.prototype, null]);
const CONVERTS = new Set(['valueOf', 'toJSON', 'toString', Symbol.toPrimitive]);
const CONVERTING = 'an object that converts itself', CLASSED = 'an object of a class';
function converts(object) {
  for (const key of ownKeys(object)) {
    const d = describe(object, key);
    if (CONVERTS.has(key) || d.get || d.set) return true;
  }
  return false;
}
function custom(value) {
  const pending = [value];
  let found = null;
  for (let budget = 1000; pending.length && budget > 0; budget--) {
    const v = pending.pop();
    if (v === null || typeof v !== 'object') continue;
    if (converts(v)) return CONVERTING;
    for (let p = protoOf(v); !PLAIN.has(p); p = protoOf(p)) {
      if (converts(p)) return CONVERTING;
      found = CLASSED;
    }
    for (const key of ownKeys(v)) pending.push(describe(v, key).value);
  }
  return found;
}
function named(value) {
  try { return custom(value); } catch (e) { return CONVERTING; }
}
function find(name) {
  try {
    const f = vm.runInThisContext(name);
    if (typeof f === 'function') return f;
  } catch (e) {}
  const exported = programModule.exports;
  if (typeof exported === 'function') return exported;
  if (exported && typeof exported[name] === 'function') return exported[name];
  throw new ReferenceError(name + ' is not defined');
}
// The next line of fd 4 (null at its end), read synchronously: the tests run in
// order, each on the input the runner has released. Where the program made the fd
// non-blocking, a read that would block waits a millisecond.
const chunk = Buffer.alloc(1 << 16);
const nap = new Int32Array(new SharedArrayBuffer(4));
let held = [];
function nextLine() {
  for (;;) {
    const last = held.length ? held[held.length - 1] : null;
    const at = last ? last.indexOf(10) : -1;
    if (at >= 0) {
      const all = Buffer.concat(held);
      const end = all.length - last.length + at;
      held = end + 1 < all.length ? [all.subarray(end + 1)] : [];
      return all.subarray(0, end).toString('utf8');
    }
    let n;
    try {
      n = fs.readSync(4, chunk, 0, chunk.length, null);
    } catch (e) {
      if (e.code === 'EAGAIN') { Atomics.wait(nap, 0, 0, 1); continue; }
      if (e.code === 'EINTR') continue;
      return null;
    }
    if (n === 0) return null;
    held.push(Buffer.from(chunk.subarray(0, n)));
  }
}
let fn;
try {
  vm.runInThisContext(fs.readFileSync('/tmp/main.js', 'utf8'), { filename: 'main.js' });
  fn = find(job.fn_name);
} catch (e) {
  fs.writeSync(3, JSON.stringify({ load: 'error', e: String(e && e.stack || e).slice(0, 2000) }) + '\n');
  process.exit(0);
}
fs.writeSync(3, 'L\n');
for (let i = 0; i < job.tests; i++) {
  const line = nextLine();
  if (line === null) break;
  let rec;
  try {
    const v = fn(...JSON.parse(line));
    const c = named(v);
    if (c === CONVERTING) {
      rec = '{"i":' + i + ',"s":"error","e":"TypeError: returned ' + c + '","c":"' + c + '"}';
    } else {
      const s = JSON.stringify(v === undefined ? null : v);
      rec = '{"i":' + i + ',"s":"ok","v":' + s + (c ? ',"c":"' + c + '"' : '') + '}';
    }
  } catch (e) {
    rec = JSON.stringify({ i: i, s: 'error', e: String(e).slice(0, 2000) });
  }
  if (reached) rec = rec.slice(0, -1) + ',"a":["sandbox_denied"]}';
  fs.writeSync(3, rec + '\n');
}
"""


def _exec(argv: list[str], memory_mb: int | None, merge_stderr: bool = False) -> Callable[[], None]:
    """A `run_child` target that execs `argv`, under an address-space cap if given,
    which then bounds its stack alone."""

    def target() -> None:
        if memory_mb is not None:
            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            _unlimited_stack()
        if merge_stderr:
            os.dup2(1, 2)
        os.execve(argv[0], argv, ENV)

    return target


def _unlimited_stack() -> None:
    """Let the main thread's stack grow as far as the address-space cap allows, as judges
    let it (256 MB on Codeforces, the memory limit on most others), where the default 8
    MB fails a C++ solution that recurses deep (a DFS over 10**6 nodes). Unlimited, not
    the cap itself: glibc sizes each new thread's stack by this limit (8 MB when it is
    unlimited), and a thread whose stack took the whole cap could not start."""
    _, hard = resource.getrlimit(resource.RLIMIT_STACK)
    resource.setrlimit(resource.RLIMIT_STACK, (hard, hard))


def _node_argv(job: core.Frame, script: str) -> list[str]:
    heap = max(64, int(job["memory_mb"]) // 2)
    return [job["node"], f"--max-old-space-size={heap}", "--stack-size=8000", script]


def run(job: core.Frame, priv: core.Privileges, channel: core.Channel) -> int:
    priv.drop_untrusted()
    # A stdio job's inputs follow its frame; read before any of the program runs.
    inputs = job_inputs(job) if job["mode"] == "native_stdio" else None
    # Closed to every process of the job, the compiler's included: this process's
    # memory holds the inputs (`Inputs`, or a call job's frame).
    core.undumpable()
    channel.accept()
    prepare = _PREPARE.get(job["language"])
    if prepare is None:
        channel.write({"load": "error", "e": f"unsupported language {job['language']!r}"})
        return 0
    program = prepare(job, channel)
    if program is None:
        return 0
    channel.write({"load": "ok"})
    cap = int(job["max_output"])
    if inputs is None:
        return _js_call(job, channel, cap)
    argv, memory_mb = program
    for index in range(len(inputs)):
        result = core.run_child(_exec(argv, memory_mb), inputs[index], float(job["timeout_s"]), cap)
        # Nothing of this test's run works on while the next one runs.
        core.end_strays()
        channel.write({"i": index, **result})
        if result["s"] != "ok" and job.get("stop_on_failure"):
            break
    return 0


def _check(job: core.Frame, argv: list[str]) -> core.Record:
    """Compile or syntax-check, merging stderr into the output the record shows."""
    return core.run_child(_exec(argv, None, True), b"", float(job["compile_timeout_s"]), MAX_COMPILE_OUTPUT)


def _prepare_cpp(job: core.Frame, channel: core.Channel) -> Program | None:
    with open("/tmp/main.cpp", "w") as f:
        f.write(job["code"])
    step = _check(job, pch.compile_argv(job["gxx"], CODE_STD, "/tmp/main.cpp", "/tmp/main"))
    if step["s"] != "ok":
        kind = "timeout" if step["s"] == "timeout" else "error"
        channel.write({"load": kind, "e": "compilation failed:\n" + step["out"][-4000:]})
        return None
    return ["/tmp/main"], int(job["memory_mb"])


# ES module syntax, which models write for node and a CommonJS file (what node runs a
# `.js` as: node 18 has no module detection, and the call harness runs the program as a
# script) cannot hold. Exports: `export` before a declaration goes, the declaration
# stays; an `export { f }` or `export default f;` line goes. Static imports become the
# `require` calls node's own interop gives them (a default or namespace import is the
# module's exports). Anchored at line starts, linear: each alternative starts with a
# different token, and a brace list is bounded.
_EXPORT_DECLARATION = re.compile(
    r"^export[ \t]+(?:default[ \t]+)?(?=(?:async[ \t]+)?function\b|class\b|const\b|let\b|var\b)", re.MULTILINE
)
_EXPORT_LINE = re.compile(r"^export[ \t]*(?:\{[^}\n]*\}|default[ \t]+[A-Za-z_$][\w$]*)[ \t]*;?[ \t]*$", re.MULTILINE)
MAX_IMPORT_LIST_CHARS = 2000
_NAME = r"[A-Za-z_$][\w$]*"
_SOURCE = r"(?P<source>'[^'\n]*'|\"[^\"\n]*\")"
_IMPORT = re.compile(
    rf"^import(?:[ \t]+|(?=[{{*]))(?:(?P<default>{_NAME})[ \t]*(?:,[ \t]*)?)?"
    rf"(?:\*[ \t]*as[ \t]+(?P<namespace>{_NAME})[ \t]*|(?P<names>\{{[^}}]{{0,{MAX_IMPORT_LIST_CHARS}}}\}})[ \t]*)?"
    rf"from[ \t]*{_SOURCE}[ \t]*;?",
    re.MULTILINE,
)
_BARE_IMPORT = re.compile(rf"^import[ \t]*{_SOURCE}[ \t]*;?", re.MULTILINE)
_IMPORT_AS = re.compile(rf"({_NAME})[ \t]+as[ \t]+({_NAME})")


def _required(match: re.Match[str]) -> str:
    source, default, namespace, names = match.group("source", "default", "namespace", "names")
    first = default or namespace
    bindings = [f"{first} = require({source})"] if first else []
    if first and namespace and default:
        bindings.append(f"{namespace} = {first}")
    if names:
        renamed = _IMPORT_AS.sub(r"\1: \2", names)
        bindings.append(f"{renamed} = {first or f'require({source})'}")
    return f"const {', '.join(bindings)};" if bindings else f"require({source});"


def without_exports(code: str) -> str:
    """`code` with its ES module syntax made CommonJS (see above)."""
    if "export" in code:
        code = _EXPORT_LINE.sub("", _EXPORT_DECLARATION.sub("", code))
    if "import" in code:
        code = _BARE_IMPORT.sub(lambda m: f"require({m['source']});", _IMPORT.sub(_required, code))
    return code


def _prepare_javascript(job: core.Frame, channel: core.Channel) -> Program | None:
    with open("/tmp/main.js", "w") as f:
        f.write(without_exports(job["code"]))
    step = _check(job, [job["node"], "--check", "/tmp/main.js"])
    if step["s"] != "ok":
        channel.write({"load": "error", "e": "syntax check failed:\n" + step["out"][-4000:]})
        return None
    # V8 reserves gigabytes of address space up front; its heap flag bounds memory.
    return _node_argv(job, "/tmp/main.js"), None


_PREPARE: dict[str, Callable[[core.Frame, core.Channel], Program | None]] = {
    "cpp": _prepare_cpp,
    "javascript": _prepare_javascript,
}


def _js_call(job: core.Frame, channel: core.Channel, cap: int) -> int:
    with open("/tmp/harness.js", "w") as f:
        f.write(JS_CALL_HARNESS)
    # No test's input: node gets each on `core.FEED_FD` as that test's clock starts.
    with open("/tmp/job.json", "w") as f:
        json.dump({"fn_name": job.get("fn_name"), "tests": len(job["inputs"])}, f)
    lines = [(json.dumps(args) + "\n").encode() for args in job["inputs"]]
    relay = _Relay(channel, lines, float(job["timeout_s"]))
    node = _exec(_node_argv(job, "/tmp/harness.js"), None)
    result = core.run_child(node, b"", relay.left(), cap, extra_fd3=True, on_fd3=relay.feed, feed=relay.release)
    if result["s"] == "timeout" and not relay.loaded:
        channel.write({"load": "timeout", "e": "loading the program timed out"})
    elif result["s"] == "timeout" and relay.due < relay.tests:
        channel.write({"i": relay.due, "s": "timeout"})
    elif relay.relayed < relay.tests and result["s"] != "ok":
        channel.write({"run": result["s"], "out": result["out"][-2000:]})
    return 0


# The harness's line on fd 3 once the program has loaded: the first test's clock starts.
LOADED = b"L"
# Node's own start, beyond the test limit the program's load has, as Python's has.
NODE_START_S = 1.0


class _Relay:
    """Node's records, relayed to the channel as each line comes, and by when the next
    must come: the load within its limit (plus node's start), then each test's record
    within its limit of the one before. Only the record of the test that is due moves
    the clock: a line the program writes itself (fd 3 is open to it) buys no time, and
    one that claims a test is a duplicate of the harness's record, which fails it."""

    def __init__(self, channel: core.Channel, inputs: list[bytes], limit_s: float) -> None:
        self.channel, self.inputs, self.limit_s = channel, inputs, limit_s
        self.tests = len(inputs)
        self.sent = 0  # the inputs node has been given
        self.deadline = time.monotonic() + NODE_START_S + limit_s
        self.pending = b""
        self.loaded = False
        self.due = 0  # the test whose record is awaited
        self.relayed = 0

    def left(self) -> float:
        """Seconds until the deadline."""
        return self.deadline - time.monotonic()

    def release(self) -> tuple[bytes, bool]:
        """The inputs of the tests whose clocks have started, not yet given to node (the
        first once the program has loaded, each next one once the record of the test
        before it has come), and whether node gets no more."""
        started = min(self.tests, self.due + 1) if self.loaded else 0
        out = b"".join(self.inputs[self.sent : started])
        self.sent = max(self.sent, started)
        return out, self.sent >= self.tests

    def feed(self, chunk: bytes) -> float:
        *lines, self.pending = (self.pending + chunk).split(b"\n")
        for line in lines:
            self._line(line)
        return self.deadline

    def _line(self, line: bytes) -> None:
        if line == LOADED and not self.loaded:
            self.loaded = True
            self.deadline = time.monotonic() + self.limit_s
            return
        if self.relayed > self.tests:
            return  # more than the harness writes: the rest is the program's, and costs the grader
        # Relayed verbatim; the grader validates each record (the program could have
        # written here too, which only ever costs it the test).
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            return
        if type(record) is not dict:
            return
        if record.get("s") == "ok" and "v" in record:
            record["j"] = record.pop("v")
        index = record.get("i")
        due = self.loaded and type(index) is int and index == self.due
        if due and time.monotonic() > self.deadline:
            # Read past its deadline: this process was held up while node ran on.
            record = {"i": index, "s": "timeout"}
        try:
            self.channel.write(record)
        except (ValueError, TypeError):
            return  # NaN and the like, which a record may not carry
        self.relayed += 1
        if due:
            self.due += 1
            self.deadline = time.monotonic() + self.limit_s
