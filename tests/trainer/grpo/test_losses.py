"""The loss and advantage functions against hand-computed values, starting with the
seed's worked example."""

from __future__ import annotations

import pytest
import torch

from rlvr.trainer.grpo.losses import (
    LossConfig,
    aggregation_weights,
    group_advantages,
    grpo_loss,
    k3_kl,
    overlong_penalty,
)

SEED_REWARDS = torch.tensor([1.0, 0, 0, 1, 0, 0, 0, 1])
SEED_LENGTHS = [120, 340, 95, 210, 55, 400, 130, 88]


def _mask(lengths: list[int]) -> torch.Tensor:
    width = max(lengths)
    return torch.tensor([[1.0] * n + [0.0] * (width - n) for n in lengths])


def test_seed_advantages() -> None:
    adv = group_advantages(SEED_REWARDS, "grpo")
    expected = torch.tensor([1.2070, -0.7240, -0.7240, 1.2070, -0.7240, -0.7240, -0.7240, 1.2070])
    # the seed prints adv.round(decimals=3)
    assert torch.allclose(adv.round(decimals=3), expected, atol=1e-6)
    assert not torch.allclose(adv, group_advantages(SEED_REWARDS, "dr_grpo"))


def test_seed_per_token_weights_come_out_of_the_loss_gradient() -> None:
    # The weight each token of response i gets in GRPO's update is A_i / |o_i| (times 1/G
    # for the mean over the group): read it off the gradient of the real loss at ratio 1.
    adv = group_advantages(SEED_REWARDS, "grpo")
    mask = _mask(SEED_LENGTHS)
    logp = torch.zeros_like(mask, requires_grad=True)
    out = grpo_loss(logp, torch.zeros_like(mask), adv, mask, LossConfig())
    out.loss.backward()
    assert logp.grad is not None
    per_token = -logp.grad * len(SEED_LENGTHS)
    assert round(float(per_token[4, 0]), 4) == -0.0132
    assert round(float(per_token[5, 0]), 4) == -0.0018
    assert float(per_token[4, 0]) / float(per_token[5, 0]) == pytest.approx(400 / 55)


def test_all_correct_group_is_zero() -> None:
    assert torch.equal(group_advantages(torch.ones(8), "grpo"), torch.zeros(8))
    assert torch.equal(group_advantages(torch.ones(8), "rloo"), torch.zeros(8))


def test_dr_grpo_and_rloo_by_hand() -> None:
    r = torch.tensor([1.0, 0.0, 0.0, 1.0])
    assert torch.allclose(group_advantages(r, "dr_grpo"), torch.tensor([0.5, -0.5, -0.5, 0.5]))
    # r_0 - mean(0, 0, 1) = 1 - 1/3; r_1 - mean(1, 0, 1) = -2/3
    assert torch.allclose(group_advantages(r, "rloo"), torch.tensor([2 / 3, -2 / 3, -2 / 3, 2 / 3]))
    assert torch.equal(group_advantages(torch.tensor([1.0]), "grpo"), torch.zeros(1))


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # lengths 2 and 4, two responses: 1/(2*2) and 1/(4*2)
        ("seq_mean_token_mean", [[0.25, 0.25, 0, 0], [0.125] * 4]),
        # six tokens in all
        ("token_mean", [[1 / 6, 1 / 6, 0, 0], [1 / 6] * 4]),
        # constant 8 tokens, two responses: 1/16 each
        ("seq_mean_token_sum_norm", [[1 / 16, 1 / 16, 0, 0], [1 / 16] * 4]),
    ],
)
def test_aggregation_weights(mode: str, expected: list[list[float]]) -> None:
    w = aggregation_weights(_mask([2, 4]), mode, 8)  # type: ignore[arg-type]
    assert torch.allclose(w, torch.tensor(expected))


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # per-token losses: response 0 = -A0*r = [-1*1.5, -1*0.5], response 1 = -A1*r = [+2*1.0]*3 (A1=-2)
        # seq-mean-token-mean: mean(mean(-1.5,-0.5), mean(2,2,2)) = mean(-1, 2) = 0.5
        ("seq_mean_token_mean", 0.5),
        # token mean: (-1.5 - 0.5 + 6) / 5 = 0.8
        ("token_mean", 0.8),
        # sums / 10 tokens, mean over 2 responses: ((-2)/10 + 6/10) / 2 = 0.2
        ("seq_mean_token_sum_norm", 0.2),
    ],
)
def test_loss_value_every_aggregation(mode: str, expected: float) -> None:
    ratios = torch.tensor([[1.5, 0.5, 1.0], [1.0, 1.0, 1.0]])
    logp = torch.log(ratios)
    mask = torch.tensor([[1.0, 1, 0], [1, 1, 1]])
    adv = torch.tensor([1.0, -2.0])
    # eps large enough that nothing clips: the loss is -A * ratio per token
    cfg = LossConfig(clip_eps=0.9, clip_eps_high=0.9, aggregation=mode, norm_tokens=10)  # type: ignore[arg-type]
    out = grpo_loss(logp, torch.zeros_like(logp), adv, mask, cfg)
    assert float(out.loss) == pytest.approx(expected)
    assert out.clip_fraction == 0.0


def test_clip_higher_is_asymmetric() -> None:
    # One token, ratio 1.25, positive advantage: eps_high 0.2 clips it to 1.2 (and zero
    # gradient), eps_high 0.28 (DAPO) leaves it at 1.25.
    logp = torch.log(torch.tensor([[1.25]])).requires_grad_(True)
    mask = torch.ones(1, 1)
    adv = torch.tensor([1.0])
    sym = grpo_loss(logp, torch.zeros(1, 1), adv, mask, LossConfig(clip_eps=0.2, clip_eps_high=0.2))
    assert float(sym.loss) == pytest.approx(-1.2)
    assert sym.clip_fraction == 1.0
    sym.loss.backward()
    assert logp.grad is not None and float(logp.grad) == 0.0
    high = grpo_loss(logp, torch.zeros(1, 1), adv, mask, LossConfig(clip_eps=0.2, clip_eps_high=0.28))
    assert float(high.loss) == pytest.approx(-1.25)
    assert high.clip_fraction == 0.0
    # The low side still clips at 1 - eps: ratio 0.7, negative advantage -> min(-0.7, -0.8) = -0.8
    low = torch.log(torch.tensor([[0.7]]))
    out = grpo_loss(low, torch.zeros(1, 1), -adv, mask, LossConfig(clip_eps=0.2, clip_eps_high=0.28))
    assert float(out.loss) == pytest.approx(0.8)
    assert out.clip_fraction == 1.0


def test_k3_kl_by_hand_and_in_the_loss() -> None:
    logp = torch.log(torch.tensor([[0.5]]))
    ref = torch.log(torch.tensor([[0.25]]))
    d = float(ref - logp)  # log(0.5)
    assert float(k3_kl(logp, ref)) == pytest.approx(0.5 - d - 1)
    assert float(k3_kl(ref, ref)) == 0.0
    cfg = LossConfig(beta=0.1)
    out = grpo_loss(logp, logp.clone(), torch.tensor([0.0]), torch.ones(1, 1), cfg, ref_logp=ref)
    assert float(out.loss) == pytest.approx(0.1 * (0.5 - d - 1))
    assert out.kl == pytest.approx(0.5 - d - 1)
    with pytest.raises(ValueError, match="reference"):
        grpo_loss(logp, logp, torch.tensor([0.0]), torch.ones(1, 1), cfg)


def test_masked_row_does_not_change_the_loss() -> None:
    logp = torch.log(torch.tensor([[1.1, 0.9], [1.0, 1.0]]))
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    adv = torch.tensor([0.7, -0.3])
    for mode in ("seq_mean_token_mean", "token_mean", "seq_mean_token_sum_norm"):
        cfg = LossConfig(aggregation=mode, norm_tokens=4)  # type: ignore[arg-type]
        alone = grpo_loss(logp[:1], torch.zeros(1, 2), adv[:1], mask[:1], cfg)
        # a third row whose reward was masked: zero mask, whatever advantage it carries
        big_logp = torch.cat([logp, torch.log(torch.tensor([[3.0, 0.1]]))])
        big_mask = torch.cat([mask, torch.zeros(1, 2)])
        with_masked = grpo_loss(big_logp, torch.zeros(3, 2), torch.tensor([0.7, -0.3, 99.0]), big_mask, cfg)
        without = grpo_loss(logp, torch.zeros(2, 2), adv, mask, cfg)
        assert float(with_masked.loss) == pytest.approx(float(without.loss))
        assert float(alone.loss) != pytest.approx(float(without.loss))


def test_overlong_penalty() -> None:
    lengths = torch.tensor([10, 12, 14, 16, 20])
    # max 16, buffer 4: free up to 12, then -(n-12)/4, -1 at 16 and beyond
    assert torch.allclose(overlong_penalty(lengths, 16, 4), torch.tensor([0.0, 0.0, -0.5, -1.0, -1.0]))
    assert torch.equal(overlong_penalty(lengths, 16, 0), torch.zeros(5))
