"""Every answer is JSON that any client can read, whatever strings it carries."""

from __future__ import annotations

import json

import pytest

from rlvr.service.asgi import StrictJSONResponse


@pytest.mark.parametrize("text", ["\ud800", "a\udcffb", "é\U0001f600", "plain"])
def test_any_string_renders_as_json_that_reads_back(text: str) -> None:
    body = StrictJSONResponse({"error": {"message": text}}).body
    read = json.loads(body.decode("utf-8"))["error"]["message"]
    assert read == text


def test_nan_is_refused() -> None:
    with pytest.raises(ValueError):
        StrictJSONResponse({"x": float("nan")})
