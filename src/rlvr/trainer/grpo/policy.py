"""The policy seam: a causal LM that maps token ids to next-token logits, and its tokenizer.

Two implementations: any local Hugging Face causal LM directory (through transformers;
no hub is contacted), and a tiny built-in transformer with a character tokenizer for CPU
demos and tests. Both take explicit position ids, so that left-padded batches (how the
sampler lays prompts out) see the same positions as unpadded ones.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import Tensor, nn

TINY_CONFIG_FILE = "rlvr_tiny.json"
TINY_WEIGHTS_FILE = "rlvr_tiny.pt"
# What the character tokenizer knows: enough for arithmetic prompts and \boxed{} answers.
PIECES = ("\\boxed{",)
CHARSET = "0123456789+-*=()?.,:;!/ abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\\{}<>_\n"


class Tokenizer(Protocol):
    pad_id: int
    eos_id: int

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: list[int]) -> str: ...


class Policy(Protocol):
    """What the trainer uses of a model: logits, parameters, saving."""

    tokenizer: Tokenizer
    module: nn.Module

    def logits(self, ids: Tensor, attention: Tensor, positions: Tensor) -> Tensor: ...

    def save(self, directory: Path) -> None: ...


class CharTokenizer:
    """One id per character of `charset`, plus multi-character `pieces` (\\boxed{ by
    default: the answer's wrapper is one decision, not seven, which keeps CPU demos short).
    0 is padding, 1 end of sequence. Unknown characters are dropped (the built-in task
    uses none)."""

    pad_id = 0
    eos_id = 1

    def __init__(self, charset: str = CHARSET, pieces: tuple[str, ...] = PIECES) -> None:
        self.charset = charset
        self.pieces = pieces
        self.vocab = [*pieces, *charset]
        self.to_id = {c: i + 2 for i, c in enumerate(self.vocab)}

    @property
    def vocab_size(self) -> int:
        return len(self.vocab) + 2

    def encode(self, text: str) -> list[int]:
        ids, i = [], 0
        while i < len(text):
            piece = next((p for p in self.pieces if text.startswith(p, i)), text[i])
            if piece in self.to_id:
                ids.append(self.to_id[piece])
            i += len(piece)
        return ids

    def decode(self, ids: list[int]) -> str:
        return "".join(self.vocab[i - 2] for i in ids if i >= 2)


@dataclass(frozen=True)
class TinyConfig:
    vocab_size: int
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    max_positions: int = 64


class _Block(nn.Module):
    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.n_heads = cfg.n_heads
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.out = nn.Linear(cfg.d_model, cfg.d_model)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        hidden = 4 * cfg.d_model
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, hidden), nn.GELU(), nn.Linear(hidden, cfg.d_model))

    def forward(self, x: Tensor, allowed: Tensor) -> Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed.unsqueeze(1))
        x = x + self.out(attn.transpose(1, 2).reshape(b, t, d))
        out: Tensor = x + self.mlp(self.ln2(x))
        return out


class TinyTransformer(nn.Module):
    """A pre-norm decoder-only transformer, a few tens of thousands of parameters."""

    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = nn.Embedding(cfg.max_positions, cfg.d_model)
        self.blocks = nn.ModuleList(_Block(cfg) for _ in range(cfg.n_layers))
        self.ln = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=1 / math.sqrt(cfg.d_model))

    def forward(self, ids: Tensor, attention: Tensor, positions: Tensor) -> Tensor:
        t = ids.shape[1]
        causal = torch.ones(t, t, dtype=torch.bool, device=ids.device).tril()
        # Padding keys are hidden; every query still sees itself, so a padding row has a
        # finite (ignored) output instead of NaN.
        allowed = (causal & attention.bool().unsqueeze(1)) | torch.eye(t, dtype=torch.bool, device=ids.device)
        x = self.embed(ids) + self.pos(positions.clamp(0, self.cfg.max_positions - 1))
        for block in self.blocks:
            x = block(x, allowed)
        return self.head(self.ln(x))


class TinyPolicy:
    def __init__(self, model: TinyTransformer, tokenizer: CharTokenizer) -> None:
        self.module: nn.Module = model
        self.tokenizer: Tokenizer = tokenizer
        self.cfg = model.cfg

    @classmethod
    def new(cls, seed: int, **sizes: int) -> TinyPolicy:
        tokenizer = CharTokenizer()
        torch.manual_seed(seed)
        return cls(TinyTransformer(TinyConfig(vocab_size=tokenizer.vocab_size, **sizes)), tokenizer)

    @classmethod
    def load(cls, directory: Path) -> TinyPolicy:
        meta = json.loads((directory / TINY_CONFIG_FILE).read_text())
        model = TinyTransformer(TinyConfig(**meta["model"]))
        model.load_state_dict(torch.load(directory / TINY_WEIGHTS_FILE, weights_only=True))
        return cls(model, CharTokenizer(meta["charset"], tuple(meta["pieces"])))

    def logits(self, ids: Tensor, attention: Tensor, positions: Tensor) -> Tensor:
        return self.module(ids, attention, positions)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        tok = self.tokenizer
        assert isinstance(tok, CharTokenizer)
        meta = {"model": asdict(self.cfg), "charset": tok.charset, "pieces": list(tok.pieces)}
        (directory / TINY_CONFIG_FILE).write_text(json.dumps(meta))
        torch.save(self.module.state_dict(), directory / TINY_WEIGHTS_FILE)


class HFTokenizer:
    """A transformers tokenizer behind the trainer's Tokenizer protocol."""

    def __init__(self, tok: object) -> None:
        from transformers import PreTrainedTokenizerBase

        assert isinstance(tok, PreTrainedTokenizerBase)
        self.tok = tok
        if tok.eos_token_id is None:
            raise ValueError("the tokenizer has no eos token: generation could never stop")
        self.eos_id = int(tok.eos_token_id)
        self.pad_id = int(tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id)

    def encode(self, text: str) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=False))

    def decode(self, ids: list[int]) -> str:
        return str(self.tok.decode(ids, skip_special_tokens=True))


class HFPolicy:
    """A local Hugging Face causal LM directory (config, weights, tokenizer)."""

    def __init__(self, directory: Path) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(str(directory), local_files_only=True)
        assert isinstance(model, nn.Module)
        # Dropout off for good: the ratio π/π_old must compare one function of the weights.
        self.module: nn.Module = model.train(False)
        self.hf_tokenizer = HFTokenizer(AutoTokenizer.from_pretrained(str(directory), local_files_only=True))
        self.tokenizer: Tokenizer = self.hf_tokenizer

    def logits(self, ids: Tensor, attention: Tensor, positions: Tensor) -> Tensor:
        out = self.module(input_ids=ids, attention_mask=attention, position_ids=positions)
        return out.logits

    def save(self, directory: Path) -> None:
        self.module.save_pretrained(str(directory))
        self.hf_tokenizer.tok.save_pretrained(str(directory))


def load_policy(model: str, seed: int) -> Policy:
    """`tiny` (a fresh built-in model), a directory saved by TinyPolicy, or a local Hugging
    Face causal LM directory."""
    if model == "tiny":
        return TinyPolicy.new(seed)
    directory = Path(model)
    if (directory / TINY_CONFIG_FILE).exists():
        return TinyPolicy.load(directory)
    if not (directory / "config.json").exists():
        raise ValueError(f"model: {model!r} is neither 'tiny' nor a local model directory with config.json")
    return HFPolicy(directory)
