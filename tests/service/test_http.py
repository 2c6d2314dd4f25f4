"""End to end against a real `rlvr serve` subprocess."""

from __future__ import annotations

import json

import httpx

THINK = "<think>2+2=4</think>\n<answer>4</answer>"


def grade(http: httpx.Client, *items: dict, **extra: object) -> httpx.Response:
    return http.post("/v1/grade", json={"items": list(items), **extra})


def test_grades_a_batch_in_request_order(http: httpx.Client) -> None:
    items = [
        {"id": f"i{i}", "response": THINK if i % 2 == 0 else f"bad {i}", "verifier": "format", "group": "g1"}
        for i in range(20)
    ]
    r = grade(http, *items)
    assert r.status_code == 200
    body = r.json()
    assert [res["id"] for res in body["results"]] == [f"i{i}" for i in range(20)]
    for i, res in enumerate(body["results"]):
        assert res["reward"] == (1.0 if i % 2 == 0 else 0.0)
        assert res["verdict"] == ("correct" if i % 2 == 0 else "incorrect")
        assert res["mask"] is False
        assert res["group"] == "g1"
        assert set(res) >= {"id", "reward", "verdict", "mask", "scores", "reason", "details", "cached", "elapsed_ms"}
    assert body["stats"]["items"] == 20
    # The ten correct responses are one unit, the ten wrong ones are distinct.
    assert body["stats"]["unique"] == 11


def test_composite_reward_is_weighted_sum(http: httpx.Client) -> None:
    item = {
        "response": THINK,
        "verifier": [
            {"name": "format", "weight": 1.0},
            {"name": "format", "weight": 0.25, "params": {"preset": "tags", "tags": ["answer", "missing"]}},
        ],
    }
    res = grade(http, item).json()["results"][0]
    assert res["scores"] == {"format": 1.0, "format#2": 0.0}
    assert res["reward"] == 1.0
    assert res["verdict"] == "partial"


def test_second_request_is_cached(http: httpx.Client) -> None:
    item = {"response": "<think>cache me</think><answer>1</answer>", "verifier": "format"}
    first = grade(http, item).json()["results"][0]
    second = grade(http, item).json()
    assert first["cached"] is False
    assert second["results"][0]["cached"] is True
    assert second["stats"]["cache_hits"] == 1


def test_regex_backtracking_is_a_timeout_not_a_hang(http: httpx.Client) -> None:
    item = {
        "response": "a" * 60,
        "verifier": "format",
        "params": {"preset": "regex", "pattern": "(a|aa)+c", "timeout_s": 0.2},
    }
    res = grade(http, item).json()["results"][0]
    assert res["verdict"] == "timeout"
    assert res["mask"] is False
    assert res["reward"] == 0.0


def test_verifiers_endpoint_lists_schemas(http: httpx.Client) -> None:
    body = http.get("/v1/verifiers").json()
    by_name = {v["name"]: v for v in body["verifiers"]}
    fmt = by_name["format"]
    assert fmt["version"] and fmt["description"]
    assert "preset" in fmt["params_schema"]["properties"]
    assert "ground_truth_schema" in fmt
    assert by_name["broken"]["available"] is False
    assert "broken on purpose" in by_name["broken"]["error"]


def test_health_ready_and_metrics(http: httpx.Client) -> None:
    assert http.get("/healthz").json() == {"status": "ok"}
    ready = http.get("/readyz")
    assert ready.status_code == 200
    backends = ready.json()["backends"]
    assert backends["dispatcher"]["kind"] == "embedded"
    assert backends["cache"]["kind"] == "memory"
    assert "sandbox" in backends
    grade(http, {"response": THINK, "verifier": "format"})
    text = http.get("/metrics").text
    assert 'rlvr_items_total{verdict="correct",verifier="format"}' in text
    assert "rlvr_verify_seconds_bucket" in text
    assert "rlvr_cache_hits_total" in text and "rlvr_cache_misses_total" in text
    assert "rlvr_in_flight_items" in text


def test_json_never_contains_nan(http: httpx.Client) -> None:
    r = grade(http, {"response": "nan", "verifier": "liar"}, {"response": "0.5", "verifier": "liar"})
    assert r.status_code == 200
    assert "NaN" not in r.text and "Infinity" not in r.text
    nan_res, ok_res = r.json()["results"]
    assert nan_res["mask"] is True and nan_res["verdict"] == "error"
    assert ok_res["reward"] == 0.5
    assert ok_res["details"] == {"nan": "nan"}
    json.loads(r.text)
