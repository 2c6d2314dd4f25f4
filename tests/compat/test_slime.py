"""slime's remote reward (`--rm-url`, `--reward-key score`): one POST per sample with
`{"prompt", "response", "label"}`, sent the way slime's `remote_rm` sends it (aiohttp, a
session per call, raise_for_status, then the reward key read from the JSON answer)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.compat.needs import need
from tests.services import require

need("aiohttp")

import aiohttp  # noqa: E402


async def remote_rm(rm_url: str, prompt: str, response: str, label: Any) -> Any:
    payload = {"prompt": prompt, "response": response, "label": label}
    async with aiohttp.ClientSession() as session, session.post(rm_url, json=payload) as resp:
        resp.raise_for_status()
        return await resp.json()


def replay(url: str, samples: list[tuple[str, str, Any]]) -> list[dict[str, Any]]:
    async def all_at_once() -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(remote_rm(url, *s) for s in samples)))

    return asyncio.run(all_at_once())


def test_a_score_per_sample(live_server: str) -> None:
    outs = replay(f"{live_server}/v1/reward?verifier=math", [("2+2?", "\\boxed{4}", "4"), ("2+2?", "5", "4")])
    assert [o["score"] for o in outs] == [1.0, 0.0]
    assert [o["verdict"] for o in outs] == ["correct", "incorrect"] and not any(o["mask"] for o in outs)


def test_code_labels_stored_as_json_text(live_server: str) -> None:
    label = json.dumps({"tests": ["assert f(2) == 4"]})
    response = "```python\ndef f(x):\n    return x * 2\n```"
    [out] = replay(f"{live_server}/v1/reward?verifier=code", [("write f", response, label)])
    require(not (out["mask"] and "sandbox" in out["reason"]), f"a sandbox ({out['reason']})")
    assert out["score"] == 1.0 and out["verdict"] == "correct"


def test_a_masked_sample_scores_zero_and_says_so(live_server: str) -> None:
    [out] = replay(f"{live_server}/v1/reward?verifier=crashy", [("p", "raise", None)])
    assert out["score"] == 0.0 and out["mask"] is True
