"""The policy seam: the built-in tiny model and a local Hugging Face model, sampling,
and a gradient step that lowers the loss on its own batch."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rlvr.trainer.grpo.losses import LossConfig, grpo_loss
from rlvr.trainer.grpo.policy import CharTokenizer, HFPolicy, Policy, TinyPolicy, load_policy
from rlvr.trainer.grpo.sampling import GenerationConfig, PolicySampler, _top_p_filter, layout, token_logprobs
from tests.trainer.grpo.helpers import save_tiny_hf_model

PROMPTS = ["3+4=", "12+7=", "1+1=", "9+10="]


def _policies(tmp_path: Path) -> list[Policy]:
    return [TinyPolicy.new(seed=0), load_policy(str(save_tiny_hf_model(tmp_path / "hf")), seed=0)]


def test_char_tokenizer_round_trip_and_pieces() -> None:
    tok = CharTokenizer()
    ids = tok.encode("3*4=\\boxed{12}")
    assert tok.decode(ids) == "3*4=\\boxed{12}"
    assert len(ids) == 8  # \boxed{ is one token
    assert tok.pad_id not in ids and tok.eos_id not in ids


def test_top_p_keeps_the_smallest_nucleus() -> None:
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    kept = torch.isfinite(_top_p_filter(logits, 0.7))
    assert kept.tolist() == [[True, True, False, False]]
    assert torch.isfinite(_top_p_filter(logits, 0.4)).tolist() == [[True, False, False, False]]
    assert torch.equal(_top_p_filter(logits, 1.0), logits)


def test_local_hf_directory_loads_through_transformers(tmp_path: Path) -> None:
    policy = load_policy(str(save_tiny_hf_model(tmp_path / "hf")), seed=0)
    assert isinstance(policy, HFPolicy)
    assert policy.tokenizer.decode(policy.tokenizer.encode("3+4=")) == "3+4="
    with pytest.raises(ValueError, match="model"):
        load_policy(str(tmp_path / "missing"), seed=0)


def test_tiny_policy_saves_and_loads(tmp_path: Path) -> None:
    policy = TinyPolicy.new(seed=0)
    policy.save(tmp_path / "m")
    again = load_policy(str(tmp_path / "m"), seed=1)
    for a, b in zip(policy.module.state_dict().values(), again.module.state_dict().values(), strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("which", [0, 1], ids=["tiny", "hf"])
def test_sampling_is_reproducible_and_padding_does_not_change_logprobs(tmp_path: Path, which: int) -> None:
    policy = _policies(tmp_path)[which]
    tok = policy.tokenizer
    sampler = PolicySampler(policy)
    cfg = GenerationConfig(max_new_tokens=5, temperature=1.0, top_p=0.9)
    prompts = [tok.encode(p) for p in PROMPTS]
    a = sampler.generate(prompts, cfg, torch.Generator().manual_seed(3))
    b = sampler.generate(prompts, cfg, torch.Generator().manual_seed(3))
    assert a.texts == b.texts
    assert int(a.lengths.max()) <= 5
    # a left-padded row scores its tokens as the same row alone does
    both, _ = token_logprobs(policy, a, 1.0)
    one = layout([prompts[0]], [[int(t) for t, m in zip(a.ids[0], a.response_mask[0], strict=True) if m]], tok.pad_id)
    alone, _ = token_logprobs(policy, one, 1.0)
    got = both[0][a.response_mask[0].bool()]
    assert torch.allclose(got, alone[0][one.response_mask[0].bool()], atol=1e-5)


@pytest.mark.parametrize("which", [0, 1], ids=["tiny", "hf"])
def test_a_gradient_step_lowers_the_loss_on_its_batch(tmp_path: Path, which: int) -> None:
    policy = _policies(tmp_path)[which]
    tok = policy.tokenizer
    rollout = PolicySampler(policy).generate(
        [tok.encode(p) for p in PROMPTS for _ in range(2)], GenerationConfig(6), torch.Generator().manual_seed(0)
    )
    advantages = torch.tensor([1.0, -1.0, -1.0, 1.0, 0.5, -0.5, 1.0, -1.0])
    mask = rollout.response_mask.float()
    with torch.no_grad():
        old, _ = token_logprobs(policy, rollout, 1.0)
    cfg = LossConfig()

    def loss() -> torch.Tensor:
        return grpo_loss(token_logprobs(policy, rollout, 1.0)[0], old, advantages, mask, cfg).loss

    before = loss()
    optimizer = torch.optim.SGD(policy.module.parameters(), lr=0.05)
    optimizer.zero_grad()
    before.backward()
    optimizer.step()
    with torch.no_grad():
        assert float(loss()) < float(before.detach())
