"""A malformed request gets a 4xx naming the item and field, and nothing is graded; an
item whose params or ground truth its verifier refuses is masked (a 4xx with `strict`)."""

from __future__ import annotations

import httpx
import pytest

OK = {"response": "<think>a</think><answer>b</answer>", "verifier": "format"}


def post(http: httpx.Client, body: object) -> httpx.Response:
    return http.post("/v1/grade", json=body)


def error_of(r: httpx.Response) -> str:
    assert 400 <= r.status_code < 500, r.text
    return str(r.json()["error"]["message"])


def test_not_json(http: httpx.Client) -> None:
    r = http.post("/v1/grade", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert "body: not valid JSON" in error_of(r)


def test_empty_body(http: httpx.Client) -> None:
    assert "not valid JSON" in error_of(http.post("/v1/grade", content=b""))


ITEM = b'{"response": "x", "verifier": "format"'


@pytest.mark.parametrize(
    "body",
    [
        ITEM + b', "ground_truth": [1e400]}',
        ITEM + b', "metadata": {"a": -1e999}}',
        ITEM + b', "params": {"a": 1e400}}',
        b'{"response": 1e400, "verifier": "format"}',
        ITEM + b', "ground_truth": ' + b"9" * 5000 + b"}",
        b"{\"response\": \"caf\xc3\", \"verifier\": \"format\"}",
        ITEM + b', "ground_truth": "\\ud800"}',
    ],
    ids=["1e400", "-1e999", "params 1e400", "response 1e400", "5000 digits", "bad UTF-8", "lone surrogate"],
)
@pytest.mark.parametrize("route", ["/v1/grade", "/v1/validate"])
def test_a_value_json_cannot_hold_is_a_422_wherever_it_is(http: httpx.Client, body: bytes, route: str) -> None:
    for request in (b'{"items": [' + body + b"]}", b'{"items": [' + body + b"], " + b'"deadline_s": 1e400}'):
        r = http.post(route, content=request, headers={"content-type": "application/json"})
        assert r.status_code == 422, r.text
        assert "not valid JSON" in error_of(r)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ([], "body"),
        ({}, "items: Field required"),
        ({"items": "x"}, "items: Input should be a valid list"),
        ({"items": []}, "items: at least one item"),
        ({"items": [OK, {"verifier": "format"}]}, "items[1].response: Field required"),
        ({"items": [OK, {"response": 3, "verifier": "format"}]}, "items[1].response: Input should be a valid string"),
        ({"items": [{"response": "x"}]}, "items[0].verifier: Field required"),
        ({"items": [{"response": "x", "verifier": 7}]}, "items[0].verifier"),
        ({"items": [{**OK, "bogus": 1}]}, "items[0].bogus: Extra inputs are not permitted"),
        ({"items": [{**OK, "params": []}]}, "items[0].params"),
        ({"items": [{**OK, "verifier": [{"name": "format", "weight": "heavy"}]}]}, "items[0].verifier[0].weight"),
        ({"items": [{**OK, "verifier": []}]}, "items[0].verifier: the verifier list is empty"),
        ({"items": [OK], "deadline_s": -1}, "deadline_s"),
        ({"items": [OK], "deadline_s": 10_000}, "deadline_s: 10000 exceeds the server maximum"),
    ],
)
def test_malformed_fields(http: httpx.Client, body: object, expected: str) -> None:
    r = post(http, body)
    assert r.status_code == 422
    assert expected in error_of(r)


def test_unknown_verifier(http: httpx.Client) -> None:
    r = post(http, {"items": [OK, OK, {**OK, "verifier": "nope"}]})
    assert r.status_code == 422
    assert "items[2].verifier: unknown verifier 'nope'" in error_of(r)
    r = post(http, {"items": [{**OK, "verifier": [{"name": "format"}, {"name": "nope"}]}]})
    assert "items[0].verifier[1]: unknown verifier 'nope'" in error_of(r)


def test_broken_plugin_is_a_clear_4xx(http: httpx.Client) -> None:
    r = post(http, {"items": [{**OK, "verifier": "broken"}]})
    assert r.status_code == 422
    assert "items[0].verifier: verifier 'broken' failed to load" in error_of(r)


PARAMS_CASES = [
    ({"preset": "nope"}, "params.preset"),
    ({"preset": "regex"}, "params: Value error, pattern is required"),
    ({"preset": "regex", "pattern": "("}, "pattern does not compile"),
    ({"preset": "tags", "tags": ["<bad>"]}, "is not a valid tag name"),
    ({"unknown_knob": 1}, "params.unknown_knob: Extra inputs are not permitted"),
    ({"preset": "regex", "pattern": "a", "timeout_s": 0}, "params.timeout_s"),
]


@pytest.mark.parametrize(("params", "expected"), PARAMS_CASES)
def test_params_rejected_by_schema_mask_the_item(http: httpx.Client, params: dict[str, object], expected: str) -> None:
    r = post(http, {"items": [OK, {**OK, "params": params}]})
    assert r.status_code == 200, r.text
    good, bad = r.json()["results"]
    assert (good["verdict"], good["mask"]) == ("correct", False)
    assert (bad["verdict"], bad["mask"], bad["reward"]) == ("error", True, 0.0)
    assert expected in bad["reason"], bad["reason"]
    assert any(expected in e for e in bad["details"]["invalid"])


@pytest.mark.parametrize(("params", "expected"), PARAMS_CASES)
def test_params_rejected_by_schema_strict(http: httpx.Client, params: dict[str, object], expected: str) -> None:
    r = post(http, {"items": [OK, {**OK, "params": params}], "strict": True})
    assert r.status_code == 422, params
    assert f"items[1].{expected}" in error_of(r) or expected in error_of(r), (params, error_of(r))
    assert "items[1]" in error_of(r)


def test_params_with_composite_named_per_entry(http: httpx.Client) -> None:
    r = post(http, {"items": [{**OK, "verifier": [{"name": "format", "params": {"preset": 1}}]}], "strict": True})
    assert "items[0].verifier[0].params.preset" in error_of(r)
    masked = post(http, {"items": [{**OK, "verifier": [{"name": "format", "params": {"preset": 1}}]}]}).json()
    assert masked["results"][0]["mask"] is True
    assert "verifier[0].params.preset" in masked["results"][0]["reason"]
    # Params beside a list of verifiers is the request's shape, not a dataset row's: a 422 either way.
    r = post(http, {"items": [{**OK, "verifier": [{"name": "format"}], "params": {"preset": "tags"}}]})
    assert "items[0].params: with a list of verifiers" in error_of(r)


def test_ground_truth_rejected_by_schema(http: httpx.Client) -> None:
    bad = {"response": "x", "verifier": "exact_match", "ground_truth": {"a": 1}}
    r = post(http, {"items": [bad], "strict": True})
    assert r.status_code == 422
    assert "items[0].ground_truth" in error_of(r)
    result = post(http, {"items": [bad]}).json()["results"][0]
    assert (result["verdict"], result["mask"]) == ("error", True)
    assert result["reason"].startswith("invalid item: ground_truth")


def test_one_bad_item_rejects_before_grading_when_strict(http: httpx.Client) -> None:
    sleepy = {"response": "0.0123", "verifier": "sleepy"}
    r = post(http, {"items": [sleepy, {**OK, "params": {"preset": "x"}}], "strict": True})
    assert r.status_code == 422
    assert "items[1].params.preset" in error_of(r)
    # Had the first item been graded, its verdict would now be in the cache.
    again = post(http, {"items": [sleepy]}).json()["results"][0]
    assert again["verdict"] == "correct"
    assert again["cached"] is False


@pytest.mark.parametrize(
    ("body", "key"),
    [
        (b'{"items": [], "items": [{"response": "a", "verifier": "format"}]}', "items"),
        (b'{"items": [{"response": "a", "response": "b", "verifier": "format"}]}', "response"),
        (b'{"items": [{"response": "a", "verifier": "code", "ground_truth": {"tests": [], "tests": ["x"]}}]}', "tests"),
    ],
)
def test_duplicate_keys_are_refused(http: httpx.Client, body: bytes, key: str) -> None:
    r = http.post("/v1/grade", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert f"the key {key!r} appears twice" in r.json()["error"]["message"]
