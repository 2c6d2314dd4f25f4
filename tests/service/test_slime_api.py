"""slime's remote reward endpoint, `POST /v1/reward`: one sample per request, the
payload slime's `remote_rm` posts, answered with `score` (slime: --reward-key score)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest


def post(http: httpx.Client, payload: dict[str, Any], verifier: str | None = "math") -> httpx.Response:
    params = {"verifier": verifier} if verifier else {}
    return http.post("/v1/reward", params=params, json=payload)


@pytest.mark.parametrize(
    ("response", "label", "score", "verdict"),
    [
        (r"So \boxed{4}", "4", 1.0, "correct"),
        (r"So \boxed{5}", "4", 0.0, "incorrect"),
        ("I cannot say", "4", 0.0, "no_answer"),
    ],
)
def test_slime_payload(http: httpx.Client, response: str, label: str, score: float, verdict: str) -> None:
    body = post(http, {"prompt": "What is 2+2?", "response": response, "label": label}).json()
    assert body["score"] == score
    assert body["verdict"] == verdict
    assert body["mask"] is False
    assert set(body) == {"score", "verdict", "mask", "reason"}


def test_masked_sample(http: httpx.Client) -> None:
    body = post(http, {"prompt": "?", "response": r"\boxed{4}", "label": ""}).json()
    assert (body["score"], body["mask"], body["verdict"]) == (0.0, True, "error")


def test_code_label_as_json_text(http: httpx.Client) -> None:
    label = '{"inputs": ["1 2\\n"], "outputs": ["3\\n"]}'
    response = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
    assert post(http, {"response": response, "label": label}, "code").json()["score"] == 1.0


def test_extra_fields_slime_may_add_are_ignored(http: httpx.Client) -> None:
    body = post(http, {"prompt": "", "response": r"\boxed{4}", "label": "4", "metadata": {"x": 1}}).json()
    assert body["score"] == 1.0


def test_an_invalid_label_is_masked_naming_it(http: httpx.Client) -> None:
    response = post(http, {"response": "x", "label": {"tests": 5}}, "code")
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["score"], body["verdict"], body["mask"]) == (0.0, "error", True)
    assert "ground_truth(AssertTests).tests: Input should be a valid list" in body["reason"]


@pytest.mark.parametrize(
    ("payload", "verifier", "fragment"),
    [
        ({"prompt": "x", "label": "4"}, "math", "response: Field required"),
        ({"response": 4, "label": "4"}, "math", "response"),
        ({"response": "4", "prompt": ["x"]}, "math", "prompt"),
        ({"response": "x"}, "no-such-verifier", "verifier"),
        ({"response": "x"}, None, "verifier: none given"),
    ],
)
def test_bad_requests_name_the_field(
    http: httpx.Client, payload: dict[str, Any], verifier: str | None, fragment: str
) -> None:
    response = post(http, payload, verifier)
    assert response.status_code == 422, response.text
    assert fragment in response.json()["error"]["message"]
