"""Token bitmasks applied to logits inside the jitted sampler (JAX), with the NumPy reference.

In: logits ``[S, V]`` float32 from the model, the host-filled bitmask ``[S, W]`` int32
(``W = ceil(V / 32)``; layout in runtime/structured/matcher.py) and ``enabled [S]`` bool (rows with a
grammar). Out: logits with every disallowed token at ``-inf``; rows with ``enabled=False`` unchanged.

Shapes are the only static inputs, so a batch with or without grammars, or with different grammars,
reuses one compiled program: the engine keeps a ``[max_seqs, W]`` bitmask buffer, fills the grammar
rows on the host each step and passes ``enabled`` per row.

Bit unpacking, per row (32 ids per word, little-endian bits)::

    bitmask[s, w]  --logical shift by 0..31, & 1-->  allowed[s, 32*w + b]   b = 0..31
    [S, W]                                           [S, W, 32] -> [S, 32*W] -> [:, :V]

A logical shift (not ``>>`` on int32, which is arithmetic) keeps bit 31 from smearing, though ``& 1``
would hide it anyway.

This module imports JAX; keep it out of the gateway's imports (``runtime.structured`` itself does not
import it).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def _check(logits_shape: tuple[int, ...], bitmask_shape: tuple[int, ...], enabled_shape: tuple[int, ...]) -> None:
    if len(logits_shape) != 2 or len(bitmask_shape) != 2 or len(enabled_shape) != 1:
        raise ValueError(
            f"want logits [S, V], bitmask [S, W], enabled [S]; got {logits_shape}, {bitmask_shape}, {enabled_shape}"
        )
    s, v = logits_shape
    if bitmask_shape[0] != s or enabled_shape[0] != s:
        raise ValueError(f"row counts differ: logits {s}, bitmask {bitmask_shape[0]}, enabled {enabled_shape[0]}")
    if bitmask_shape[1] * 32 < v:
        raise ValueError(
            f"bitmask has {bitmask_shape[1]} words per row: {bitmask_shape[1] * 32} bits for a vocabulary of {v}"
        )


@jax.jit
def apply_bitmask(logits: jax.Array, bitmask: jax.Array, enabled: jax.Array) -> jax.Array:
    """Disallowed tokens of enabled rows to ``-inf``.

    logits:  [S, V] float (any float dtype; returned in the same dtype)
    bitmask: [S, W] int32, W >= ceil(V / 32); bit ``t & 31`` of word ``t >> 5`` set = token t allowed
    enabled: [S] bool; False rows pass through untouched
    returns: [S, V], logits' dtype
    """
    _check(logits.shape, bitmask.shape, enabled.shape)
    s, v = logits.shape
    shifts = jnp.arange(32, dtype=jnp.uint32)
    words = jax.lax.bitcast_convert_type(bitmask, jnp.uint32)  # [S, W]
    bits = jax.lax.shift_right_logical(words[:, :, None], shifts[None, None, :]) & jnp.uint32(1)  # [S, W, 32]
    allowed = bits.reshape(s, -1)[:, :v].astype(jnp.bool_)  # [S, V]
    allowed = allowed | ~enabled[:, None]
    return jnp.where(allowed, logits, jnp.asarray(-jnp.inf, logits.dtype))


def apply_bitmask_reference(logits: np.ndarray, bitmask: np.ndarray, enabled: np.ndarray) -> np.ndarray:
    """NumPy reference for ``apply_bitmask``: the bits read one id at a time."""
    _check(logits.shape, bitmask.shape, enabled.shape)
    out = np.array(logits, copy=True)
    words = bitmask.astype(np.int64) & 0xFFFFFFFF
    for s in range(logits.shape[0]):
        if not enabled[s]:
            continue
        for t in range(logits.shape[1]):
            if not (words[s, t >> 5] >> (t & 31)) & 1:
                out[s, t] = -np.inf
    return out
