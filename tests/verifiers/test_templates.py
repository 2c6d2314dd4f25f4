"""Chat and reasoning templates around a response (`rlvr.verifiers.templates`): every
template, the answer in every place it takes, right and wrong answers alike."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.math import MathParams, MathVerifier
from rlvr.verifiers.templates import Turn, assistant_text, turns

V = MathVerifier()
P = MathParams()

# (name, thinking open, thinking close, before the answer, after the answer)
TEMPLATES = [
    ("r1", "<think>\n", "\n</think>\n\n", "", "<｜end▁of▁sentence｜>"),
    ("r1_prompt_opened", "", "\n</think>\n\n", "", "<｜end▁of▁sentence｜>"),
    ("chatml", "<think>\n", "</think>\n", "", "<|im_end|>\n<|im_start|>user\nThanks! Now 99?<|im_end|>"),
    ("llama3", "", "", "", "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n12345"),
    (
        "sky_t1",
        "<|begin_of_thought|>\n\n",
        "\n\n<|end_of_thought|>\n\n<|begin_of_solution|>\n\n",
        "",
        "\n\n<|end_of_solution|>",
    ),
    ("gemma", "", "", "", "<end_of_turn>\n<start_of_turn>user\n77<end_of_turn>"),
    ("mistral", "[THINK]", "[/THINK]", "", "</s>"),
    ("kimi", "\u25c1think\u25b7", "\u25c1/think\u25b7", "", "<|im_end|>"),
    ("seed", "<seed:think>", "</seed:think>", "", "<seed:eos>"),
    (
        "harmony",
        "<|channel|>analysis<|message|>",
        "<|end|><|start|>assistant<|channel|>final<|message|>",
        "",
        "<|return|>",
    ),
    ("reasoning_tag", "<reasoning>", "</reasoning>\n", "<answer>", "</answer>"),
    ("cohere", "<|START_THINKING|>", "<|END_THINKING|><|START_RESPONSE|>", "", "<|END_RESPONSE|><|END_OF_TURN_TOKEN|>"),
    ("eos_pair", "", "", "", "</s><s>"),
    ("unknown_tokens", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>", "<|x_y|>", "<|endoftext|>"),
]
FORMS = [
    ("boxed", lambda a: f"So the final answer is $\\boxed{{{a}}}$."),
    ("answer_line", lambda a: f"**Answer:** {a}"),
    ("sentence", lambda a: f"Therefore, the total number of marbles is {a}."),
]


def grade(response: str, gold: str) -> float:
    return V.verify(GradeInput("", response), P, V.prepare(P, gold)).score


@pytest.mark.parametrize("template", TEMPLATES, ids=[t[0] for t in TEMPLATES])
@pytest.mark.parametrize("form", FORMS, ids=[f[0] for f in FORMS])
def test_every_template_reads_the_final_answer(template: tuple[str, ...], form: tuple[str, object]) -> None:
    _, t_open, t_close, before, after = template
    write = form[1]
    assert callable(write)
    # The thinking holds a different candidate: it must neither win nor hedge.
    thinking = "Let me try: maybe it is \\boxed{41}? No, recompute: 6 * 7 = 42."
    right = f"{t_open}{thinking}{t_close}{before}{write('42')}{after}"
    wrong = f"{t_open}{thinking.replace('41', '42').replace('= 42', '= 41')}{t_close}{before}{write('41')}{after}"
    assert grade(right, "42") == 1.0, right
    assert grade(wrong, "42") == 0.0, wrong


@pytest.mark.parametrize("template", TEMPLATES, ids=[t[0] for t in TEMPLATES])
def test_a_turn_the_model_wrote_for_the_user_is_not_read(template: tuple[str, ...]) -> None:
    _, t_open, t_close, before, after = template
    text = f"{t_open}thinking{t_close}{before}The answer is 5.{after}"
    assert "99" not in assistant_text(text) and "12345" not in assistant_text(text)
    assert "77" not in assistant_text(text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["<|reserved_special_token_7|>", "<|begin_of_solution|>", "<|end_of_solution|>", "<|x|>"]),
        min_size=1,
        max_size=4,
    ),
    st.integers(0, 3),
)
def test_an_unknown_token_separates_and_never_ends_the_answer(tokens: list[str], where: int) -> None:
    words = ["We", "compute", "carefully.", "The answer is $\\boxed{42}$."]
    words.insert(where, "".join(tokens))
    text = " ".join(words)
    assert grade(text, "42") == 1.0
    assert grade(text, "43") == 0.0


@pytest.mark.parametrize(
    ("text", "own"),
    [
        ("4<|im_end|>\n<|im_start|>user\nmore", "4"),
        ("<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nq?<|im_end|>\n<|im_start|>assistant\n5<|im_end|>", "\n5"),
        ("<|im_end|>\n\nSo 5", "\n\nSo 5"),
        ("<think>reason<|im_end|><|im_start|>user\nhi", "<think>reason\n"),
        ("[THINK]x[/THINK]ans", "<think>x</think>ans"),
        ("a <| b", "a <| b"),
        # A close ends only its own family's thinking, whatever its case.
        ("<think>a</thinking>b[/THINK]c</think>d", "<think>a\nb\nc</think>d"),
        ("[THINK]a</think>b[/THINK]c", "<think>a\nb</think>c"),
        ("[THINK]a</think>b[/think]c", "<think>a\nb\nc"),
        ("<|channel|>analysis<|message|>a</think>b<|channel|>final<|message|>c", "<think>a\nb</think>c"),
        ("<think>a<|channel|>final<|message|>b</think>c", "<think>a\nb</think>c"),
        # Matched in ASCII only: a Kelvin sign is not a `k`.
        ("<think>a</thin\u212a>b</think>c", "<think>a</thin\u212a>b</think>c"),
        ("no tokens", "no tokens"),
    ],
)
def test_assistant_text(text: str, own: str) -> None:
    assert assistant_text(text) == own


@pytest.mark.parametrize(
    ("text", "own"),
    [
        ("plan</think>answer", "<think>plan</think>answer"),
        ("<|im_start|>assistant\nplan</think>answer", "<think>\nplan</think>answer"),
        ("<|assistant|>plan</think>answer", "<think>plan</think>answer"),
        ("<|start_header_id|>assistant<|end_header_id|>\n\nplan</think>a", "\n<think>\n\nplan</think>a"),
        ("<|im_start|>assistant\n</think>answer", "\n<think></think>answer"),
        # The thinking is opened where the model's turn begins, not in a turn before it.
        ("<|im_start|>user\nq</think><|im_end|><|im_start|>assistant\np</think>a", "<think>\np</think>a"),
    ],
)
def test_primed_thinking_opens_where_the_models_turn_begins(text: str, own: str) -> None:
    assert assistant_text(text, primed=True) == own


@pytest.mark.parametrize(
    ("text", "listed"),
    [
        ("plain", [Turn(None, "plain", True)]),
        ("a<|im_end|>\n", [Turn(None, "a", True)]),
        ("a<|im_end|>b", [Turn(None, "a", True), Turn(None, "b", True)]),
        ("<|im_start|>system\ns<|im_end|><|im_start|>assistant\na",
         [Turn("system", "\ns", False), Turn("assistant", "\na", True)]),
        ("[INST]q[/INST]a</s>", [Turn("user", "q", False), Turn("assistant", "a", True)]),
        ("<|channel|>analysis<|message|>r<|end|><|start|>assistant<|channel|>final<|message|>a<|return|>",
         [Turn("assistant", "<think>r\n</think>a", True)]),
    ],
)  # fmt: skip
def test_turns_lists_every_turn_with_text(text: str, listed: list[Turn]) -> None:
    assert list(turns(text)) == listed


@pytest.mark.parametrize(
    "text",
    [
        "<|" * 200_000,
        "<think>a<|end|>" + "<|start|>" * 100_000,
        "<think>a<|end|>" + "<|start|>assistant" * 50_000,
        "<s>a " * 100_000,
        "<|a" * 100_000,
        "<|" + "a" * 400_000,
        "<think>" * 100_000,
        "[/INST" * 50_000,
    ],
)
def test_linear_on_hostile_text(text: str) -> None:
    assert len(assistant_text(text)) <= len(text)
