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
  not the model's answer.
- One `float | None` per row, in order. A masked item (the grader failed) is None, which
  TRL turns into NaN and leaves out of its group's statistics: a grader failure is never
  a reward of 0.
- TRL logs `rewards/{__name__}/mean`; the name is `rlvr_<verifier>` unless given, so one
  function per verifier gives one reward curve per verifier.
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
    return kind(
        verifier, url=url, truth_column=truth_column, name=name, params=params, retry_budget_s=retry_budget_s
    )


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

    def _rewards(self, results: list[GradeResult], kwargs: dict[str, Any]) -> list[float | None]:
        log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
        log_extra: Callable[[str, list[Any]], None] | None = kwargs.get("log_extra")
        if log_metric is not None and results:
            log_metric("rlvr/masked_frac", sum(r.mask for r in results) / len(results))
        if log_extra is not None:
            log_extra(f"{self.__name__}/verdict", [r.verdict for r in results])
        return [None if r.mask else r.reward for r in results]


class RlvrReward(_Reward):
    def __call__(
        self, *, completions: Sequence[Any], prompts: Sequence[Any] | None = None, **kwargs: Any
    ) -> list[float | None]:
        out = shared_client(self.url, self.retry_budget_s).grade(self._items(prompts, completions, kwargs))
        return self._rewards(out.results, kwargs)


class AsyncRlvrReward(_Reward):
    async def __call__(
        self, *, completions: Sequence[Any], prompts: Sequence[Any] | None = None, **kwargs: Any
    ) -> list[float | None]:
        out = await shared_async_client(self.url, self.retry_budget_s).grade(self._items(prompts, completions, kwargs))
        return self._rewards(out.results, kwargs)


def completion_text(completion: str | Sequence[dict[str, Any]]) -> str:
    """The text to grade: a string as it is; of a conversation, the assistant messages'
    content, joined in order."""
    if isinstance(completion, str):
        return completion
    parts = [message_text(m) for m in completion if m.get("role", "assistant") == "assistant"]
    return "\n".join(p for p in parts if p)


def prompt_text(prompt: str | Sequence[dict[str, Any]]) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n".join(t for m in prompt if (t := message_text(m)))


def message_text(message: dict[str, Any]) -> str:
    """A message's text; content may be a string or a list of typed blocks (images and
    other non-text blocks carry no text)."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
