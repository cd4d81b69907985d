"""The tiny random Llama's engine as most engine tests build it (tests/support/tiny_gguf.py writes the
model; the ``tiny_path`` fixture in tests/conftest.py holds its path)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from runtime.api import EngineConfig

if TYPE_CHECKING:
    from runtime.engine import LLMEngine

TINY_PROMPTS = ["hello there", "the cat sat on the mat and then", "in", "a b c d e f g h i j k l m n o p q r s"]
# Small enough to compile in seconds: 4 sequences, 32 tokens a step, 40 blocks of 16 tokens.
TINY_LIMITS = dict(max_num_seqs=4, max_num_batched_tokens=32, max_model_len=128, num_blocks=40)


def tiny_config(path, **overrides) -> EngineConfig:
    """The tiny model's EngineConfig: ``TINY_LIMITS``, no persistent compilation cache, then ``overrides``."""
    return EngineConfig(**{"gguf_path": str(path), **TINY_LIMITS, "compilation_cache": False, **overrides})


def tiny_engine(path, **overrides) -> LLMEngine:
    """An LLMEngine over ``tiny_config(path, **overrides)``."""
    from runtime.engine import LLMEngine  # loads JAX: only where an engine is built

    return LLMEngine(tiny_config(path, **overrides))
