"""The program a toolchain job runs inside the sandbox: write files, run tool steps
(a compiler, a proof checker), report each step's status and output as one JSON line.

Its source, not this module, is what runs: `steps` sends it as the program of a
`stdio` job and the job description as its stdin, so the toolchain runs with exactly
the isolation and limits of any sandboxed program. Standard library only, self-contained.

The tools are fed untrusted input but run none of it (no step executes what it built),
so what they print can only be their own diagnostics. Each step writes its output to a
file under a per-step size cap (RLIMIT_FSIZE: past it the kernel stops the tool with
SIGXFSZ) and runs in a process group of its own, killed whole at the step's timeout.
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
            proc = _start(argv, step, env, out)
        except OSError as exc:
            return _failure(step, "unavailable", f"cannot run the tool: {exc}")
        code, status = _wait(proc, float(step["timeout_s"]))
    return {"name": step["name"], "status": status, "code": code, "out": _tail(OUTPUT_FILE, int(step["keep_output"]))}


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
        raise FileNotFoundError(f"{argv[0]} is not installed in the sandbox")
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
