r"""Issue 11, classes 1, 2, 3 and 6: where the final answer is, answers with no box,
stray delimiters, and decimals for exact answers. Rows are (gold, response, verdict,
extraction method or None); each class has variants of its habit, and cases where the
rule must *not* fire (a wrong answer stays wrong)."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.math import MathParams, MathVerifier

C, I, N = "correct", "incorrect", "no_answer"  # noqa: E741  (short labels keep the rows readable)
V = MathVerifier()

Row = tuple[str, str, str, str | None]


def grade(gold: str, response: str, **params: Any) -> tuple[str, dict[str, Any]]:
    p = MathParams(**params)
    out = V.verify(GradeInput("", response), p, V.prepare(p, gold))
    return out.verdict.value, out.details


WHERE: list[Row] = [
    # An answer tag after the thinking wins over boxes inside it.
    ("13", r"<think>so \boxed{12}? no...</think><answer>13</answer>", C, "answer_tag"),
    ("12", r"<think>so \boxed{12}? no...</think><answer>13</answer>", I, "answer_tag"),
    ("13", r"<think>\boxed{12}</think>The final answer is $\boxed{13}$.", C, "boxed"),
    ("13", r"<think>\boxed{12}</think>The answer is 13.", C, "answer_line"),
    ("12", r"<think>we get \boxed{12}</think>", C, "boxed"),  # nothing after: the thinking is read
    # A marked final answer after a box is what the response states last.
    (
        "10455",
        r"so $\boxed{255}$ is the interest. Final Answer: The final answer is $10,455$.",
        C,
        "answer_line_after_box",
    ),
    (
        "255",
        r"so $\boxed{255}$ is the interest. Final Answer: The final answer is $10,455$.",
        I,
        "answer_line_after_box",
    ),
    ("18", "so \\boxed{17} is the count of apples\n#### 18", C, "gsm8k_after_box"),
    ("12", r"The answer is $\boxed{12}$. This answer is consistent with the constraints.", C, "boxed"),
    ("12", r"The answer is $\boxed{12}$. I hope the answer is correct.", C, "boxed"),
    ("x-2y+z-1=0", r"so $\boxed{x+y=0}$. Final Answer: The final answer is $x-2y+z-1=0$.", C, "answer_line_after_box"),
    # The answer ends where the model's turn ends.
    ("12", "Final Answer: the count is 12. I hope it is correct. <|im_start|>user\nThe answer is 13", C, None),
    ("2/3", "Thus the probability is 2/3 <|im_start|>user what is 1+1? <|im_start|>assistant 2", C, None),
    # Inequalities are kept whole, not cut at their `=`.
    (r"x \le 2", "Thus $x <= 2$ is our answer.", C, "math_span"),
    (r"x \neq 5", "The solution is $x != 5$", C, "final_sentence"),
    # A negated box is no answer.
    ("13", r"The answer is not \boxed{12}; it is 13.", C, "final_sentence_after_box"),
    ("12", r"The answer is not \boxed{12}; it is 13.", I, "final_sentence_after_box"),
    ("13", r"It isn't $\boxed{12}$. The answer is 13", C, "answer_line_after_box"),
    ("12", r"The answer is not \boxed{12}", N, "negated_box"),
    # A retracted last box gives way to the explicit statement after it.
    ("13", r"\boxed{12}. Wait, that is wrong. The answer is 13.", C, "answer_line_after_box"),
    ("12", r"\boxed{12}. Wait, that is wrong. The answer is 13.", I, "answer_line_after_box"),
    ("13", r"So \boxed{12}. Actually, I made a mistake: the total is 13.", C, "final_sentence_after_box"),
    ("12", r"\boxed{12}. Let me double-check: 3 \cdot 4 = 12. Yes.", C, "boxed"),
    ("12", r"\boxed{12}. Let me verify: 3 + 9 = 12.", C, "boxed"),  # an equation is no new answer
    # Hidden text does not count.
    ("12", r"<!-- \boxed{13} --> so \boxed{12}", C, "boxed"),
    ("13", r"<!-- \boxed{13} --> so \boxed{12}", I, "boxed"),
    ("12", r"\boxed{12} <!-- \boxed{13}", C, "boxed"),  # an unclosed comment hides the rest
    ("12", r"\boxed{12} {\color{white} \boxed{13}}", C, "boxed"),
    ("12", r"\boxed{12} \textcolor{white}{\boxed{13}}", C, "boxed"),
    ("12", r"\boxed{12} \phantom{\boxed{13}}", C, "boxed"),
    ("13", r"\boxed{\color{white}13} \boxed{12}", I, "boxed"),
    # A placeholder or empty box is neither an answer nor a hedge.
    ("12", r"Fill in $\boxed{\phantom{2}}$: the value is $\boxed{12}$.", C, "boxed"),
    ("12", r"Fill in $\boxed{}$: the value is $\boxed{12}$.", C, "boxed"),
    ("12", r"We get \boxed{12}. \boxed{ }", C, "boxed"),
    ("12", r"\boxed{}", N, None),
]

NO_BOX: list[Row] = [
    ("18", "3 + 15 = 18 apples.\n#### 18", C, "gsm8k"),
    ("18", "3 + 15 = 18 apples.\n#### 18.", C, "gsm8k"),
    ("18", "3 + 15 = 18 apples.\n#### $18", C, "gsm8k"),
    ("18", "3 + 15 = 19 apples.\n#### 19", I, "gsm8k"),
    ("18", "#### Step 1\nShe pays 18 dollars.\nA: 18", C, "answer_line"),
    ("18", "Q: how many?\nA: 18", C, "answer_line"),
    ("18", "Reasoning here.\nThe answer is 18", C, "answer_line"),
    ("18", "Reasoning here.\nThe final answer is: 18.", C, "answer_line"),
    ("18", "Reasoning here.\n**Answer:** 18", C, "answer_line"),
    ("18", "Reasoning here.\nThe answer is 17", I, "answer_line"),
    ("34", "Final Answer: The largest $n$ is 34.", C, "answer_line"),
    ("120", "Final Answer: The volume of $ABCDEFGH$ is 120. I hope it is correct.", C, "answer_line"),
    ("121", "Final Answer: The volume of $ABCDEFGH$ is 120. I hope it is correct.", I, "answer_line"),
    ("42", "Each side is 7 inches. The perimeter of the hexagon is 42 inches.", C, "final_sentence"),
    ("42", "So the total is $42$.", C, "final_sentence"),
    ("42", "Therefore, the number of apples she has left is 42.", C, "final_sentence"),
    ("41", "The perimeter of the hexagon is 42 inches.", I, "final_sentence"),
    (r"\frac{1}{8}", "So the probability is $3/24 = 1/8$", C, "final_sentence"),
    (r"\frac{1}{8}", r"Thus \[ \frac{3}{24} = \frac{1}{8} \]", C, "equation"),
    ("15", r"Hence \[ x = 15 \]", C, "equation"),
    ("16", r"Hence \[ x = 15 \]", I, "equation"),
    ("15", "<answer> 15", C, "answer_tag_unclosed"),
    ("15", "reasoning <answer>\n15\n", C, "answer_tag_unclosed"),
    ("14", "<answer> 15", I, "answer_tag_unclosed"),
    ("15", "Putting it together:\n\n$15$ marbles remain, as shown.", C, "math_span"),
    ("15", "We found $a$ and $b$.\n\nIn total we get $x$ and finally $15$ remain", C, "conclusion"),
    # An answer tag holding a worked paragraph: its last equation or statement.
    (
        "460",
        "</think> <answer> 40 hours x $10 / hour + 5 hours x 1.2 x $10/hour = $460. </answer>",
        C,
        "answer_tag+equation",
    ),
    ("18", r"<answer> She earns $2 \times (16 - 7) = $2 \times 9 = \$18 $. </answer>", C, "answer_tag+final_sentence"),
    (
        "57500",
        "<answer> Her total salary from both jobs is $35,000 + $22,500 = $57,500. </answer>",
        C,
        "answer_tag+final_sentence",
    ),
    (
        "57500",
        "<answer> Her total salary from both jobs is $35,000 + $22,500 = $57,000. </answer>",
        I,
        "answer_tag+final_sentence",
    ),
    ("18", "<answer> 18 eggs </answer>", C, "answer_tag"),
    # A response that is only its answer.
    ("14", "14", C, "bare"),
    ("20", "$20", C, "bare"),
    ("14", " 15\n", I, "bare"),
    ("2", "0.167 hours", I, "bare"),
    # Prose that states no value is no answer.
    ("4", "I hope it is correct.", N, None),
    ("4", "We need to compute 3+4", N, None),
    ("4", "The answer is \\boxed{4", N, None),
    ("4", "This is not 4", N, None),
]

STRAY: list[Row] = [
    ("15", r"<answer> 15 \\</answer>", C, "answer_tag"),
    ("15", r"<answer> 15 \</answer>", C, "answer_tag"),
    ("2401", r"<answer>\(2401</answer>", C, "answer_tag"),
    ("2401", r"<answer>2401\)</answer>", C, "answer_tag"),
    ("15", r"<answer>15 \]</answer>", C, "answer_tag"),
    ("15", r"<answer>\[15</answer>", C, "answer_tag"),
    ("15", r"<answer>$15</answer>", C, "answer_tag"),
    ("15", r"<answer>15}</answer>", C, "answer_tag"),
    ("15", r"<answer>**15**</answer>", C, "answer_tag"),
    (r"\frac{1}{2}", r"<answer>\(\frac{1}{2} \\</answer>", C, "answer_tag"),
    ("15", r"The answer is \(15", C, "answer_line"),
    ("15", r"The answer is 15 \]", C, "answer_line"),
    ("15", r"\boxed{15 \\}", C, "boxed"),
    ("16", r"<answer> 15 \\</answer>", I, "answer_tag"),
    (r"\{1,2\}", r"<answer>\{1, 2\} \\</answer>", C, "answer_tag"),  # set braces are kept
]


@pytest.mark.parametrize(("gold", "response", "verdict", "method"), WHERE + NO_BOX + STRAY)
def test_final_answer(gold: str, response: str, verdict: str, method: str | None) -> None:
    got, details = grade(gold, response)
    assert got == verdict, details
    if method is not None:
        assert details["extraction"] == method, details


@pytest.mark.parametrize(
    ("response", "verdict"),
    [
        (r"\boxed{18}", C),
        (r"<answer>18</answer>", C),
        ("<answer>18", N),
        ("#### 18", N),
        ("The answer is 18", N),
        ("The total is 18.", N),
        (r"<answer>\(18</answer>", C),
    ],
)
def test_strict_reads_only_boxes_and_tags(response: str, verdict: str) -> None:
    assert grade("18", response, extraction="strict")[0] == verdict


@pytest.mark.parametrize(
    ("gold", "answer", "default", "opted_in"),
    [
        (r"12\pi", "37.6991", I, C),  # within rel_tol 1e-6, accepted only when opted in
        (r"12\pi", "37.69911184307752", I, C),
        (r"\frac{1}{3}", "0.3333333", I, C),
        (r"\frac{1}{3}", "0.33", I, I),
        (r"\sqrt{2}", "1.41421356237", I, C),
        (r"\frac{\pi}{4}", "0.7853981634", I, C),
        (r"\frac{1}{2}", "0.5", C, C),
        ("2", "2.0", C, C),
        ("2", "2.000", C, C),
        ("-3", "-3.0", C, C),
        (r"\frac{3}{8}", "0.375", C, C),
        ("1500", r"1.5\times10^{3}", C, C),
        ("2.5", "2.50000001", C, C),  # a decimal gold keeps the tolerance
        ("2.5", "2.51", I, I),
        ("3.14", "3.14", C, C),
        ("0.25", r"\frac{1}{4}", C, C),
        (r"\frac{1}{7}", "0.142857", I, C),
        (r"\frac{1}{7}", "0.14285", I, I),
        (r"\frac{\pi}{2}", r"0.5\pi", C, C),
        (r"\frac{\pi}{10}", r"0.1\pi", C, C),
        (r"\frac{\pi}{10}", r"0.100001\pi", I, I),
        (r"50\%", "0.5", C, C),
        (r"\frac{1}{3}", r"0.\overline{3}", I, I),
    ],
)
def test_decimals_for_exact_golds(gold: str, answer: str, default: str, opted_in: str) -> None:
    response = f"so $\\boxed{{{answer}}}$"
    assert grade(gold, response)[0] == default
    assert grade(gold, response, numeric_tolerance=True)[0] == opted_in


def test_description_states_the_decimal_rule() -> None:
    assert "exactly equal" in MathVerifier.description
    assert "numeric_tolerance" in MathVerifier.description
