"""Chat-template turn tokens (`rlvr.verifiers.turns`)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.verifiers.turns import cut_code_at_turn_end, without_turn_tokens


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("```<|im_end|>\n<|im_start|>assistant\n", "```\n\n\nassistant\n"),
        ("x<|eot_id|>y", "x\ny"),
        ("a <| b |> c", "a <| b |> c"),
        ("plain", "plain"),
    ],
)
def test_without_turn_tokens(text: str, plain: str) -> None:
    assert without_turn_tokens(text) == plain


@pytest.mark.parametrize(
    "text", ["<|" * 200_000, "<|a" * 100_000, "<|" + "a" * 400_000, "<|aaaaaaaaaaaaaaaaaaaa" * 20_000]
)
def test_linear_on_hostile_text(text: str) -> None:
    """Near-misses of a token, many times over: both leave them as they are (in one
    pass each; a backtracking scan of this text would not finish)."""
    assert without_turn_tokens(text) == text


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        ("```\nx\n```<|im_end|>\n<|im_start|>user\nmore", "```\nx\n```"),
        ("code\n<|im_end|>", "code\n"),
        ("code\n  <|eot_id|>trailing", "code\n  "),
        ("x = 1<|im_end|>", "x = 1"),  # nothing after it but the end
        ("x = 1<|im_end|>  \n<|endoftext|>\n", "x = 1"),
        ("s = '<|im_end|>'\nprint(s)\n", "s = '<|im_end|>'\nprint(s)\n"),  # quoted in code
        (
            "The template ends with <|im_end|> here.\n```py\nx\n```",
            "The template ends with <|im_end|> here.\n```py\nx\n```",
        ),
        ("s = '<|im_end|>'\n~~~<|im_end|>\nmore", "s = '<|im_end|>'\n~~~"),
        ("a <| b |> c", "a <| b |> c"),
        ("no tokens", "no tokens"),
    ],
)
def test_cut_code_at_turn_end(text: str, cut: str) -> None:
    assert cut_code_at_turn_end(text) == cut


@pytest.mark.parametrize(
    "text",
    ["x<|im_end|>" * 50_000, ("y" * 30 + "<|eot_id|>") * 20_000, "<|" * 200_000 + "<|im_end|>y", "\n" * 300_000 + "<|"],
)
def test_cut_code_at_turn_end_on_many_tokens(text: str) -> None:
    """Many tokens mid-line, or a long run before one: one pass each (a scan back to the
    line's start for every token would not finish), and none of these lines ends a turn
    but by the text's end."""
    cut = cut_code_at_turn_end(text)
    assert text.startswith(cut)


# Pieces a decoded response is made of, tokens and near-misses among them.
PIECES = ["<|im_end|>", "<|eot_id|>", "<|im_start|>", "<|", "|>", "```", "~~~", "\n", "\r\n", " ", "\t", "x", "'", "#"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60))
def test_cut_code_is_a_prefix_that_ends_before_a_turn_token(parts: list[str]) -> None:
    text = "".join(parts)
    cut = cut_code_at_turn_end(text)
    assert text.startswith(cut)
    first = re.search(r"<\|[a-z_]{2,20}\|>", text)
    assert len(cut) >= (first.start() if first else len(text))  # never earlier than the first token
    if cut != text:  # it ends where a whole token starts
        assert text[len(cut) :].startswith(("<|im_end|>", "<|eot_id|>", "<|im_start|>"))
    if "<|" not in text:
        assert cut == text
