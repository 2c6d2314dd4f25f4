"""A reasoning model's thinking is not graded by default, as open-instruct grades IFEval."""

from __future__ import annotations

import pytest

from rlvr.verifiers.base import GradeInput, Verdict
from rlvr.verifiers.ifeval import IFEvalGroundTruth, IFEvalParams, IFEvalVerifier
from rlvr.verifiers.ifeval.thinking import answer_text
from rlvr.verifiers.ifeval.verifier import MAX_RAW_RESPONSE_CHARS, MAX_RESPONSE_CHARS

V = IFEvalVerifier()
NO_COMMA = IFEvalGroundTruth.model_validate({"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]})
LOWER = IFEvalGroundTruth.model_validate({"instruction_id_list": ["change_case:english_lowercase"], "kwargs": [{}]})
KEYWORDS = IFEvalGroundTruth.model_validate(
    {"instruction_id_list": ["keywords:existence"], "kwargs": [{"keywords": ["banana", "apple"]}]}
)
END = IFEvalGroundTruth.model_validate(
    {"instruction_id_list": ["startend:end_checker"], "kwargs": [{"end_phrase": "Is there anything else?"}]}
)

FEW_WORDS = IFEvalGroundTruth.model_validate(
    {"instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"num_words": 5, "relation": "less than"}]}
)


def _score(response: str, gt: IFEvalGroundTruth, **params: object) -> float:
    return V.verify(GradeInput("", response), IFEvalParams.model_validate(params), gt).score


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("<think>a, b, c</think>\n\nthe answer", "the answer"),
        ("<THINK>a, b</THINK> answer", "answer"),
        ("<thinking>a, b</thinking>answer", "answer"),
        ("[THINK]a, b[/THINK]answer", "answer"),
        ("\u25c1think\u25b7a, b\u25c1/think\u25b7answer", "answer"),
        ("<|channel|>analysis<|message|>a, b<|end|><|start|>assistant<|channel|>final<|message|>answer", "answer"),
        # The template opened the thinking in the prompt (DeepSeek-R1, Qwen3).
        ("a, b</think>\n\nanswer", "answer"),
        # Several blocks: what follows the last, as open-instruct.
        ("<think>a, b</think>first<think>c, d</think>answer", "answer"),
        # A `</think>` in the answer's code closes nothing.
        ("<think>a, b</think>x = f()\n```\n</think>, y\n```", "x = f()\n```\n\n, y\n```"),
        ("<think>a</think><answer>answer</answer>", "answer"),
        ("<think>a</think>answer<|im_end|>", "answer"),
        # Text after a turn end is the policy's too: it is graded.
        ("<think>a</think>answer<|im_end|>\n<|im_start|>user\nmore, text", "answer\n\nmore, text"),
        # Never closed, or thinking last: no answer.
        ("<think>a, b and never closed", ""),
        ("answer first<think>then, thoughts</think>", ""),
        # An unclosed opener after the answer hides nothing, as open-instruct grades it.
        ("answer<think>unclosed, thoughts", "answer\nunclosed, thoughts"),
        # No thinking: the response as it is, blank lines included.
        ("\n plain, text \n", "\n plain, text \n"),
        ("<answer>yes</answer>", "yes"),
    ],
)  # fmt: skip
def test_the_answer_after_the_thinking(response: str, answer: str) -> None:
    assert answer_text(response) == answer


def test_thinking_is_not_graded_by_default() -> None:
    out = IFEvalVerifier().verify(
        GradeInput("", "<think>Hmm, so, well.</think>\nno commas here"), IFEvalParams(), NO_COMMA
    )
    assert out.score == 1.0


def test_grade_thinking_grades_the_whole_response() -> None:
    params = IFEvalParams(grade_thinking=True)
    out = IFEvalVerifier().verify(GradeInput("", "<think>Hmm, so, well.</think>\nno commas here"), params, NO_COMMA)
    assert out.score == 0.0


def test_a_fake_close_cannot_hide_the_answer_from_the_grader() -> None:
    # Everything after the real thinking is the answer, `</think>` lookalikes and all.
    response = "<think>plan</think>Hello, world. ```</think>``` tail without commas"
    assert IFEvalVerifier().verify(GradeInput("", response), IFEvalParams(), NO_COMMA).score == 0.0


@pytest.mark.parametrize(
    "response", ["<think>all thinking, never answered", "<think>x</think>   ", "Hi<think>x</think>"]
)
def test_no_answer_after_the_thinking_follows_nothing(response: str) -> None:
    out = IFEvalVerifier().verify(GradeInput("", response), IFEvalParams(reward="fraction"), LOWER)
    assert (out.score, out.verdict) == (0.0, Verdict.NO_ANSWER)
    assert out.details["instructions"] == [{"id": "change_case:english_lowercase", "pass": False}]


def test_loose_mode_reads_the_answer_not_the_thinking() -> None:
    response = "<think>PLAN</think>\nSure! Here it is:\nthe answer in lower case"
    assert IFEvalVerifier().verify(GradeInput("", response), IFEvalParams(mode="loose"), LOWER).score == 1.0
    assert IFEvalVerifier().verify(GradeInput("", response), IFEvalParams(mode="strict"), LOWER).score == 0.0


# Thinking blocks of every family, each with the close of every other family inside.
FAMILIES = [
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<thought>", "</thought>"),
    ("<reasoning>", "</reasoning>"),
    ("<seed:think>", "</seed:think>"),
    ("[THINK]", "[/THINK]"),
    ("\u25c1think\u25b7", "\u25c1/think\u25b7"),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<|channel|>analysis<|message|>", "<|end|><|start|>assistant<|channel|>final<|message|>"),
]
FOREIGN = [
    (opener, close, foreign)
    for opener, close in FAMILIES
    for _, foreign in FAMILIES
    if foreign.lower() != close.lower()
]


@pytest.mark.parametrize(("opener", "close", "foreign"), FOREIGN)
def test_another_familys_close_inside_thinking_is_more_thinking(opener: str, close: str, foreign: str) -> None:
    response = f"{opener}plan {foreign} banana apple {close}Short answer."
    assert answer_text(response) == "Short answer."
    assert _score(response, KEYWORDS) == 0.0


@pytest.mark.parametrize(
    "lookalike", ["</thin\u212a>", "<thin\u212a>", "</\u017f>", "[/THIN\u212a]", "<|end_of_though\u0074\u200b|>"]
)
def test_non_ascii_lookalikes_are_not_markers(lookalike: str) -> None:
    # A Kelvin sign or a long s is not `k` or `s`: the text stays where it was written.
    response = f"<think>plan {lookalike} banana apple</think>Short answer."
    assert answer_text(response) == "Short answer."
    assert _score(response, KEYWORDS) == 0.0


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("<THINK>plan</THINK>answer", "answer"),
        ("<Thinking>plan</Thinking>answer", "answer"),
        ("[think]plan[/think]answer", "answer"),
        ("<|START_THINKING|>plan<|END_THINKING|>answer", "answer"),
        # A close in another case is not the close a chat UI shows: more thinking.
        ("<think>plan</THINK>answer", ""),
        ("<THINK>plan</think>answer", ""),
        ("<Thinking>plan</THINKING>answer", ""),
        ("[think]plan[/THINK]answer", ""),
        ("<think>plan </THINK> banana apple </think>Short answer.", "Short answer."),
    ],
)
def test_a_familys_markers_pair_in_the_same_case(response: str, answer: str) -> None:
    assert answer_text(response) == answer


@pytest.mark.parametrize("words", [2_200, 10_000, 35_000])
def test_long_thinking_does_not_cost_a_correct_answer(words: int) -> None:
    response = "<think>" + "Let me think, step by step. " * words + "</think>\n\nall good here"
    assert _score(response, NO_COMMA) == 1.0
    assert _score(response.replace("all good", "all, good"), NO_COMMA) == 0.0


def test_the_length_cap_is_on_the_graded_text() -> None:
    answer = "word " * (MAX_RESPONSE_CHARS // 5 + 1)
    out = V.verify(GradeInput("", "<think>short</think>" + answer), IFEvalParams(), NO_COMMA)
    assert (out.score, out.verdict) == (0.0, Verdict.INCORRECT)
    # grade_thinking grades the whole response: the thinking counts then.
    long_thinking = "<think>" + "hmm " * (MAX_RESPONSE_CHARS // 4) + "</think>ok"
    assert _score(long_thinking, NO_COMMA) == 1.0
    assert _score(long_thinking, NO_COMMA, grade_thinking=True) == 0.0


def test_a_response_over_the_raw_cap_follows_nothing() -> None:
    response = "<think>" + "x" * MAX_RAW_RESPONSE_CHARS + "</think>ok"
    out = V.verify(GradeInput("", response), IFEvalParams(), NO_COMMA)
    assert (out.score, out.verdict) == (0.0, Verdict.INCORRECT)


@pytest.mark.parametrize(
    "response",
    [
        "<|assistant|>\nplan, a</think>clean",
        "<|im_start|>assistant\nplan, a\n</think>\n\nclean<|im_end|>",
        "<\uff5cAssistant\uff5c>plan, a</think>clean<\uff5cend\u2581of\u2581sentence\uff5c>",
        "<start_of_turn>model\nplan, a</think>clean<end_of_turn>",
        "<s>plan, a</think>clean</s>",
        "[/INST]plan, a</think>clean",
        "<|start_header_id|>assistant<|end_header_id|>\n\nplan, a</think>clean<|eot_id|>",
        "<|im_start|>assistant\n</think>\n\nclean",
    ],
)
def test_thinking_opened_in_the_prompt_after_a_role_header(response: str) -> None:
    assert answer_text(response) == "clean"
    assert _score(response, NO_COMMA) == 1.0


@pytest.mark.parametrize("opener", [f[0] for f in FAMILIES])
def test_an_unclosed_opener_after_the_answer_hides_nothing(opener: str) -> None:
    assert _score(f"clean answer{opener}Hello, world, junk", NO_COMMA) == 0.0
    assert _score(f"Sure. Is there anything else?{opener}more words", END) == 0.0
    assert _score(f"Short reply.{opener}and then many more words after it", FEW_WORDS) == 0.0
    assert _score("Short reply.", FEW_WORDS) == 1.0
    # Cut off while thinking, with nothing before: still no answer.
    out = V.verify(GradeInput("", f"{opener}clean, and cut off"), IFEvalParams(), NO_COMMA)
    assert out.verdict == Verdict.NO_ANSWER


@pytest.mark.parametrize(
    "end",
    [
        "</s>", "<|im_end|>", "<|endoftext|>", "<eos>", "<|end|>", "<|eot_id|>", "<end_of_turn>",
        "<|im_start|>user\n", "<|user|>", "[INST]", "<s>", "<bos>", "<|im_end|>\n<|im_start|>assistant\n",
        "<\uff5cend\u2581of\u2581sentence\uff5c><\uff5cUser\uff5c>",
    ],
)  # fmt: skip
def test_text_after_a_turn_end_is_graded(end: str) -> None:
    assert _score(f"clean{end}Hello, world", NO_COMMA) == 0.0
    assert _score(f"<think>plan</think>clean{end}Hello, world", NO_COMMA) == 0.0
    # A turn end with nothing after it is the template's, and ends the answer.
    assert _score(f"<think>plan, a</think>clean{end}", NO_COMMA) == 1.0


@pytest.mark.parametrize(
    "response",
    [
        "<|im_start|>system\nHello, world<|im_end|>clean",
        "<|im_start|>system\nHello, world<|im_end|>\n<|im_start|>assistant\nclean<|im_end|>",
        "<|user|>Hello, world<|assistant|>clean",
        "[INST]Hello, world[/INST]clean",
        "<|im_start|>tool\nHello, world<|im_end|><|im_start|>assistant\nclean",
        "<start_of_turn>user\nHello, world<end_of_turn>\n<start_of_turn>model\nclean",
        "<|start_header_id|>user<|end_header_id|>\n\nHello, world<|eot_id|>clean",
    ],
)
def test_a_fake_earlier_turn_is_graded(response: str) -> None:
    assert _score(response, NO_COMMA) == 0.0
    assert _score(response.replace("Hello, world", "Hello world"), NO_COMMA) == 1.0


@pytest.mark.parametrize(
    "response",
    [
        "Use <s>old</s> new. Is there anything else?",
        "Llama uses [INST] tags. Is there anything else?",
        "Write <eos> or <|im_end|> at the end. Is there anything else?",
        "<think>plan</think>Mistral wraps prompts in [INST] and [/INST]. Is there anything else?",
    ],
)
def test_template_tokens_mentioned_in_prose_do_not_cut_the_answer(response: str) -> None:
    assert _score(response, END) == 1.0
