"""The program a Coq job runs inside the sandbox: the toolchain driver's steps
(`verifiers.compile.driver`, whose `run_step` it calls: timeouts, file-size caps,
process groups), plus binary files in and out, which Coq's compiled modules are.

Each step may carry `inputs` (path to base64 bytes), written after its `clear` and
right before it runs: the trusted modules are written again before every step, so a
step that rewrote them cannot hand the next one anything but the trusted bytes. After
the last step, if every step succeeded, the `fetch` files (each under `max_fetch_bytes`)
come back base64-encoded in the report.

Like the driver, this source, not this module, is what runs (see `coq.JobSandbox`):
standard library only, given the driver as the module object `tool`.
"""

import base64
import json
import os
import shutil
import sys
from typing import Any


def _write_inputs(step: dict[str, Any]) -> None:
    for folder in step.pop("clear", []):
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder, exist_ok=True)
    for path, data in step.pop("inputs", {}).items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))


def _fetch(paths: list[str], max_bytes: int) -> dict[str, str]:
    fetched = {}
    for path in paths:
        try:
            with open(path, "rb") as f:
                data = f.read(max_bytes + 1)
        except OSError:
            continue
        if len(data) <= max_bytes:
            fetched[path] = base64.b64encode(data).decode("ascii")
    return fetched


def run(tool: Any) -> None:
    job = json.loads(sys.stdin.read())
    results = []
    for step in job["steps"]:
        try:
            _write_inputs(step)
        except OSError as exc:
            results.append({"name": step["name"], "status": "error", "code": None, "out": f"cannot write: {exc}"})
            break
        result = tool.run_step(step, job["env"])
        results.append(result)
        if result["status"] != "ok":
            break
    done = len(results) == len(job["steps"]) and all(r["status"] == "ok" for r in results)
    fetched = _fetch(job.get("fetch", []), int(job.get("max_fetch_bytes", 0))) if done else {}
    sys.stdout.write(json.dumps({"steps": results, "fetched": fetched}) + "\n")
