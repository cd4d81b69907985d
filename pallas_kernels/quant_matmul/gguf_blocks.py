"""GGUF's Q8_0 / Q4_1 blocks as the file stores them: the jnp dequantizer and reference matmul (the
contract of the CPU kernel ``JaxserveGgufMatmul`` in runtime/quant/quant_matmul.cc, and the path every
other platform takes until it has a kernel of its own).

    type   block (32 weights)                 value                 bytes / weight
    Q8_0   f16 d, int8 q[32]                   d * q                 34 / 32
    Q4_1   f16 d, f16 m, uint8 qs[16]          d * nibble + m        20 / 32
           (byte j: element j low, element j + 16 high)

``blocks``: uint8 [rows, K / 32 * B], row n = output feature n's blocks.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

BLOCK_BYTES = {"q8_0": 34, "q4_1": 20}


def _f16(pair: jax.Array) -> jax.Array:
    """uint8 [..., 2] (little-endian) -> float32 [...]."""
    return jax.lax.bitcast_convert_type(pair, jnp.float16).astype(jnp.float32)


def dequantize_blocks(blocks: jax.Array, block_type: str, in_features: int) -> jax.Array:
    """uint8 [rows, K / 32 * B] -> float32 [rows, K], the values ``gguf.quants.dequantize`` gives."""
    rows = blocks.shape[0]
    b = blocks.reshape(rows, in_features // 32, BLOCK_BYTES[block_type])
    if block_type == "q8_0":
        q = jax.lax.bitcast_convert_type(b[..., 2:34], jnp.int8).astype(jnp.float32)
        w = q * _f16(b[..., 0:2])[..., None]
    else:
        qs = b[..., 4:20]
        codes = jnp.concatenate([qs & 0xF, qs >> 4], axis=-1).astype(jnp.float32)  # elements j, then j + 16
        w = codes * _f16(b[..., 0:2])[..., None] + _f16(b[..., 2:4])[..., None]
    return w.reshape(rows, in_features)


def gguf_matmul_reference(x: jax.Array, blocks: jax.Array, *, block_type: str, in_features: int) -> jax.Array:
    """x [M, K] . dequantize(blocks)^T -> [M, N] in x.dtype (float32 accumulation)."""
    w = dequantize_blocks(blocks, block_type, in_features)
    return jnp.dot(x.astype(jnp.float32), w.T, precision=jax.lax.Precision.DEFAULT).astype(x.dtype)
