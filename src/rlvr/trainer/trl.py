"""Reward functions for TRL's `GRPOTrainer`.

    from trl import GRPOTrainer
    from rlvr.trainer.trl import rlvr_reward

    trainer = GRPOTrainer(model=..., train_dataset=ds,  # ds has "prompt" and "answer"
                          reward_funcs=[rlvr_reward("math", url="http://rlvr:8000")])

What TRL 1.16 does with a reward function (`GRPOTrainer._calculate_rewards`), and so
what these functions do:
- TRL passes everything by keyword: `prompts`, `completions`, `completion_ids`, every
  dataset column (the ground truth is the `truth_column`), `trainer_state`, `log_extra`,
  `log_metric`; the rest is ignored.
- A completion is a string, or (conversational datasets) a list of messages: the text
  graded is the assistant messages' content, in order; tool calls and tool results are
  not the model's answer. A bare string in the list is the model's text; a conversation
  with no assistant text is graded as empty text (the model said nothing: a 0, not a mask).
- One `float | None` per row, in order. A masked item (the grader failed) is None, which
  TRL turns into NaN and leaves out of its group's statistics: a grader failure is never
  a reward of 0.
- TRL logs `rewards/{__name__}/mean`; the name is `rlvr_<verifier>` unless given, so one
  function per verifier gives one reward curve per verifier.
- Through `log_metric`: `rlvr/masked_frac`, and `rlvr/signals/<name>` for each signal the
  verifier may report, the share of the step's items that raised it (0 included, so each
  signal's curve is continuous).
- `is_async=True` gives an object with an async `__call__`, which TRL runs on its own
  event loop with the other async reward functions.
The functions hold no connection (they pickle): clients are shared per process, see
`rlvr.trainer.clients`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rlvr.client import DEFAULT_RETRY_BUDGET_S, build_items
from rlvr.results import GradeResult
from rlvr.trainer.clients import shared_async_client, shared_client

SIGNAL_METRIC = "rlvr/signals/"


def rlvr_reward(
    verifier: str = "math",
    *,
    url: str | None = None,
    truth_column: str | None = "answer",
    name: str | None = None,
    params: dict[str, Any] | None = None,
    is_async: bool = False,
    retry_budget_s: float = DEFAULT_RETRY_BUDGET_S,
) -> RlvrReward | AsyncRlvrReward:
    """A reward function grading with `verifier` on the rlvr at `url` (in-process, in this
    process, when None). The ground truth is the dataset column `truth_column` (none when
    None, or when the dataset has no such column). A call retries through a restart of the
    service for up to `retry_budget_s`."""
    kind = AsyncRlvrReward if is_async else RlvrReward
    return kind(verifier, url=url, truth_column=truth_column, name=name, params=params, retry_budget_s=retry_budget_s)


class _Reward:
    def __init__(
        self,
        verifier: str,
        *,
        url: str | None,
        truth_column: str | None,
        name: str | None,
        params: dict[str, Any] | None,
        retry_budget_s: float,
    ) -> None:
        self.verifier = verifier
        self.url = url
        self.retry_budget_s = retry_budget_s
        self.truth_column = truth_column
        self.params = params
        self.__name__ = name or f"rlvr_{verifier}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.verifier!r}, url={self.url!r}, name={self.__name__!r})"

    def _items(self, prompts: Sequence[Any] | None, completions: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        truths = None if self.truth_column is None else kwargs.get(self.truth_column)
        return build_items(
            [completion_text(c) for c in completions],
            self.verifier,
            ground_truths=truths,
            prompts=None if prompts is None else [prompt_text(p) for p in prompts],
            params=self.params,
        )

    def _rewards(
        self, results: list[GradeResult], signal_names: list[str], kwargs: dict[str, Any]
    ) -> list[float | None]:
        log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
        log_extra: Callable[[str, list[Any]], None] | None = kwargs.get("log_extra")
        if log_metric is not None and results:
            log_metric("rlvr/masked_frac", sum(r.mask for r in results) / len(results))
            for name in signal_names:
                log_metric(f"{SIGNAL_METRIC}{name}", sum(name in r.signals for r in results) / len(results))
        if log_extra is not None:
            log_extra(f"{self.__name__}/verdict", [r.verdict for r in results])
        return [None if r.mask else r.reward for r in results]


class RlvrReward(_Reward):
    def __call__(
        self, *, completions: Sequence[Any], prompts: Sequence[Any] | None = None, **kwargs: Any
    ) -> list[float | None]:
        client = shared_client(self.url, self.retry_budget_s)
        out = client.grade(self._items(prompts, completions, kwargs))
        return self._rewards(out.results, client.signal_names(self.verifier), kwargs)


class AsyncRlvrReward(_Reward):
    async def __call__(
        self, *, completions: Sequence[Any], prompts: Sequence[Any] | None = None, **kwargs: Any
    ) -> list[float | None]:
        client = shared_async_client(self.url, self.retry_budget_s)
        out = await client.grade(self._items(prompts, completions, kwargs))
        return self._rewards(out.results, await client.signal_names(self.verifier), kwargs)


def completion_text(completion: str | dict[str, Any] | Sequence[Any]) -> str:
    """The text to grade: a string as it is; of a conversation, the assistant messages'
    content, joined in order. A message given as a bare string is the model's text (some
    pipelines pass `["..."]`). A conversation with no assistant text is graded as empty
    text: the model said nothing, which is its answer (a 0, not a mask)."""
    if isinstance(completion, str):
        return completion
    messages = [completion] if isinstance(completion, dict) else completion
    return "\n".join(text for message in messages if (text := _assistant_text(message)))


def _assistant_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
        return message_text(message)
    return ""


def prompt_text(prompt: str | dict[str, Any] | Sequence[Any]) -> str:
    if isinstance(prompt, str):
        return prompt
    messages = [prompt] if isinstance(prompt, dict) else prompt
    return "\n".join(text for m in messages if (text := m if isinstance(m, str) else _message_or_none(m)))


def _message_or_none(message: Any) -> str:
    return message_text(message) if isinstance(message, dict) else ""


def message_text(message: dict[str, Any]) -> str:
    """A message's text; content may be a string or a list of typed blocks (images and
    other non-text blocks carry no text)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        text
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(text := b.get("text"), str)
    )
