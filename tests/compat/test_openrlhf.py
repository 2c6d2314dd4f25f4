"""OpenRLHF's own `SingleTurnAgentExecutor` (openrlhf 0.11.2, `--reward.remote_url`) gets
its rewards from rlvr's `POST /get_reward`, with a scripted engine in place of vLLM."""

from __future__ import annotations

import asyncio
import string
from dataclasses import dataclass, field
from typing import Any

from tests.compat.needs import need

need("openrlhf", "aiohttp", "transformers")

from openrlhf.utils.agent import SingleTurnAgentExecutor  # noqa: E402

from tests.compat.trl_model import char_tokenizer  # noqa: E402

PROMPT = "what is two plus two?\n"


@dataclass
class SamplingParams:
    """The fields of vLLM's SamplingParams that the executor reads."""

    max_tokens: int | None = 64
    logprobs: int | None = None


@dataclass
class Completion:
    token_ids: list[int]
    finish_reason: str = "stop"
    logprobs: Any = None


@dataclass
class RequestOutput:
    outputs: list[Completion] = field(default_factory=list)


class ScriptedEngine:
    """Answers each prompt with the text `script` gives it, ended by the eos token, as a
    chat model does (the executor decodes it with special tokens)."""

    def __init__(self, tokenizer: Any, script: dict[str, str]) -> None:
        self.tokenizer = tokenizer
        self.script = script

    async def generate(self, prompt_token_ids: list[int], params: SamplingParams, **kwargs: Any) -> RequestOutput:
        prompt = self.tokenizer.decode(prompt_token_ids)
        ids = self.tokenizer(self.script[prompt], add_special_tokens=False)["input_ids"]
        return RequestOutput([Completion([*ids, self.tokenizer.eos_token_id])])


def run(urls: str | list[str], answers: list[str], labels: list[Any]) -> list[dict[str, Any]]:
    tokenizer = char_tokenizer(string.digits)
    executor = SingleTurnAgentExecutor(urls)

    async def rollouts() -> list[dict[str, Any]]:
        # Distinct prompts so the engine knows which answer each gets; sent all at once.
        prompts = [f"{i} {PROMPT}" for i in range(len(answers))]
        engine = ScriptedEngine(tokenizer, dict(zip(prompts, answers, strict=True)))
        return list(
            await asyncio.gather(
                *(
                    executor.execute(p, label, SamplingParams(), 256, tokenizer, engine)
                    for p, label in zip(prompts, labels, strict=True)
                )
            )
        )

    return asyncio.run(rollouts())


def test_rewards_over_one_url(live_server: str) -> None:
    outs = run(f"{live_server}/get_reward?verifier=math", ["so \\boxed{4}", "it is 5", "\\boxed{4}"], ["4", "4", "4"])
    assert [o["reward"] for o in outs] == [[1.0], [0.0], [1.0]]
    assert [o["scores"] for o in outs] == [[1.0], [0.0], [1.0]]
    assert all(o["extra_logs"]["rlvr_masked"] == [0.0] for o in outs), outs


def test_each_signal_is_a_0_1_extra_log(live_server: str) -> None:
    answers = ["\\boxed{3} or \\boxed{4}", "\\boxed{4}"]
    outs = run(f"{live_server}/get_reward?verifier=math", answers, ["4", "4"])
    logs = [o["extra_logs"] for o in outs]
    names = ("answer_in_thinking_only", "hedge", "restated_question")
    assert all(set(log) == {"rlvr_masked", *(f"rlvr_signal_{n}" for n in names)} for log in logs), logs
    assert [log["rlvr_signal_hedge"] for log in logs] == [[1.0], [0.0]]
    assert all(log["rlvr_signal_restated_question"] == [0.0] for log in logs)


def test_rewards_over_two_urls_and_a_masked_item(live_server: str) -> None:
    # Two endpoints (OpenRLHF rotates over them); the same server under two names.
    urls = [
        f"{live_server}/get_reward?verifier=crashy",
        f"{live_server.replace('127.0.0.1', 'localhost')}/get_reward?verifier=crashy",
    ]
    outs = run(urls, ["fine", "raise", "fine", "fine"], [None] * 4)
    # OpenRLHF has no mask: the failed grader's item gets 0.0, flagged in extra_logs.
    assert [o["reward"] for o in outs] == [[1.0], [0.0], [1.0], [1.0]]
    assert [o["extra_logs"]["rlvr_masked"] for o in outs] == [[0.0], [1.0], [0.0], [0.0]]
