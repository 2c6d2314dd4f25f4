"""A tiny random GPT-2 and a character tokenizer, built in-process: nothing comes from a
model hub."""

from __future__ import annotations

import string

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

SPECIAL = ["<pad>", "<eos>", "<unk>"]
# By default no digits, '.' or '-': whatever the random model writes, `sleepy` cannot read it as a
# number of seconds, so it masks every item.
CHARS = sorted(set(string.ascii_letters + " +?:<>/\n{}\\"))
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)


def char_tokenizer(extra: str = "") -> PreTrainedTokenizerFast:
    """`extra`: characters beyond CHARS (digits, to decode answers)."""
    vocab = {tok: i for i, tok in enumerate(SPECIAL + sorted(set(CHARS) | set(extra)))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_gpt2(tokenizer: PreTrainedTokenizerFast) -> GPT2LMHeadModel:
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_layer=2,
        n_embd=64,
        n_head=2,
        n_positions=128,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return GPT2LMHeadModel(config)
