"""A third-party plugin, pip-installed, graded through over HTTP."""

from __future__ import annotations

import httpx


def test_example_plugin_grades_over_http(http: httpx.Client) -> None:
    listed = {v["name"]: v for v in http.get("/v1/verifiers").json()["verifiers"]}
    assert listed["exact_match"]["source"] == "entry_point:rlvr-plugin-example"
    items = [
        {"response": "  Paris ", "verifier": "exact_match", "ground_truth": "paris"},
        {"response": "Lyon", "verifier": "exact_match", "ground_truth": ["Paris", "Lutetia"]},
        {"response": "paris", "verifier": "exact_match", "ground_truth": "Paris", "params": {"case_sensitive": True}},
    ]
    results = http.post("/v1/grade", json={"items": items}).json()["results"]
    assert [r["reward"] for r in results] == [1.0, 0.0, 0.0]


def test_broken_plugin_is_reported_not_fatal(http: httpx.Client) -> None:
    ready = http.get("/readyz")
    assert ready.status_code == 200
    broken = ready.json()["backends"]["verifiers"]["broken"]
    assert "broken" in broken and "broken on purpose" in broken["broken"]
