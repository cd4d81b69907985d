"""The tiny random Llama's engine as most engine tests build it (tests/support/tiny_gguf.py writes the
model; the ``tiny_path`` fixture in tests/conftest.py holds its path)."""

from __future__ import annotations

from runtime.api import EngineConfig
from runtime.engine import LLMEngine

TINY_PROMPTS = ["hello there", "the cat sat on the mat and then", "in", "a b c d e f g h i j k l m n o p q r s"]


def tiny_engine(path: str, **overrides) -> LLMEngine:
    """Small enough to compile in seconds: 4 sequences, 32 tokens a step, 40 blocks of 16 tokens."""
    config = dict(
        gguf_path=path,
        max_num_seqs=4,
        max_num_batched_tokens=32,
        max_model_len=128,
        num_blocks=40,
        block_size=16,
        compilation_cache=False,
    )
    return LLMEngine(EngineConfig(**{**config, **overrides}))
