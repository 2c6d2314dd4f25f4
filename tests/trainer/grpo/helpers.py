"""Small models for the trainer's tests, built in-process (no model hub is reachable)."""

from __future__ import annotations

from pathlib import Path

from rlvr.trainer.grpo.policy import CHARSET


def save_tiny_hf_model(directory: Path) -> Path:
    """A 1-layer GPT-2 and a character-level fast tokenizer, saved as a local model
    directory that `load_policy` reads through transformers."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    specials = ["<pad>", "<eos>", "<unk>"]
    vocab = {tok: i for i, tok in enumerate([*specials, *CHARSET])}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    core.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    config = GPT2Config(
        vocab_size=len(vocab),
        n_positions=64,
        n_embd=32,
        n_layer=1,
        n_head=2,
        bos_token_id=1,
        eos_token_id=1,
        pad_token_id=0,
    )
    GPT2LMHeadModel(config).save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    return directory
