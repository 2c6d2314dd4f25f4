"""The program a toolchain job runs inside the sandbox: write files, run tool steps
(a compiler, a proof checker), report each step's status and output as one JSON line.

Its source, not this module, is what runs: `steps` sends it as the program of a
`stdio` job and the job description as its stdin, so the toolchain runs with exactly
the isolation and limits of any sandboxed program. Standard library only, self-contained.

The tools are fed untrusted input but run none of it (no step executes what it built),
so what they print can only be their own diagnostics. Each step writes its output to a
file under a per-step size cap (RLIMIT_FSIZE: past it the kernel stops the tool with
SIGXFSZ) and runs in a process group of its own, killed whole at the step's timeout.

Two step options serve the `compile` verifier's rule on in-source diagnostic control
(its module notes): `force_warn` runs rustc with every warn-by-default lint forced to
warn (`--force-warn`, which no `allow` attribute overrides), the list read from the
same rustc's `-W help`; `scan` reads a C/C++ file preprocessed by the step (`-E`:
splices joined, comments gone, digraphs, trigraphs, macros and `_Pragma` already
turned into `#pragma` lines by the compiler itself) for the lines that switch
diagnostics off, and the step's output for the marks the compiler printed on others.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from typing import Any

OUTPUT_FILE = "/tmp/.rlvr-step-output"
# A scan lists this many of the lines it found (each cut to MAX_FOUND_CHARS); it counts all.
MAX_FOUND = 20
MAX_FOUND_CHARS = 200
# `rustc -W help`: a few tens of KiB, printed at once.
LINT_HELP_TIMEOUT_S = 10.0
MAX_LINT_HELP_BYTES = 1024 * 1024
# Not forced: `warnings` is a group --force-warn refuses; `unknown-lints` would warn of
# every unstable lint -W help lists (and is allowed, so none of them warns).
NOT_FORCED_LINTS = frozenset({"warnings", "unknown-lints"})
# `#pragma <namespace> diagnostic <kind>` kinds that switch nothing off.
HARMLESS_DIAGNOSTIC_KINDS = frozenset({"push", "pop", "error"})
# Headers a preprocessed file may mark as system headers (flag 3): the toolchains'.
SYSTEM_PREFIX = "/usr/"


def _limit_file_size(max_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))


def _prepare(step: dict[str, Any]) -> None:
    for folder in step.get("clear", []):
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder, exist_ok=True)
    for path, text in step.get("files", {}).items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def _status(code: int) -> str:
    if code == 0:
        return "ok"
    if code == -signal.SIGXFSZ:
        return "output_limit"
    return "killed" if code < 0 else "error"


def _tail(path: str, keep: int) -> str:
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - keep))
        data = f.read(keep)
    text = data.decode("utf-8", "replace")
    return text if size <= keep else "[...]\n" + text


def _failure(step: dict[str, Any], status: str, message: str) -> dict[str, Any]:
    return {"name": step["name"], "status": status, "code": None, "out": message}


def run_step(step: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """Run one step. A tool that cannot be found or started is `unavailable` (the
    host's fault); files that cannot be written are an `error` (what earlier steps
    left in /tmp, from the input)."""
    try:
        argv = _resolve(step["argv"], env)
    except OSError as exc:
        return _failure(step, "unavailable", f"cannot run the tool: {exc}")
    try:
        _prepare(step)
        out = open(OUTPUT_FILE, "w")
    except OSError as exc:
        return _failure(step, "error", f"cannot write the step's files: {exc}")
    with out:
        try:
            if step.get("force_warn"):
                argv = [argv[0], *_force_warn_lints(argv[0], env), *argv[1:]]
            proc = _start(argv, step, env, out)
        except (OSError, subprocess.SubprocessError) as exc:
            return _failure(step, "unavailable", f"cannot run the tool: {exc}")
        code, status = _wait(proc, float(step["timeout_s"]))
    result = {"name": step["name"], "status": status, "code": code, "out": _tail(OUTPUT_FILE, int(step["keep_output"]))}
    if status == "ok" and step.get("scan"):
        found = _scan(step["scan"])
        result["found"], result["found_count"] = found[:MAX_FOUND], len(found)
    return result


def _force_warn_lints(tool: str, env: dict[str, str]) -> list[str]:
    """`--force-warn NAME` for each lint this rustc warns about by default."""
    done = subprocess.run(
        [tool, "-W", "help"], env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=LINT_HELP_TIMEOUT_S
    )
    text = done.stdout[:MAX_LINT_HELP_BYTES].decode("utf-8", "replace")
    lines = map(str.split, text.splitlines())
    names = [w[0] for w in lines if len(w) >= 2 and w[1] == "warn" and w[0] not in NOT_FORCED_LINTS]
    if done.returncode != 0 or not names:
        raise OSError(f"{tool} -W help listed no lints (exit {done.returncode})")
    return ["-A", "unknown_lints", *(arg for name in names for arg in ("--force-warn", name))]


def _scan(scan: dict[str, Any]) -> list[str]:
    """The lines of the preprocessed file that switch diagnostics off in the program's
    own text (not in a toolchain's headers, which do so too), a file of the program
    made a system header once however often GCC marks it, and the lines of the step's
    output that carry one of the compiler's marks for others."""
    found: list[str] = []
    marked: set[str] = set()
    in_header = False
    with open(scan["file"], encoding="utf-8", errors="replace") as f:
        for line in f:
            marker = _line_marker(line)
            if marker is not None:
                path, in_header = marker
                if not in_header or path.startswith(SYSTEM_PREFIX) or path in marked:
                    continue
                marked.add(path)
            elif in_header or not _controls_diagnostics(line):
                continue
            found.append(line.strip()[:MAX_FOUND_CHARS])
    with open(OUTPUT_FILE, encoding="utf-8", errors="replace") as f:
        found += (line.strip()[:MAX_FOUND_CHARS] for line in f if any(m in line for m in scan["output_marks"]))
    return found


def _controls_diagnostics(line: str) -> bool:
    """A `#pragma` of GCC's or clang's `diagnostic` other than push, pop and error, or
    MSVC's `warning`."""
    text = line.lstrip()
    if not text.startswith("#"):
        return False
    words = text[1:].split(maxsplit=4)
    if not words or words[0] != "pragma":
        return False
    msvc = len(words) > 1 and words[1].startswith("warning")
    gnu = len(words) > 2 and words[1] in ("GCC", "clang") and words[2] == "diagnostic"
    return msvc or (gnu and (len(words) < 4 or words[3] not in HARMLESS_DIAGNOSTIC_KINDS))


def _line_marker(line: str) -> tuple[str, bool] | None:
    """A line marker's file and whether it is a system header (flag 3, where GCC reports
    no warning). The name is resolved as far as it can be here (`..`, links; a name in
    /proc of a process gone stays as written): only the toolchains' own files, under
    SYSTEM_PREFIX, are headers; a marker written in the source that names one is what
    -Wpedantic names."""
    text = line.lstrip()
    if not text.startswith("#") or '"' not in text:
        return None
    words = text[1:].split(maxsplit=1)
    if not words or not words[0].isdigit():
        return None
    # `# LINE "NAME" FLAGS...`: the name between the first and the last quote.
    first, last = text.index('"'), text.rindex('"')
    path = os.path.realpath(text[first + 1 : last].replace('\\"', '"').replace("\\\\", "\\"))
    return path, "3" in text[last + 1 :].split()


def _resolve(argv: list[str], env: dict[str, str]) -> list[str]:
    """A tool named without a path is looked up here, on the sandbox's PATH (a backend
    may hold its toolchains elsewhere than the host); `python` is this interpreter, by
    its base path: a virtualenv's link to it may lie where jobs cannot see (a checkout
    under /tmp is covered by the job's private /tmp)."""
    if os.path.isabs(argv[0]):
        return argv
    base = getattr(sys, "_base_executable", sys.executable)  # CPython's; typeshed does not list it
    found = base if argv[0] == "python" else shutil.which(argv[0], path=env["PATH"])
    if not found:
        raise FileNotFoundError(f"{argv[0]} is not installed in the sandbox (not on its PATH, {env['PATH']})")
    return [found, *argv[1:]]


def _start(argv: list[str], step: dict[str, Any], env: dict[str, str], out: Any) -> subprocess.Popen[bytes]:
    fsize = int(step["fsize_bytes"])
    return subprocess.Popen(
        argv,
        cwd=step["cwd"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=lambda: _limit_file_size(fsize),
    )


def _wait(proc: subprocess.Popen[bytes], timeout_s: float) -> tuple[int | None, str]:
    """The exit code and status; at the timeout the whole process group is killed."""
    code: int | None
    try:
        code = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        code = None
    # The whole group: a compiler driver's children (cc1plus, as) outlive it otherwise.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if code is None:
        proc.wait()
        return None, "timeout"
    return code, _status(code)


def main() -> None:
    job = json.loads(sys.stdin.read())
    results = []
    for step in job["steps"]:
        result = run_step(step, job["env"])
        results.append(result)
        if result["status"] != "ok":
            break
    sys.stdout.write(json.dumps({"steps": results}) + "\n")


if __name__ == "__main__":
    main()
