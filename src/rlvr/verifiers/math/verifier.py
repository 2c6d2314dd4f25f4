"""The `math` verifier: does the response's final answer equal the ground truth?

Extraction (`params.extraction`, default `auto`) is described in `extract.py`, the
equivalence stages in `compare.py`. The rules a grader must state:

- **Only the final answer counts**, but it must not hedge. Every boxed answer that
  is not retracted by later text ("wait", "actually", "mistake", ...) is a
  candidate, and every candidate must equal the ground truth. So
  `\\boxed{3} or \\boxed{4}` is incorrect, and `\\boxed{3}. Wait, I made an error
  ... \\boxed{4}` is graded on 4 alone. Inside the final answer, a list of
  different values (`3, 4`, `3 \\text{ or } 4`, `\\pm 2`) is incorrect when the
  ground truth is a single value.
- **Decimals for exact answers**. When the ground truth is exact (an
  integer, fraction, radical, `\\pi`, ...), a decimal answer must have exactly its
  value: `0.5` is `1/2` and `2.0` is `2`, but `0.3333333` is not `1/3` and `37.6991`
  is not `12\\pi`, so a policy cannot learn to compute numerically instead of
  solving. When the ground truth is itself a decimal, the answer compares with
  relative tolerance `params.rel_tol` (default 1e-6). `params.numeric_tolerance=true`
  applies `rel_tol` to decimal answers whatever the ground truth (the rule of
  versions before 2.0).
- **Percent**: where either side has `\\%`, the bare number also matches (`50\\%`
  vs `50`), as does the value (`50\\%` vs `0.5`).
- **Limits**: an answer longer than `params.max_answer_chars` (default 1,000) and a
  response longer than `params.max_response_chars` are incorrect without parsing.
  Oversized values (`9^{9^{9^{9}}}`, `1000000!`) and deep nesting are refused
  before sympy evaluates them. The dispatcher's kill at `default_deadline_s` is the
  backstop that turns anything else into `timeout`.

Ground truth may be a bare answer, a `$...$` span, or a whole solution ending in
`\\boxed{}`; it is extracted once per (params, ground truth) by `prepare` (the
worker caches that) and also through a process-wide LRU keyed by the gold string.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlvr.verifiers.base import GradeInput, Outcome, Signal, Verdict
from rlvr.verifiers.math import budget, choices, compare, fallbacks, symbolic
from rlvr.verifiers.math.compare import Decision, View, decide_cached, view
from rlvr.verifiers.math.extract import Extracted, Mode, answer_region, extract_answer, extract_gold
from rlvr.verifiers.math.normalize import normalize
from rlvr.verifiers.math.structure import Relation, Scalar, Seq, Union

DEFAULT_REL_TOL = 1e-6
DEFAULT_MAX_ANSWER_CHARS = 1000
DEFAULT_MAX_RESPONSE_CHARS = 400_000
# Half the default deadline: an item that needs more is graded `timeout` by us,
# well before the dispatcher has to kill the worker.
DEFAULT_SYMBOLIC_BUDGET_S = 1.0
# Earlier candidates beyond this many are not compared one by one: that many
# different boxed answers is a hedge whatever they are.
MAX_CANDIDATES = 8


class MathParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    extraction: Mode = Field(
        "auto",
        description=(
            "Where the final answer is read from: `auto` (boxes, tags, then answer lines, final "
            "sentences, equations, math spans), `strict` (boxes and <answer> tags only), `boxed`, "
            "`answer_tag`, `answer_line` (DAPO's last-line `Answer: X`)."
        ),
    )
    rel_tol: float = Field(
        DEFAULT_REL_TOL, ge=0.0, le=0.1, description="Relative tolerance for answers given as decimals."
    )
    numeric_tolerance: bool = Field(
        False,
        description=(
            "Compare a decimal answer with `rel_tol` even when the ground truth is exact "
            "(`0.3333333` for 1/3, `37.6991` for 12\\pi); by default it must equal it exactly."
        ),
    )
    max_answer_chars: int = Field(
        DEFAULT_MAX_ANSWER_CHARS, ge=1, le=100_000, description="Longer extracted answers are incorrect."
    )
    max_response_chars: int = Field(
        DEFAULT_MAX_RESPONSE_CHARS, ge=1, le=10_000_000, description="Longer responses are incorrect."
    )
    symbolic_budget_s: float = Field(
        DEFAULT_SYMBOLIC_BUDGET_S,
        gt=0.0,
        le=60.0,
        description="CPU seconds the symbolic stage may use per item; when spent the verdict is `timeout`.",
    )


@dataclass(frozen=True, slots=True)
class PreparedGold:
    raw: str
    answer: str
    method: str
    view: View

    @property
    def ok(self) -> bool:
        return bool(self.answer)


@lru_cache(maxsize=8192)
def prepare_gold(gold: str) -> PreparedGold:
    answer, method = extract_gold(gold)
    value = fallbacks.chain_value(answer)
    if value is not None:
        # A gold written as a chain (`z = 1 + 1 = 2`) states the value it ends in.
        answer, method = value, method + "+chain"
    return PreparedGold(gold, answer, method, view(answer, gold=True))


def _gold_text(ground_truth: Any) -> str:
    if isinstance(ground_truth, int) and not isinstance(ground_truth, bool):
        return str(ground_truth)
    if isinstance(ground_truth, float):
        # repr keeps every digit the data set stored: 0.1 stays 0.1, 1e-07 parses.
        return repr(ground_truth)
    return str(ground_truth)


SIGNALS = {
    "hedge": Signal(
        "Several different final answers offered: boxes, or a list of values where one is asked for.",
        "So the answer is $\\boxed{3}$ or $\\boxed{4}$.",
    ),
    "answer_in_thinking_only": Signal(
        "The answer is only inside the reasoning: the reply after it states none.",
        "<think>... so x = 12, \\boxed{12}</think>I hope this helps!",
    ),
    "restated_question": Signal(
        "The answer restates an expression of the prompt instead of its value.",
        "Simplify $\\tan 100^\\circ + 4\\sin 100^\\circ$. ... $\\boxed{\\tan 100^\\circ + 4\\sin 100^\\circ}$",
    ),
}


def _signals(outcome: Outcome, found: Extracted, gold: PreparedGold, params: MathParams) -> tuple[str, ...]:
    """What the response tried (`SIGNALS`), from what grading it found. Never a failure
    of its own: a signal that cannot be decided is left out."""
    signals = []
    if outcome.details.get("hedge") is True or _offers_several(found, gold, params):
        signals.append("hedge")
    if found.in_thinking and found.method in _STATED_METHODS:
        signals.append("answer_in_thinking_only")
    if outcome.details.get("restates_question") is True:
        signals.append("restated_question")
    return tuple(signals)


def _same_value(first: str, second: str, params: MathParams) -> bool:
    """Each equals the other read as the gold (so `1/3` and `0.3333` differ, as they
    would as answers)."""
    return all(
        decide_cached(view(a, gold=True), b, params.rel_tol, params.numeric_tolerance).equal
        for a, b in ((first, second), (second, first))
    )


def _offers_several(found: Extracted, gold: PreparedGold, params: MathParams) -> bool:
    """Whether the response offers final answers of different values (its unretracted
    boxes), whichever is graded: a hedge that lost is a hedge too. Not where the gold
    has several parts, which several boxes may hold together. Compared without sympy
    (the last thing `verify` does, which lifts the budget after): a signal must never
    make grading slower than its verdict."""
    if len(found.candidates) + len(found.alternatives) < 2 or _many_parts(gold):
        return False  # most responses: one box or none
    offered = list(dict.fromkeys(c for c in [*found.alternatives, *found.candidates] if c.strip()))
    if len(offered) < 2:
        return False
    if len(offered) > MAX_CANDIDATES:
        return True
    budget.set_budget(0.0)
    try:
        return any(not _same_value(offered[-1], other, params) for other in offered[:-1])
    except (*compare.SYMPY_FAILURES, budget.BudgetExceeded, RecursionError):
        return False


def _many_parts(gold: PreparedGold) -> bool:
    """A gold of several values (`1, -2`, a set), which several boxes may hold together."""
    node = gold.view.node
    return (isinstance(node, Seq) and len(node.items) > 1) or isinstance(node, Union)


def _outcome(ok: bool, reason: str, details: dict[str, Any]) -> Outcome:
    return Outcome(1.0 if ok else 0.0, Verdict.CORRECT if ok else Verdict.INCORRECT, reason, details)


class MathVerifier:
    name = "math"
    # Its versions, and what each changed: CHANGELOG.md. A new version keeps verdicts
    # cached under old rules from being served.
    version = "2.4.1"
    description = (
        "Final answer (what the response states last, in the model's own turn under any chat or reasoning "
        "template: text after the thinking first; an unretracted, un-negated \\boxed{}, an <answer> tag, a "
        "JSON reply's answer field, then '#### x', answer lines in many languages ('Answer:', 'Ответ:', "
        "'答案：'), a final sentence, a final equation, a math span; a letter gold reads the option named; "
        "extraction='strict' reads only boxes and tags) equals the ground truth: "
        "string, then numeric (no sympy), then symbolic equivalence. Hedged answers are incorrect. "
        "A decimal equals an exact ground truth (integer, fraction, radical, pi) only when its value is "
        "exactly equal (0.5 = 1/2, but 0.3333 != 1/3); a decimal ground truth allows rel_tol; "
        "numeric_tolerance=true applies rel_tol to every decimal answer."
    )
    params_model = MathParams
    ground_truth_model = str | int | float
    default_deadline_s = 2.0
    signals = SIGNALS

    def __init__(self) -> None:
        symbolic.warm_up()

    def prepare(self, params: MathParams, ground_truth: Any) -> PreparedGold:
        # Extraction and normalisation of the gold only; its sympy form is parsed on
        # first need and cached, so a pathological gold costs its own items' budget.
        return prepare_gold(_gold_text(ground_truth))

    def verify(self, item: GradeInput, params: MathParams, ground_truth: Any) -> Outcome:
        budget.set_budget(params.symbolic_budget_s)
        try:
            return self._verify(item, params, ground_truth)
        except compare.SYMPY_FAILURES as exc:
            return Outcome(0.0, Verdict.INCORRECT, f"the answer cannot be compared ({type(exc).__name__})", {})
        except budget.BudgetExceeded:
            return Outcome(
                0.0,
                Verdict.TIMEOUT,
                f"symbolic stage exceeded its {params.symbolic_budget_s:g}s budget",
                {"stage": "symbolic", "budget_s": params.symbolic_budget_s},
            )
        finally:
            budget.set_budget(math.inf)

    def _verify(self, item: GradeInput, params: MathParams, ground_truth: Any) -> Outcome:
        gold = ground_truth if isinstance(ground_truth, PreparedGold) else self.prepare(params, ground_truth)
        details: dict[str, Any] = {
            "gold": gold.answer[:200],
            "gold_normalized": gold.view.norm.text[:200],
            "gold_extraction": gold.method,
        }
        if not gold.ok:
            return Outcome(0.0, Verdict.ERROR, "ground truth has no answer", details, mask=True)
        response = item.response
        if len(response) > params.max_response_chars:
            details["stage"] = "guard"
            return _outcome(False, f"response longer than {params.max_response_chars} characters", details)

        found = extract_answer(response, params.extraction)
        details["extraction"] = found.method
        outcome = self._graded(item, params, gold, found, details)
        outcome.signals = _signals(outcome, found, gold, params)
        return outcome

    def _graded(
        self, item: GradeInput, params: MathParams, gold: PreparedGold, found: Extracted, details: dict[str, Any]
    ) -> Outcome:
        if gold.view.choice is not None:
            return _graded_choice(gold.view.choice, found, item, details)
        if found.answer is None or not found.answer.strip():
            details["stage"] = "extraction"
            return Outcome(0.0, Verdict.NO_ANSWER, "no final answer found", details)
        answer = found.answer
        details["extracted"] = answer[:200]
        if len(answer) > params.max_answer_chars:
            details["stage"] = "guard"
            return _outcome(False, f"answer longer than {params.max_answer_chars} characters", details)

        joined = _joined_boxes(found.candidates, gold, params)
        if joined is not None:
            details["stage"], details["candidates"] = joined.stage, found.candidates[: MAX_CANDIDATES + 1]
            return _outcome(True, "the boxed answers together equal the ground truth", details)
        decision = decide_cached(gold.view, answer, params.rel_tol, params.numeric_tolerance)
        if not decision.equal and found.method in _LAST_SIDE_METHODS and _equation_shaped(gold):
            # The fallback kept the last side of the response's equation; the gold is an
            # equation (or several), so the response's equation as written is what to compare.
            whole = fallbacks.whole_equation(answer_region(item.response))
            # A chain (`x = 10/2 = 6`) is read by its last side only, never by its first.
            # And only the equation the answer was read from: the one that ends in it.
            same = whole is not None and _ends_with(whole, answer) and len(whole) <= params.max_answer_chars
            if same and whole is not None and fallbacks.chain_value(whole) is None:
                retry = decide_cached(gold.view, whole, params.rel_tol, params.numeric_tolerance)
                if retry.equal:
                    answer, decision = whole, retry
                    details["extracted"] = answer[:200]
        if not decision.equal and not _equation_shaped(gold):
            # `\\boxed{86+42=128}`: a sum worked out inside the answer states its result.
            result = _worked_result(answer)
            if result is not None:
                retry = decide_cached(gold.view, result, params.rel_tol, params.numeric_tolerance)
                if retry.equal:
                    answer, decision = result, retry
                    details["extracted"] = answer[:200]
        details["stage"] = decision.stage
        details["normalized"] = decision.pred[:200]
        if not decision.equal:
            if decision.hedge:
                details["hedge"] = True
            return _outcome(False, decision.reason, details)

        if _restates_question(decision.pred, gold, item.prompt):
            # "Simplify $\\tan 100^\\circ + 4\\sin 100^\\circ$" answered with that expression:
            # equal in value, but no answer.
            details["restates_question"] = True
            return _outcome(False, "the answer restates an expression of the question", details)
        others = [c for c in found.candidates if c not in (answer, found.answer)]
        if others:
            details["candidates"] = [c[:100] for c in found.candidates[: MAX_CANDIDATES + 1]]
            hedge = _hedge(others, gold, params)
            if hedge is not None:
                details["hedge"] = True
                return _outcome(False, hedge, details)
        return _outcome(True, decision.reason, details)


_STATED_METHODS = frozenset(
    {"boxed", "answer_tag", "answer_tag+boxed", "answer_tag+phrase", "json", "gsm8k", "answer_line", "named_answer"}
)


def _graded_choice(gold: str, found: Extracted, item: GradeInput, details: dict[str, Any]) -> Outcome:
    """A multiple-choice gold: the letter the answer names, or the option whose value
    it states, or the last statement naming an option (`choices.py`). Boxes offered
    together that name different options are a hedge."""
    answer = found.answer
    named = {choices.letter_of(c) for c in found.candidates} - {None}
    if len(named) > 1:
        details["stage"], details["hedge"] = "choice", True
        return _outcome(False, f"hedging: several options named ({', '.join(sorted(map(str, named)))})", details)
    letter = choices.letter_of(answer) if answer else None
    if letter is None and answer and found.method.split("_after_")[0] in _STATED_METHODS:
        # Only a value stated as the answer names an option: a cut rollout's last
        # equation happening to equal one does not.
        letter = choices.option_letter(answer, choices.options(item.prompt))
    if letter is None:
        letter = choices.stated_letter(answer_region(item.response))
    details["stage"] = "choice"
    if answer:
        details["extracted"] = answer[:200]
    if letter is None and not answer:
        return Outcome(0.0, Verdict.NO_ANSWER, "no option named", details)
    if letter is None:
        return _outcome(False, "the answer names no single option", details)
    details["normalized"] = letter
    return _outcome(letter == gold, f"choice {letter} vs {gold}", details)


def _ends_with(equation: str, side: str) -> bool:
    squeeze = str.maketrans("", "", " \t$")
    return equation.translate(squeeze).endswith(side.translate(squeeze))


def _worked_result(answer: str) -> str | None:
    """The last side of `86+42=128` or `3 \\times 4 = 12`: every side before it is
    arithmetic on numbers alone; `x = 5` and `2x = 10` are equations, not sums."""
    sides = answer.split("=")
    if len(sides) < 2 or not sides[-1].strip():
        return None
    if any(_LETTER_RE.search(_COMMAND_RE.sub("", side)) for side in sides[:-1]):
        return None
    return sides[-1].strip()


_COMMAND_RE = re.compile(r"\\(?:times|cdot|div|frac|dfrac|left|right|sqrt)")
_LETTER_RE = re.compile(r"[a-zA-Z]")


@lru_cache(maxsize=1024)
def _restates_question(answer: str, gold: PreparedGold, prompt: str) -> bool:
    """The (normalised) answer is an expression the question gives to work on, however
    either writes its operators (`8*7` for `8 \\times 7`), and not the gold's own form."""
    if answer == gold.view.norm.text:
        return False
    key = restatement_key(answer)
    return key != restatement_key(gold.view.norm.text) and key in _question_expressions(prompt)


@functools.lru_cache(maxsize=256)
def _question_expressions(prompt: str) -> frozenset[str]:
    """The question's expressions to work on (an operation, not a bare number), as
    `restatement_key`s: its math spans, and arithmetic written in plain text (`8*7=`)."""
    text = prompt[:MAX_QUESTION_CHARS]
    spans = list(fallbacks.math_spans(text)) if "$" in text or "\\(" in text or "\\[" in text else []
    spans += _PLAIN_EXPRESSION_RE.findall(text)
    found = set()
    for span in spans:
        norm = normalize(span).text
        if norm and "=" not in norm and _OPERATION_RE.search(norm) is not None:
            key = restatement_key(norm)
            if not _PLAIN_VALUE_RE.fullmatch(key):
                found.add(key)
    return frozenset(found)


def restatement_key(text: str) -> str:
    """`text` with the ways of writing one operation made one: `\\times`, `\\cdot`, the
    multiplication sign and `*`; `\\div`, the division sign and `/`; `**` and `^`;
    `\\frac{a}{b}` and `(a)/(b)`; braces and the parentheses around a lone number or
    name."""
    key = text.replace(" ", "")
    for old, new in _OPERATOR_SPELLINGS:
        key = key.replace(old, new)
    key = _DIGIT_FRACTION_RE.sub(r"(\1)/(\2)", _FRACTION_RE.sub(r"(\1)/(\2)", key))
    key = key.replace("{", "(").replace("}", ")")
    for _ in range(2):
        key = _LONE_PARENS_RE.sub(r"\1", key)
    return key


_OPERATOR_SPELLINGS = (
    ("\\times", "*"),
    ("\\cdot", "*"),
    ("\u00d7", "*"),
    ("\u00b7", "*"),
    ("\\div", "/"),
    ("\u00f7", "/"),
    ("**", "^"),
    ("\\left", ""),
    ("\\right", ""),
    ("\\dfrac", "\\frac"),
    ("\\tfrac", "\\frac"),
)
_FRACTION_RE = re.compile(r"\\frac\{([^{}]*)\}\{([^{}]*)\}")
_DIGIT_FRACTION_RE = re.compile(r"\\frac(\d)(\d)")
_LONE_PARENS_RE = re.compile(r"\((\w+(?:\.\d+)?)\)")
# Arithmetic in plain text: operands (no spaces, no operators) joined by operators. The
# operand and operator characters are disjoint, operands are taken whole (possessive)
# and start where no operand character stands before: linear.
_PLAIN_EXPRESSION_RE = re.compile(
    r"(?<![\w.(){}\\])[\w.(){}\\]++(?:[ \t]*+(?:\*\*|[-+*/^\u00d7\u00f7\u00b7])[ \t]*+[\w.(){}\\]++)+"
)
_PLAIN_VALUE_RE = re.compile(r"-?\d+(?:\.\d+)?(?:/\d+)?")


MAX_QUESTION_CHARS = 20_000
# An operation between operands (`a + b`, `2^{10}`, `\\binom{10}{3}`, `\\sin 100`, written
# `\\sin100` once normalised): a lone number, `-3` or `\\frac{2}{3}` is a value the
# question may name as an option.
_OPERATION_RE = re.compile(r"(?<=[\w})])\s*[-+*/^]|\\(?:cdot|times|div|sin|cos|tan|log|ln|sum|prod|int|binom)")


# Fallbacks that keep only the last side of an equation they read.
_LAST_SIDE_METHODS = frozenset({"equation", "final_sentence"})


def _equation_shaped(gold: PreparedGold) -> bool:
    """An equation (`2x + 4y = 3`, `y = 2x + 1`) or several (`p = -1 and p = 15/8`)."""
    return "=" in gold.view.norm.text and isinstance(gold.view.node, Relation | Scalar | Seq)


def _joined_boxes(candidates: list[str], gold: PreparedGold, params: MathParams) -> Decision | None:
    """Several boxes that together are a many-part gold (`\\boxed{1}, \\boxed{-2}` for
    the solutions `1, -2`); None when the gold has one part or they are not it."""
    if not _many_parts(gold) or not 1 < len(candidates) <= MAX_CANDIDATES:
        return None
    decision = decide_cached(gold.view, ", ".join(candidates), params.rel_tol, params.numeric_tolerance)
    return decision if decision.equal else None


def _hedge(others: list[str], gold: PreparedGold, params: MathParams) -> str | None:
    """Why the earlier candidates make the response a hedge; None when each equals the gold."""
    if len(others) > MAX_CANDIDATES:
        return "hedging: too many different boxed answers"
    for other in others:
        too_long = len(other) > params.max_answer_chars
        if too_long or not decide_cached(gold.view, other, params.rel_tol, params.numeric_tolerance).equal:
            return f"hedging: another boxed answer {other[:60]!r} is not the answer"
    return None
