"""The answer a reasoning model gives after its thinking, read as open-instruct reads it.

open-instruct's IFEval reward (`remove_thinking_section` in
`open_instruct/ground_truth_utils.py`) grades the text after the last `</think>`, with
`<answer>`/`</answer>` tags removed and the ends stripped. This does the same, after
`templates.turns` has split a decoded response at its turn tokens and rewritten every
reasoning template's markers (`<thinking>`, `[THINK]`, `◁think▷`, Harmony's channels,
upper case...) to `<think>`/`</think>`. Where that differs from a plain split, it is on
purpose:

- A close marker ends only thinking that its own template family opened: inside
  `<think>`, a `</thinking>`, `[/THINK]` or Harmony `final` channel is more thinking.
  A `</think>` with no thinking open (a fake one in the answer's code or prose) does
  not end anything: it becomes a line break.
- A response whose first marker is a `</think>` had its thinking opened in the prompt
  (DeepSeek-R1, Qwen3, OLMo): the text before it is thinking, after a leading role
  header (`<|im_start|>assistant`, `<|assistant|>`, `<｜Assistant｜>`...) too.
- The policy does not choose what is graded by writing turn tokens as text: when text
  lies outside the model's turn (after a turn end, in a fake earlier user or system
  turn), every turn's text is graded, one after another.
- A thinking block opened and never closed holds no answer when nothing comes before
  it (a response cut off while thinking), where open-instruct would grade the
  thoughts. After an answer, an unclosed opener hides nothing: all of it is graded,
  the opener as a line break, as open-instruct grades it.
- A response with no thinking is graded as it is (apart from turn tokens and
  `<answer>` tags), so IFEval's own semantics, leading and trailing blank lines
  included, hold for it.
"""

from __future__ import annotations

from rlvr.verifiers.templates import THINK_CLOSE, THINK_OPEN, Turn, turns

ANSWER_TAGS = ("<answer>", "</answer>")


def _without_answer_tags(text: str) -> str:
    for tag in ANSWER_TAGS:
        text = text.replace(tag, "")
    return text


def _written(parsed: tuple[Turn, ...]) -> str:
    """The model's turn; every turn's text when there is text outside it."""
    if len(parsed) == 1:
        return parsed[0].text
    return "\n".join(turn.text for turn in parsed)


def _with_thinking_marked(response: str) -> str:
    """The model's text, with thinking that began in the prompt marked as such."""
    text = _written(turns(response))
    if THINK_OPEN in text or THINK_CLOSE in text or THINK_CLOSE not in response.lower():
        return text
    primed = _written(turns(response, primed=True))
    return primed if THINK_CLOSE in primed else text


def answer_text(response: str) -> str:
    """What is graded by default: the text after the thinking, or the response if it has none."""
    text = _with_thinking_marked(response)
    if THINK_OPEN not in text and THINK_CLOSE not in text:
        return _without_answer_tags(text)
    close = text.rfind(THINK_CLOSE)
    answer = text[close + len(THINK_CLOSE) :] if close >= 0 else text
    unclosed = answer.find(THINK_OPEN)
    if unclosed >= 0:
        before = answer[:unclosed]
        after = answer[unclosed + len(THINK_OPEN) :]
        answer = before + "\n" + after if _without_answer_tags(before).strip() else ""
    return _without_answer_tags(answer).strip()
