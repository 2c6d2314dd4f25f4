"""verl's own SandboxFusion client (`verl.utils.reward_score.sandbox_fusion`) runs code on
rlvr's `POST /run_code` by configuration alone: its URL is all that changes."""

from __future__ import annotations

import threading

from tests.compat.needs import need
from tests.services import require

need("verl")

from verl.utils.reward_score.sandbox_fusion import compute_score  # noqa: E402

# stdin/stdout tests, as code data sets (e.g. the TACO and APPS subsets verl ships) store them.
TESTS = {"inputs": ["1 2\n", "3 4\n", "10 -3\n"], "outputs": ["3\n", "7\n", "7\n"]}
RIGHT = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
WRONG = "```python\na, b = map(int, input().split())\nprint(a * b)\n```"
CRASHES = "```python\nraise SystemExit(input() and 3)\n```"


def score(url: str, completion: str) -> tuple[float, list[dict[str, object]]]:
    value, metadata = compute_score(f"{url}/run_code", threading.Semaphore(4), 512, completion, TESTS, timeout=10)
    return float(value), metadata


def test_verls_client_scores_programs_run_by_rlvr(live_server: str) -> None:
    value, metadata = score(live_server, RIGHT)
    # SandboxFusion's "SandboxError" is rlvr failing to run the program: a missing sandbox.
    require(not any(m.get("api_status") == "SandboxError" for m in metadata), f"a sandbox ({metadata[:1]})")
    assert value == 1.0, metadata
    assert score(live_server, WRONG)[0] == 0.0
    crashed, metadata = score(live_server, CRASHES)
    assert crashed == 0.0 and all(m.get("exit_code") == 3 for m in metadata), metadata
