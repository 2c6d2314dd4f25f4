from __future__ import annotations

import pytest

from rlvr.client import RewardClient, RewardServiceError


def test_rewards_over_http(live_server: str) -> None:
    with RewardClient(live_server) as client:
        out = client.rewards(
            ["<think>a</think><answer>4</answer>", "4", "<think>a</think><answer>4</answer>"],
            verifier="format",
            groups=["g", "g", "g"],
        )
    assert out.values == [1.0, 0.0, 1.0]
    assert out.mask == [False, False, False]
    assert out.stats["unique"] == 2


def test_errors_carry_the_server_message(live_server: str) -> None:
    with RewardClient(live_server) as client, pytest.raises(RewardServiceError, match="unknown verifier 'nope'"):
        client.rewards(["x"], verifier="nope")
