"""Fixtures: the two real tokenizers (SmolLM2 49152 ids, byte-level BPE; Gemma 3 262144 ids,
SentencePiece) and their grammar compilers, built once per session; decode helpers."""

from __future__ import annotations

import numpy as np
import pytest

from runtime.structured import GrammarCompiler, Matcher


def load_tokenizer(name: str):
    from runtime.loading.presets import resolve_gguf
    from runtime.loading.tokenizer import Tokenizer

    return Tokenizer.from_gguf(resolve_gguf(name))  # `make install` installs both: missing, fail


@pytest.fixture(scope="session")
def smol_tok():
    return load_tokenizer("smollm2-135m")


@pytest.fixture(scope="session")
def smol(smol_tok):
    return GrammarCompiler(smol_tok)


@pytest.fixture(scope="session")
def gemma_tok():
    return load_tokenizer("gemma3-270m")


@pytest.fixture(scope="session")
def gemma(gemma_tok):
    return GrammarCompiler(gemma_tok)


def allowed_ids(row: np.ndarray, vocab_size: int) -> np.ndarray:
    """The ids whose bit is set (a second reading of the layout, by unpackbits)."""
    bits = np.unpackbits(row.view(np.uint8), bitorder="little")
    assert not bits[vocab_size:].any(), "bits set past the vocabulary"
    return np.nonzero(bits[:vocab_size])[0]


def mask_of(m: Matcher) -> np.ndarray:
    row = np.zeros(m.words, dtype=np.int32)
    m.fill_bitmask(row)
    return row


def greedy_random(m: Matcher, tok, *, seed: int, budget: int) -> tuple[list[int], bool]:
    """Greedy decoding on seeded random logits through the mask: (ids before the stop token, stopped)."""
    rng = np.random.default_rng(seed)
    out: list[int] = []
    stops = set(tok.stop_token_ids)
    for _ in range(budget):
        row = mask_of(m)
        bits = np.unpackbits(row.view(np.uint8), bitorder="little")[: m.vocab_size].astype(bool)
        logits = rng.standard_normal(m.vocab_size).astype(np.float32)
        token = int(np.argmax(np.where(bits, logits, -np.inf)))
        assert bits[token], "the mask allowed nothing"
        assert m.accept(token), f"accept({token}) failed: {m.error}"
        if token in stops:
            assert m.is_terminated()
            return out, True
        out.append(token)
        if m.is_terminated():  # nothing but a stop token can follow
            return out, True
    return out, False
