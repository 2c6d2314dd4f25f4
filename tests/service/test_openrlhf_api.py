"""OpenRLHF's remote reward endpoint, `POST /get_reward`, over a real server: the wire
format its `SingleTurnAgentExecutor` reads, and 4xx answers that name the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr.service.bodies import decode_json
from rlvr.service.settings import DEFAULT_MAX_OBJECT_KEYS
from rlvr.service.trainer_api import SPECIAL_TOKENS, ground_truth, response_text
from tests.services import Server

CHAT_PROMPT = "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
ADD_TESTS = {"fn_name": "add", "inputs": [[1, 2], [3, 4]], "outputs": [3, 7]}


def post(http: httpx.Client, payload: dict[str, Any], verifier: str | None = "math") -> httpx.Response:
    params = {"verifier": verifier} if verifier else {}
    return http.post("/get_reward", params=params, json=payload)


@pytest.mark.parametrize(
    ("query", "prompt", "expected"),
    [
        (CHAT_PROMPT + r"\boxed{4}<|im_end|>", CHAT_PROMPT, r"\boxed{4}"),
        ("<s>Q: 2+2?\nA: 4</s>", "Q: 2+2?\n", "A: 4"),  # a BOS the prompt text lacks
        ("Q: 2+2? 4<eos><pad><pad>", "Q: 2+2?", " 4"),
        ("4<|endoftext|>", "not in the query", "4"),
        ("Q: 2+2? 4<|eot_id|>", None, "Q: 2+2? 4"),
        ("Q Q 4", "Q", " Q 4"),  # only the first occurrence is the prompt
    ],
)
def test_response_text(query: str, prompt: str | None, expected: str) -> None:
    assert response_text(query, prompt) == expected


def _decode(text: str) -> Any:
    return decode_json(text.encode(), DEFAULT_MAX_OBJECT_KEYS)


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("4", "4"),
        ("{1, 2}", "{1, 2}"),  # a set in LaTeX, not JSON
        (json.dumps(ADD_TESTS), ADD_TESTS),
        (' {"a": 1}', {"a": 1}),
        ("[1, 2]", "[1, 2]"),
        (ADD_TESTS, ADD_TESTS),
        (None, None),
    ],
)
def test_label_as_ground_truth(label: Any, expected: Any) -> None:
    assert ground_truth(label, _decode) == expected


@pytest.mark.parametrize(
    "label",
    [
        '{"a": "\\ud800"}',  # an escaped lone surrogate
        '{"a": 1, "a": 2}',
        '{"a": ' + "[" * 300 + "]" * 300 + "}",
        '{"a": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"a": NaN}',
    ],
    ids=["lone surrogate", "duplicate key", "deep", "deeper than the stack", "NaN"],
)
def test_a_label_whose_json_is_refused_is_its_text_and_never_a_500(http: httpx.Client, label: str) -> None:
    assert ground_truth(label, _decode) == label
    response = post(http, {"query": ["x"], "labels": [label]}, verifier="format")
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"query": [1] * 20_000}, "query: 20000 entries exceed the limit of 10000"),
        ({"query": ["x", 1, 2]}, "query[1]: Input should be a valid str"),
        ({"query": ["x"], "prompts": ["p", None]}, "prompts[1]: Input should be a valid str"),
        ({"query": ["x"], "labels": [None] * 20_000}, "labels: 20000 entries exceed the limit of 10000"),
    ],
)
def test_lists_are_checked_before_a_model_is_built(http: httpx.Client, payload: dict[str, Any], message: str) -> None:
    response = post(http, payload, verifier="format")
    assert response.status_code == 422
    assert message in response.json()["error"]["message"]


def no_signals(items: int) -> dict[str, list[float]]:
    """The math verifier's signal logs where no item raised one: a key per signal."""
    return {f"rlvr_signal_{name}": [0.0] * items for name in ("answer_in_thinking_only", "hedge", "restated_question")}


def test_single_sample_as_openrlhf_sends_it(http: httpx.Client) -> None:
    payload = {"query": [CHAT_PROMPT + r"So \boxed{4}<|im_end|>"], "prompts": [CHAT_PROMPT], "labels": ["4"]}
    response = post(http, payload)
    assert response.status_code == 200
    assert response.json() == {"rewards": [1.0], "scores": [1.0], "extra_logs": {"rlvr_masked": [0.0], **no_signals(1)}}


def test_batch_keeps_order_and_length(http: httpx.Client) -> None:
    answers = ["4", "5", "4", "no answer at all"]
    payload = {
        "query": [f"{CHAT_PROMPT}The answer is \\boxed{{{a}}}<|im_end|>" for a in answers],
        "prompts": [CHAT_PROMPT] * 4,
        "labels": ["4", "4", "5", "4"],
    }
    body = post(http, payload).json()
    assert body["rewards"] == [1.0, 0.0, 0.0, 0.0]
    assert body["scores"] == body["rewards"]
    assert body["extra_logs"] == {"rlvr_masked": [0.0] * 4, **no_signals(4)}


def test_code_label_as_json_text(http: httpx.Client) -> None:
    program = "```python\ndef add(a, b):\n    return a + b\n```"
    wrong = "```python\ndef add(a, b):\n    return a - b\n```"
    payload = {"query": ["Write add. " + program, "Write add. " + wrong], "prompts": ["Write add. "] * 2}
    payload["labels"] = [json.dumps(ADD_TESTS), ADD_TESTS]
    body = post(http, payload, "code").json()
    assert body["rewards"] == [1.0, 0.0]


def test_masked_item_scores_zero_and_is_logged(http: httpx.Client) -> None:
    # A gold with no answer in it is the grader's failure: masked, never a learned 0
    payload = {"query": [r"\boxed{4}", r"\boxed{4}"], "prompts": ["", ""], "labels": ["", "4"]}
    body = post(http, payload).json()
    assert body == {
        "rewards": [0.0, 1.0],
        "scores": [0.0, 1.0],
        "extra_logs": {"rlvr_masked": [1.0, 0.0], **no_signals(2)},
    }


def test_without_prompts_and_labels_the_verifier_decides(http: httpx.Client) -> None:
    body = post(http, {"query": ["<think>a</think><answer>b</answer>"]}, "format").json()
    assert body["rewards"] == [1.0]


@pytest.mark.parametrize(
    ("payload", "verifier", "fragment"),
    [
        ({"query": ["4"], "labels": ["4", "5"]}, "math", "labels: 2 entries, but query has 1"),
        ({"query": ["4"], "prompts": []}, "math", "prompts: 0 entries"),
        ({"query": []}, "math", "query"),
        ({"query": "4"}, "math", "query"),
        ({"prompts": ["x"]}, "math", "query"),
        ({"query": [4]}, "math", "query[0]"),
        ({"query": ["x"]}, "no-such-verifier", "verifier"),
        ({"query": ["x"]}, None, "verifier: none given"),
    ],
)
def test_bad_requests_name_the_field(
    http: httpx.Client, payload: dict[str, Any], verifier: str | None, fragment: str
) -> None:
    response = post(http, payload, verifier)
    assert response.status_code == 422, response.text
    assert fragment in response.json()["error"]["message"]


def test_a_row_with_an_invalid_label_is_masked_not_a_422(http: httpx.Client) -> None:
    program = "```python\ndef f():\n    return 1\n```"
    labels = [{"tests": ["assert f() == 1"]}, {"tests": 5}]
    response = post(http, {"query": [program, program], "labels": labels}, "code")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["rewards"] == [1.0, 0.0]
    assert body["extra_logs"]["rlvr_masked"] == [0.0, 1.0]


def test_not_json_is_a_422(http: httpx.Client) -> None:
    response = http.post("/get_reward?verifier=math", content=b"{not json")
    assert response.status_code == 422
    assert "not valid JSON" in response.json()["error"]["message"]


@pytest.fixture(scope="module")
def default_math_server(plugin_dir: Path) -> Iterator[str]:
    with Server(plugin_dir, "--workers", "1", default_verifier="math") as server:
        yield server.url


def test_default_verifier_setting(default_math_server: str) -> None:
    with httpx.Client(base_url=default_math_server, timeout=60) as client:
        body = client.post("/get_reward", json={"query": [r"\boxed{4}"], "labels": ["4"]}).json()
        assert body["rewards"] == [1.0]
        # the URL's verifier wins over the setting
        slime = client.post("/v1/reward?verifier=format", json={"response": "<answer>4</answer>"}).json()
        assert slime["score"] == 0.0  # the format verifier also wants <think>
        assert client.post("/v1/reward", json={"response": r"\boxed{4}", "label": "4"}).json()["score"] == 1.0


_PIECES = st.sampled_from([*SPECIAL_TOKENS, "<|im_", "end|>", "<", "|>", "</", "s>", "a", "P"])


@given(st.lists(_PIECES, max_size=10).map("".join), st.sampled_from(["", "P", "a", "<|im_end|>"]))
def test_the_response_is_what_follows_the_prompt_with_every_special_token_removed(query: str, prompt: str) -> None:
    expected = query[query.find(prompt) + len(prompt) :] if prompt and prompt in query else query
    for token in SPECIAL_TOKENS:
        expected = expected.replace(token, "")
    assert response_text(query, prompt) == expected
