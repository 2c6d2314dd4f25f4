"""The reading rules of math round 3, each tried with many variants, on right and on
wrong answers alike: a leniency that reads a right answer must not reward a wrong one."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.math import MathParams, MathVerifier

V = MathVerifier()
P = MathParams()


def score(response: str, gold: str, prompt: str = "") -> float:
    return V.verify(GradeInput(prompt, response), P, V.prepare(P, gold)).score


MARKERS = [
    "Answer:",
    "**Answer**:",
    "**Answer:**",
    "Final Answer:",
    "The answer is",
    "The final answer is",
    "Ответ:",
    "Ответ :",
    "答案：",
    "答案:",
    "【答案】",
    "故答案为",
    "所以答案是",
    "最终答案：",
    "答：",
    "Réponse :",
    "Réponse:",
    "Respuesta:",
    "Antwort:",
    "Risposta:",
    "Resposta:",
    "Jawaban:",
    "Đáp án:",
]
ENDS = ["", ".", "。", " .", "\n", "!"]


@pytest.mark.parametrize(("marker", "end"), list(itertools.product(MARKERS, ENDS)))
def test_answer_markers_in_every_language(marker: str, end: str) -> None:
    work = "Сначала посчитаем 3 + 4 = 7, затем 7 * 6 = 42.\n"
    assert score(f"{work}{marker} 42{end}", "42") == 1.0
    assert score(f"{work}{marker} 41{end}", "42") == 0.0


VERBS = ["is", "costs", "has", "equals", "comes to", "totals", "will be", "needs", "takes", "makes"]
TRAILERS = ["", " total", " in all", " dollars", " apples"]


@pytest.mark.parametrize(("verb", "trailer"), list(itertools.product(VERBS, TRAILERS)))
def test_a_closing_sentence_states_its_value(verb: str, trailer: str) -> None:
    for lead in ("So, each uniform", "Therefore the whole trip", "**In the end, the box"):
        assert score(f"Some work: 100 + 50 = 150.\n\n{lead} {verb} $150{trailer}.", "150") == 1.0
        assert score(f"Some work: 100 + 49 = 149.\n\n{lead} {verb} $149{trailer}.", "150") == 0.0


@pytest.mark.parametrize(
    ("tail", "right"),
    [
        ("36 (without quotes)", True),
        ("36, which is the number of ways", True),
        ("36 ways to arrange them", True),
        ("36 kcal m^-2 yr^-1", True),
        ("0.693, using base 2 logarithm", False),  # the 2 of the remark is no answer
        ("36 and 37", False),
        ("36 or 37", False),
        ("36 over 2", False),
    ],
)
def test_the_value_before_a_remark(tail: str, right: bool) -> None:
    gold = "36" if not tail.startswith("0.693") else "2"
    assert score(f"Work.\n\nAnswer: {tail}", gold) == (1.0 if right else 0.0)


REVISIONS = [
    "Hmm, on reflection that contradicts clue 3.",
    "Wait, let me recheck the second statement.",
    "But if Angela lied, statement two fails; re-examining the clues again,",
    "\n\nLet me go through the clues once more, in order. Clue 1 says the culprit was not in the library, "
    "clue 2 puts Evelyn there alone, and clue 3 rules out everyone else.",
]


@pytest.mark.parametrize("between", REVISIONS)
def test_a_later_box_revises_an_earlier_one(between: str) -> None:
    text = f"So it must be \\boxed{{Angela}}. {between} So the culprit is \\boxed{{Evelyn}}."
    assert score(text, "Evelyn") == 1.0
    assert score(text, "Angela") == 0.0


@pytest.mark.parametrize("joint", [" or ", ", ", " and maybe ", " (or possibly "])
def test_boxes_offered_together_are_a_hedge(joint: str) -> None:
    assert score(f"The answer is \\boxed{{3}}{joint}\\boxed{{4}}", "4") == 0.0
    assert score(f"The answer is \\boxed{{4}}{joint}\\boxed{{3}}", "4") == 0.0


@pytest.mark.parametrize(
    ("answer", "gold", "right"),
    [
        ("\\pm 1, \\pm 7", "-7, -1, 1, 7", True),
        ("\\pm 1, \\pm 7", "1, 7", False),
        ("\\pm 2", "2", False),
        ("\\pm 2", "-2, 2", True),
        ("12^{\\mathrm{th}}\\text{ grade}", "12", True),
        ("3^{rd}", "3", True),
        ("21st", "21", True),
        ("21st", "22", False),
    ],
)
def test_forms_of_a_boxed_value(answer: str, gold: str, right: bool) -> None:
    assert score(f"Thus $\\boxed{{{answer}}}$.", gold) == (1.0 if right else 0.0)


@pytest.mark.parametrize(
    "sentence",
    [
        "So there are 3! = 6 arrangements of the digits 9, 8 and 7.",
        "Hence we get 6 arrangements in total.",
        "The number of arrangements is $3! = 6$.",
    ],
)
def test_a_final_sentence_with_other_numbers_around_its_answer(sentence: str) -> None:
    assert score(sentence, "6") == 1.0
    assert score(sentence.replace("6", "5"), "6") == 0.0


@pytest.mark.parametrize("joint", [" and ", ", ", " or "])
def test_two_values_in_a_final_sentence_are_both_read(joint: str) -> None:
    assert score(f"The roots are $5${joint}$1$.", "5") == 0.0
    assert score(f"The roots are $5${joint}$1$.", "1, 5") == 1.0


@pytest.mark.parametrize(
    "wrap",
    [
        '{{"reasoning": "6 * 7", "answer": "{a}"}}',
        '```json\n{{\n  "reasoning": "so \\(x\\) is it",\n  "answer": "{a}"\n}}\n```',
        '{{"reasoning": "We get \\frac{{1}}{{2}}\nthen", "answer": {a}}}',
        'Here you go:\n{{"answer": "{a}", "confidence": 0.9}}',
    ],
)
def test_the_answer_field_of_a_json_reply(wrap: str) -> None:
    assert score(wrap.format(a="42"), "42") == 1.0
    assert score(wrap.format(a="41"), "42") == 0.0


CHOICE_PROMPT = "Which is it?\nA. 12\nB. 800\nC. 7\nD. 15"
CHOICE_RIGHT = [
    "The answer is (B).",
    "Answer: (B) 800",
    "选项为 B",
    "答案：B",
    "B",
    "(B)",
    "**B**",
    "\\boxed{B}",
    "\\boxed{(b)}",
    "The correct option is B.",
    "So the price is \\boxed{800}.",
    "正确答案是B。",
]
CHOICE_WRONG = ["The answer is (C).", "B or C", "The answer is B or C", "None of the options is right.", "\\boxed{7}"]


@pytest.mark.parametrize("response", CHOICE_RIGHT)
def test_a_multiple_choice_answer_names_its_option(response: str) -> None:
    assert score(f"Working through it...\n\n{response}", "B", CHOICE_PROMPT) == 1.0


@pytest.mark.parametrize("response", CHOICE_WRONG)
def test_a_wrong_or_hedged_option_is_wrong(response: str) -> None:
    assert score(f"Working through it...\n\n{response}", "B", CHOICE_PROMPT) == 0.0


def test_restating_the_question_is_no_answer() -> None:
    prompt = "Simplify $\\tan 100^\\circ + 4 \\sin 100^\\circ.$"
    assert score("\\boxed{\\tan 100^\\circ + 4 \\sin 100^\\circ}", "-\\sqrt{3}", prompt) == 0.0
    assert score("\\boxed{-\\sqrt{3}}", "-\\sqrt{3}", prompt) == 1.0
    # A number the question also names is still an answer.
    assert score("\\boxed{6}", "6", "What is $2 \\cdot 3$ if $x = 6$?") == 1.0


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.integers(0, 11))
def test_a_repeated_answer_cut_by_the_length_limit(repeats: int, cut: int) -> None:
    line = "The answer is 125.\n"
    text = "Work.\n" + line * repeats + line[:cut]
    assert score(text, "125") == 1.0
    assert score(text.replace("125", "124"), "125") == 0.0


@pytest.mark.parametrize("sep", [" ", "\n", "\n\n"])
@pytest.mark.parametrize("cut", range(1, 18))
def test_a_repeat_cut_inside_its_value(sep: str, cut: int) -> None:
    sentence = "The answer is 125."
    text = "Work." + (sep + sentence) * 3 + sep + sentence[:cut]
    assert score(text, "125") == 1.0
    assert score(text.replace("125", "124"), "125") == 0.0


@pytest.mark.parametrize(
    ("response", "right"),
    [
        ("Answer: \\boxed{86+42=128}.", True),
        ("Answer: \\boxed{86+41=127}.", False),
        ("So the total is $<<45000=45000>>45000.", True),
        ("Therefore, the total is $<<45001=45001>>45001.", False),
        ("Answer:\n\n128 apples remained.", True),
        ("Answer:\n\n127 apples remained.", False),
        ("So the answer should be $128. \n\nI think that's solid. The key is the $90 fee.", True),
        ("128 glasses are left.", True),
        ("127 glasses and 1 plate are left.", False),
    ],
)
def test_gsm8k_shaped_endings(response: str, right: bool) -> None:
    gold = "45000" if "45" in response else "128"
    assert score(response, gold) == (1.0 if right else 0.0)


@pytest.mark.parametrize("op", ["-", "+", "\\times", "x", "="])
def test_dollar_signs_are_currency_not_math(op: str) -> None:
    text = f"The answer is $32,400 {op} $24,000 = $8,400."
    result = {"-": "8400", "+": "8400", "\\times": "8400", "x": "8400", "=": "8400"}[op]
    assert score(text, result) == 1.0
    assert score(text, "32400") == 0.0


# The red team's classes (issue 29 review): each with its variants.
EMPTY_SETS = ["\\emptyset", "\\varnothing", "\\{\\}", "\\O", "\\{\\}, \\{\\}", "x=\\{\\}"]
ANY_GOLDS = ["5", "-\\frac{3}{7}", "\\sqrt2", "x^2+1", "y=2x+1", "50\\%", "45^\\circ", "1, 2", "(1, 2)"]


@pytest.mark.parametrize(("empty", "gold"), list(itertools.product(EMPTY_SETS, ANY_GOLDS)))
def test_an_empty_set_equals_no_value(empty: str, gold: str) -> None:
    assert score(f"\\boxed{{{empty}}}", gold) == 0.0


@pytest.mark.parametrize(
    "answer",
    ["2\\begin{pmatrix}1\\end{pmatrix}", "x\\begin{pmatrix}1\\end{pmatrix}", "not \\begin{pmatrix}a(A)\\end{pmatrix}"],
)
@pytest.mark.parametrize("gold", ["5", "x", "3.14"])
def test_an_answer_sympy_cannot_evaluate_is_wrong_not_a_crash(answer: str, gold: str) -> None:
    assert score(f"Answer: \\boxed{{{answer}}}", gold) == 0.0


@pytest.mark.parametrize(
    "text",
    [
        '{{"reasoning": "so \\\\boxed{{5}}", "answer": "{a}"}}',
        '{{"reasoning": "<answer>5</answer>", "answer": "{a}"}}',
        '```json\n{{"reasoning": "The answer is 5.", "answer": "{a}"}}\n```',
    ],
)
def test_a_json_reply_is_graded_on_its_answer_field(text: str) -> None:
    assert score(text.format(a="7"), "5") == 0.0
    assert score(text.format(a="7"), "7") == 1.0


@pytest.mark.parametrize(
    "response",
    ["\\boxed{A} or \\boxed{B}", "\\boxed{A B C D}", "A/B", "Answer: A; B", "The answer is (A) or (B).", "A, B"],
)
@pytest.mark.parametrize("gold", ["A", "B"])
def test_several_options_named_is_a_hedge(response: str, gold: str) -> None:
    assert score(f"Thinking...\n\n{response}", gold, CHOICE_PROMPT) == 0.0


@pytest.mark.parametrize(
    "response",
    [
        "The answer is 5 (maybe 6).",
        "The answer is either 5 or 6.",
        "Ответ: 5 (или 6)",
        "Réponse : 5 (ou 6)",
        "Antwort: 5 (oder 6)",
        "5 is the answer, or 6.",
        "Therefore, Jack got 5 or 6 emails.",
    ],
)
@pytest.mark.parametrize("gold", ["5", "6"])
def test_a_prose_hedge_is_wrong(response: str, gold: str) -> None:
    assert score(response, gold) == 0.0


@pytest.mark.parametrize("word", ["million", "thousand", "billion", "hundred", "dozen"])
def test_a_magnitude_word_is_no_unit(word: str) -> None:
    assert score(f"\\boxed{{5 \\text{{ {word}}}}}", "5") == 0.0
    assert score(f"The answer is 5 {word}.", "5") == 0.0


@pytest.mark.parametrize("heading", ["#### 2. Double it", "#### Step 1: read", "#### Part 3 setup"])
def test_a_markdown_heading_is_not_gsm8k(heading: str) -> None:
    text = f"{heading}\nWe double 7.\n\n**Answer: 14**"
    assert score(text, "14") == 1.0


@pytest.mark.parametrize(
    ("prompt", "answer", "gold"),
    [
        ("Which is larger, $\\frac23$ or $\\frac35$?", "\\frac23", "\\frac{2}{3}"),
        ("The temperature fell to $-3$ degrees. What was it?", "-3", "-3"),
        ("Is $\\sqrt{2}$ rational?", "\\sqrt{2}", "\\sqrt2"),
    ],
)
def test_a_value_the_question_names_is_still_an_answer(prompt: str, answer: str, gold: str) -> None:
    assert score(f"\\boxed{{{answer}}}", gold, prompt) == 1.0


def test_the_cut_repeat_on_one_line() -> None:
    assert score("The answer is 125. The answer is 12", "125") == 1.0
    assert score("The answer is 124. The answer is 12", "125") == 0.0


def test_an_earlier_equation_is_no_second_try() -> None:
    assert score("Perhaps $x = 3$.\nSo x is 4.", "x = 3") == 0.0


@pytest.mark.parametrize(
    ("answer", "gold"), [("x + 10^{-16}", "x"), ("x(1 + 10^{-18})", "x"), ("\\pi + 10^{-12}", "\\pi")]
)
def test_a_tiny_difference_is_a_difference(answer: str, gold: str) -> None:
    assert score(f"\\boxed{{{answer}}}", gold) == 0.0


@pytest.mark.parametrize("retraction", ["Hmm, actually", "Wait, no:", "Oops, a mistake;", "Actually, correction:"])
def test_an_answer_line_taken_back_at_once(retraction: str) -> None:
    text = f"The answer is 5. {retraction} the total is 6."
    assert score(text, "6") == 1.0
    assert score(text, "5") == 0.0


@pytest.mark.parametrize(
    "response",
    [
        "\\[G(y_1, y_2) = P(X_1 \\leq y_1)\\]",  # a function named G, not option G
        "A. 12\nB. 800\nC. 7\nD. 15\nE. 9\nF. 1\nG",  # a listing cut at its next letter
        "Let me see: if $x = 3$ then the circle covers",  # a cut rollout's last equation
    ],
)
def test_no_option_is_named_by_accident(response: str) -> None:
    prompt = "Which?\nA. 12\nB. 800\nC. 7\nD. 3\nE. 9\nF. 1\nG. 2"
    for gold in "DG":
        assert score(response, gold, prompt) == 0.0


@pytest.mark.parametrize(
    "response",
    [
        "So the line is $y = 2x + 1$ or y = 3x - 1.",
        "Perhaps $y = 2x + 1$; so y = 3x - 1.",
    ],
)
def test_one_sentence_is_not_two_tries_at_an_equation(response: str) -> None:
    assert score(response, "y = 2x + 1") + score(response, "y = 3x - 1") <= 1.0


@pytest.mark.parametrize(
    "response",
    [
        "Therefore the answer is not 5.",
        "5 is not the answer.",
        "The answer cannot be 5.",
        "So at least 5 apples.",
        "Therefore, there are more than 5 apples.",
        "Is 5 the answer?",
        "I couldn't solve it. Sorry, I give up after 5 attempts.",
        "See equation 5.",
    ],
)
def test_a_negation_bound_question_or_give_up_states_no_value(response: str) -> None:
    assert score(response, "5") == 0.0


@pytest.mark.parametrize(
    "box",
    ["B \\text{ or } C", "B \\lor C", "B + C", "B-C", "B \\quad C", "B\\cup C", "B, possibly C", "A \\& B"],
)
def test_options_offered_together_in_a_box_are_a_hedge(box: str) -> None:
    prompt = "Which? (A) 1 (B) 2 (C) 3 (D) 4"
    for gold in "ABC":
        assert score(f"So \\boxed{{{box}}}", gold, prompt) == 0.0
