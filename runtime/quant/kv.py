"""KV-cache storage formats: plain float pages, or 8-bit codes with one scale per token and kv head.

In: the K or V of this step's tokens, ``[T, kv_heads, head_dim]`` in the activation dtype. Out: what
``write_kv`` scatters into the cache. Readers (the attention backends) get the codes and the scales
and dequantize the pages they read; the model itself never sees which format the cache has (the
quantized cache is a different pytree, ``QuantizedPages`` in place of each page array).

Formats (``EngineConfig.kv_dtype``; the same names in ``runtime.kv_calc``)::

    float32 / bfloat16   pages [P, page, KVH, D] in that dtype
    int8                 codes int8 [P, page, KVH, D] + scales bfloat16 [P, page, KVH]
    fp8                  codes float8_e4m3fn [P, page, KVH, D] + scales bfloat16 [P, page, KVH]

Quantization is symmetric, per token and kv head (one vector of ``head_dim`` values)::

    scale = absmax(x) / QMAX          QMAX = 127 (int8), 448 (the largest finite e4m3fn)
    code  = round(x / scale)          int8: round to nearest; fp8: the cast rounds to nearest e4m3
    x'    = code * scale

Why bfloat16 scales: the codes are computed against the scale *as stored* (rounded to bfloat16
first), so the rounding of the scale costs no accuracy: it only moves the grid. An int8 value still
sits within half a step (scale / 2) of its dequantized code: where the scale rounded down, the
absmax element clips by at most absmax * 2^-8 = 127 / 256 steps. bfloat16 has float32's exponent range, so no scale overflows or
underflows. It stores 2 bytes per 64 codes for head_dim 64 (3%), against 4 (6%) for float32: that
is the difference between 1.94x and 1.88x the tokens of a bfloat16 cache in the same bytes.

Why fp8 keeps a scale: e4m3fn's relative precision (3 mantissa bits) does not depend on a scale,
but its range does (max 448, subnormal below 2^-6): scaling each vector to absmax = 448 keeps small
heads out of the subnormals and outliers out of NaN (e4m3fn has no infinity: a cast of 449+ gives
NaN). It also keeps one code path and one byte count for both 8-bit formats.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from pallas_kernels.devices import check_gpu_kv_dtype
from runtime.api import KV_DTYPE_NAMES, QUANTIZED_KV_DTYPE_NAMES
from runtime.dtypes import DTYPES

SCALE_DTYPE = jnp.bfloat16

# name (runtime.api.QUANTIZED_KV_DTYPE_NAMES) -> code dtype; QMAX: the code the absmax of each vector maps to.
QUANTIZED_KV_DTYPES = {"int8": jnp.dtype(jnp.int8), "fp8": jnp.dtype(jnp.float8_e4m3fn)}
QMAX = {jnp.dtype(jnp.int8): 127.0, jnp.dtype(jnp.float8_e4m3fn): 448.0}
# KV cache storage, name (runtime.api.KV_DTYPE_NAMES) -> dtype: the float dtypes, or 8-bit codes + scales.
KV_DTYPES = {**DTYPES, **QUANTIZED_KV_DTYPES}
assert tuple(QUANTIZED_KV_DTYPES) == QUANTIZED_KV_DTYPE_NAMES and tuple(KV_DTYPES) == KV_DTYPE_NAMES, KV_DTYPES


class QuantizedPages(NamedTuple):
    """A quantized page array: stands where a float ``[P, page, KVH, D]`` page array would."""

    codes: jax.Array  # int8 | float8_e4m3fn [P, page, KVH, D]
    scales: jax.Array  # bfloat16 [P, page, KVH]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.codes.shape

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes) + int(self.scales.nbytes)


def is_quantized(dtype) -> bool:
    return dtype is not None and jnp.dtype(dtype) in QMAX


def quantize(x: jax.Array, code_dtype) -> tuple[jax.Array, jax.Array]:
    """x [..., D] -> (codes [..., D] in code_dtype, scales [...] bfloat16), one scale per vector.

    A vector of zeros gets scale 0 and codes 0 (dequantizes to exact zeros).
    """
    code_dtype = jnp.dtype(code_dtype)
    qmax = QMAX[code_dtype]
    x32 = x.astype(jnp.float32)
    absmax = jnp.max(jnp.abs(x32), axis=-1)
    scales = (absmax / qmax).astype(SCALE_DTYPE)
    s = scales.astype(jnp.float32)[..., None]
    y = jnp.clip(x32 / jnp.where(s > 0, s, 1.0), -qmax, qmax)  # clip: the scale may have rounded down
    if code_dtype == jnp.int8:
        y = jnp.round(y)  # astype alone truncates toward zero
    return y.astype(code_dtype), scales


def dequantize(codes: jax.Array, scales: jax.Array, dtype=jnp.float32) -> jax.Array:
    """(codes [..., D], scales [...]) -> [..., D] in dtype (computed in float32)."""
    return (codes.astype(jnp.float32) * scales.astype(jnp.float32)[..., None]).astype(dtype)


def allocate_pages(shape: tuple[int, int, int, int], dtype) -> jax.Array | QuantizedPages:
    """Zeroed pages ``[P, page, KVH, D]``: a float array, or codes + scales for an 8-bit dtype."""
    if is_quantized(dtype):
        return QuantizedPages(jnp.zeros(shape, dtype), jnp.zeros(shape[:3], SCALE_DTYPE))
    return jnp.zeros(shape, dtype)


def split_pages(pages) -> tuple[jax.Array, jax.Array | None]:
    """Page array -> (pages or codes, scales or None), the form the attention backends take."""
    if isinstance(pages, QuantizedPages):
        return pages.codes, pages.scales
    return pages, None


def kv_dtype_support_error(kv_dtype: str, backend: str, platform: str | None = None) -> str | None:
    """Why ``kv_dtype`` cannot run with this attention backend here, or None when it can.

    int8 needs nothing special. fp8 needs XLA float8 converts on the device (probed) and, for the
    compiled Pallas kernel on a GPU, Triton's e4m3 type, which needs compute capability 8.9+.
    """
    if kv_dtype != "fp8":
        return None
    platform = platform or jax.default_backend()
    try:
        probe = jax.jit(lambda x: x.astype(jnp.float8_e4m3fn).astype(jnp.float32))(jnp.asarray([1.5, -3.0]))
        if not np.array_equal(np.asarray(probe), [1.5, -3.0]):
            return f"kv_dtype 'fp8' is not supported on {platform}: float8_e4m3fn converts give wrong values"
    except Exception as exc:  # XLA refuses the type on this backend
        return f"kv_dtype 'fp8' is not supported on {platform}: XLA cannot convert float8_e4m3fn ({exc})"
    if backend in ("pallas", "pallas_gpu") and platform in ("gpu", "cuda"):
        try:  # the kernel's own check (it refuses the same way when called directly)
            check_gpu_kv_dtype(jnp.float8_e4m3fn, None)
        except ValueError as exc:
            return f"{exc}, or attention_backend 'xla'"
    return None
