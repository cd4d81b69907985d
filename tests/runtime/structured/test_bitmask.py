"""apply_bitmask (JAX) against its NumPy reference: hand-worked rows first, then random shapes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime.structured.bitmask import apply_bitmask, apply_bitmask_reference


def words_for(allowed: list[set[int]], vocab: int, words: int | None = None) -> np.ndarray:
    w = words or (vocab + 31) // 32
    out = np.zeros((len(allowed), w), dtype=np.uint32)
    for s, ids in enumerate(allowed):
        for t in ids:
            out[s, t >> 5] |= np.uint32(1 << (t & 31))
    return out.view(np.int32)


def test_reference_by_hand():
    # V = 40: two words per row. Row 0 allows ids 0, 31 (bit 31 of word 0: the int32 sign bit, -2**31
    # if alone) and 33 (bit 1 of word 1); row 1 allows nothing but is disabled, so it passes through.
    logits = np.arange(80, dtype=np.float32).reshape(2, 40)
    mask = words_for([{0, 31, 33}, set()], 40)
    assert mask[0, 0] == np.int32(1 - 2**31) and mask[0, 1] == 2  # 1 | (1 << 31) as int32; 1 << 1
    out = apply_bitmask_reference(logits, mask, np.array([True, False]))
    assert [t for t in range(40) if np.isfinite(out[0, t])] == [0, 31, 33]
    assert out[0, 31] == 31.0 and out[0, 33] == 33.0
    np.testing.assert_array_equal(out[1], logits[1])


def test_matches_reference_by_hand():
    logits = np.arange(80, dtype=np.float32).reshape(2, 40)
    mask = words_for([{0, 31, 33}, {39}], 40)
    enabled = np.array([True, True])
    got = np.asarray(apply_bitmask(jnp.asarray(logits), jnp.asarray(mask), jnp.asarray(enabled)))
    np.testing.assert_array_equal(got, apply_bitmask_reference(logits, mask, enabled))


@pytest.mark.parametrize(
    "seqs, vocab, extra_words", [(1, 1, 0), (3, 31, 0), (4, 32, 0), (5, 33, 0), (8, 1000, 2), (2, 4099, 0)]
)
def test_matches_reference_random(seqs, vocab, extra_words):
    rng = np.random.default_rng(vocab)
    words = (vocab + 31) // 32 + extra_words  # a wider buffer than the vocabulary is allowed
    mask = rng.integers(-(2**31), 2**31, size=(seqs, words), dtype=np.int64).astype(np.int32)
    logits = rng.standard_normal((seqs, vocab)).astype(np.float32)
    enabled = rng.random(seqs) < 0.7
    got = np.asarray(apply_bitmask(jnp.asarray(logits), jnp.asarray(mask), jnp.asarray(enabled)))
    np.testing.assert_array_equal(got, apply_bitmask_reference(logits, mask, enabled))


def test_one_compile_for_any_mask_and_enabled_rows():
    logits = jnp.zeros((4, 100), jnp.float32)
    fn = jax.jit(lambda l, m, e: apply_bitmask(l, m, e))
    for seed in range(3):
        rng = np.random.default_rng(seed)
        mask = jnp.asarray(rng.integers(0, 2**31, size=(4, 4)).astype(np.int32))
        fn(logits, mask, jnp.asarray(rng.random(4) < 0.5)).block_until_ready()
    assert fn._cache_size() == 1


def test_bfloat16_logits_keep_their_dtype():
    logits = jnp.ones((1, 40), jnp.bfloat16)
    out = apply_bitmask(logits, jnp.asarray(words_for([{3}], 40)), jnp.array([True]))
    assert out.dtype == jnp.bfloat16 and int(jnp.isfinite(out).sum()) == 1


def test_shape_errors():
    with pytest.raises(ValueError, match="bits for a vocabulary of 40"):
        apply_bitmask(jnp.zeros((1, 40)), jnp.zeros((1, 1), jnp.int32), jnp.array([True]))
    with pytest.raises(ValueError, match="row counts differ"):
        apply_bitmask(jnp.zeros((2, 40)), jnp.zeros((1, 2), jnp.int32), jnp.array([True, True]))
