"""Weight-only quantized matmul: ``y[M, N] = x[M, K] . dequant(W)[N, K]^T``, float32 accumulation.

Data flow: ``runtime.quant.weights.QuantizedMatrix.matvec`` flattens activations to ``x [M, K]`` and calls
one of three implementations that share one validation function and one semantics (and the two
here, with the TPU kernel, one signature: ``quant_matmul_api``):

* ``quant_matmul``            Pallas kernel (Triton-lowerable; ``interpret=True`` on CPU).
* ``quant_matmul_reference``  jnp: dequantize the whole matrix, then one dot. XLA's path on any
                              backend and the definition the kernels are tested against.
* runtime/quant/quant_matmul.cc  the CPU kernel (an XLA FFI call), same layouts.

Layouts (rows of W are output features, row-major, as llama.cpp and PyTorch store them):

* int8:  ``q int8[N, K]``, ``scale f32[N]``: ``W[n, k] = q[n, k] * scale[n]`` (per output channel).
* int4:  ``q uint8[N, Kp // 2]``, ``scale f32[N, Kp // G]`` with ``Kp = ceil(K / G) * G``: groups of
  ``G`` consecutive columns share a scale; codes are offset binary (``W = (nibble - 8) * scale``,
  padded columns hold code 8 = 0.0). Each group is stored as G/2 bytes, the first half of the group
  in the low nibbles and the second half in the high nibbles::

      group g (G = 32):  byte      0      1     ...   15
                         low 4b    k=0    k=1   ...   k=15      (+ g*G)
                         high 4b   k=16   k=17  ...   k=31      (+ g*G)

  so one load of G/2 bytes unpacks, with a mask and a shift, into two runs of consecutive columns
  that each meet a contiguous slice of x: no interleaving shuffles on any backend.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

from pallas_kernels.api import public_kernel

SUPPORTED_X_DTYPES = (jnp.dtype(jnp.float32), jnp.dtype(jnp.bfloat16))
INT4_OFFSET = 8  # offset-binary nibbles: code = value + 8, value in [-7, 7]


@dataclasses.dataclass(frozen=True)
class BlockSizes:
    """Tuning knobs of the Pallas kernel (static; they never change the result).

    block_m: rows of x per program.  block_n: rows of W (output columns) per program.
    block_k: columns of K per inner-loop step (int8 only; int4 steps one group at a time).
    Compiled on GPU (Triton) each must be a power of two >= 16 (matmul tile dims).
    num_warps, num_stages: Triton's warps per program and software-pipelining depth of the K loop
    (compiled only).
    """

    block_m: int = 16
    block_n: int = 64
    block_k: int = 128
    num_warps: int = 4
    num_stages: int = 2

    def __post_init__(self):
        for name in ("block_m", "block_n", "block_k", "num_warps", "num_stages"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"BlockSizes.{name} must be an int >= 1, got {value!r}")


class Dims(NamedTuple):
    """Sizes read off validated inputs."""

    m: int  # rows of x
    n: int  # rows of W (output features)
    k: int  # input features (columns of x)
    k_padded: int  # K for int8; ceil(K / G) * G for int4
    num_groups: int  # scale columns: 1 for int8


def _require(cond: bool, msg: str) -> None:
    if not cond:
        raise ValueError(msg)


def padded_in_features(in_features: int, bits: int, group: int) -> int:
    return in_features if bits == 8 else -(-in_features // group) * group


def validate_inputs(x, q, scale, *, bits: int, group: int, in_features: int) -> Dims:
    """Checks shapes, dtypes and static arguments; raises ValueError naming the bad input.

    Only static facts are checked, so this works on tracers. ``x`` may be None (dequantize only).
    """
    _require(bits in (4, 8), f"bits must be 4 or 8, got {bits!r}")
    _require(isinstance(in_features, int) and in_features >= 1, f"in_features must be an int >= 1, got {in_features!r}")
    if bits == 4:
        _require(
            isinstance(group, int) and group >= 32 and group & (group - 1) == 0,
            f"int4 group must be a power of two >= 32, got {group!r}",
        )
    K = in_features
    Kp = padded_in_features(K, bits, group)
    _require(q.ndim == 2, f"q must be 2-D [N, {'K' if bits == 8 else 'Kp // 2'}], got shape {tuple(q.shape)}")
    N = q.shape[0]
    if bits == 8:
        _require(q.dtype == jnp.int8, f"int8 q must be int8, got {q.dtype}")
        _require(q.shape[1] == K, f"int8 q must be [N, K={K}], got {tuple(q.shape)}")
        _require(tuple(scale.shape) == (N,), f"int8 scale must be [N={N}], got {tuple(scale.shape)}")
    else:
        _require(q.dtype == jnp.uint8, f"int4 q must be uint8 (two codes per byte), got {q.dtype}")
        _require(q.shape[1] == Kp // 2, f"int4 q must be [N, Kp // 2 = {Kp // 2}] (Kp = {Kp}), got {tuple(q.shape)}")
        _require(
            tuple(scale.shape) == (N, Kp // group),
            f"int4 scale must be [N, Kp // G] = {(N, Kp // group)}, got {tuple(scale.shape)}",
        )
    _require(scale.dtype == jnp.float32, f"scale must be float32, got {scale.dtype}")
    M = 0
    if x is not None:
        _require(x.ndim == 2 and x.shape[1] == K, f"x must be [M, K={K}], got shape {tuple(x.shape)}")
        _require(jnp.dtype(x.dtype) in SUPPORTED_X_DTYPES, f"x must be float32 or bfloat16, got {x.dtype}")
        M = x.shape[0]
    return Dims(M, N, K, Kp, 1 if bits == 8 else Kp // group)


class QuantCall(NamedTuple):
    """One call of a quantized matmul after ``validate_inputs``: what an implementation receives."""

    x: jax.Array  # [M, K] float32 | bfloat16
    q: jax.Array  # int8 [N, K] (bits=8) or uint8 [N, Kp // 2] (bits=4)
    scale: jax.Array  # float32 [N] (bits=8) or [N, Kp // G] (bits=4)
    bits: int
    group: int
    dims: Dims


QUANT_ARGS_DOC = """
    Args shared by every implementation (its own knobs above are static and keyword-only too):
      x:           [M, K]  float32 | bfloat16 activations
      q:           int8 [N, K] (bits=8) or uint8 [N, Kp // 2] (bits=4, two codes a byte; ``kernel``'s layouts)
      scale:       float32 [N] (bits=8) or float32 [N, Kp // G] (bits=4)
      bits:        8 or 4 (static)
      group:       int4 group size G along K, a power of two >= 32; ignored for int8 (static)
      in_features: K (static; for int4 the stored rows are padded to Kp = ceil(K / G) * G)
    Returns:
      [M, N] in x.dtype, accumulated in float32.
"""


def quant_matmul_api(impl):
    """Gives an implementation (the reference, the GPU kernel, the TPU kernel) the one public signature.

    ``impl(call: QuantCall, *, <knobs>)`` becomes the jitted ``f(x, q, scale, *, bits, group=0,
    in_features, <knobs>)``: the inputs go through ``validate_inputs`` before ``impl`` sees them; bits,
    group, in_features and impl's keyword-only knobs are static. The public docstring is impl's
    followed by ``QUANT_ARGS_DOC``.
    """

    def public(x, q, scale, *, bits: int, group: int = 0, in_features: int, **knob_values) -> jax.Array:
        dims = validate_inputs(x, q, scale, bits=bits, group=group, in_features=in_features)
        return impl(QuantCall(x, q, scale, bits, group, dims), **knob_values)

    return public_kernel(public, impl, static=("bits", "group", "in_features"), args_doc=QUANT_ARGS_DOC)


# --------------------------------------------------------------------------------------------
# Reference (XLA: dequantize, then one dot)
# --------------------------------------------------------------------------------------------


def unpack_int4(q: jax.Array, group: int) -> jax.Array:
    """uint8 [..., Kp // 2] -> int32 codes minus the offset, [..., Kp], in column order."""
    half = group // 2
    g = q.reshape(q.shape[:-1] + (q.shape[-1] // half, half))  # (..., groups, G/2)
    lo = (g & 0xF).astype(jnp.int32) - INT4_OFFSET
    hi = (g >> 4).astype(jnp.int32) - INT4_OFFSET
    return jnp.concatenate([lo, hi], axis=-1).reshape(q.shape[:-1] + (q.shape[-1] * 2,))


def dequantize(q, scale, *, bits: int, group: int, in_features: int) -> jax.Array:
    """Codes and scales -> float32 W [..., K]; leading axes are rows (q[idx] of a matrix works too)."""
    if bits == 8:
        return q.astype(jnp.float32) * scale[..., None]
    codes = unpack_int4(q, group).astype(jnp.float32)  # (..., Kp)
    w = codes.reshape(scale.shape + (group,)) * scale[..., None]  # (..., groups, G)
    return w.reshape(codes.shape)[..., :in_features]


@quant_matmul_api
def quant_matmul_reference(call: QuantCall, *, precision: lax.Precision = lax.Precision.HIGHEST):
    """``x [M, K] . dequantize(q, scale) [N, K]^T`` in float32 -> [M, N] in x.dtype.

    XLA materializes the float32 matrix (on CPU it does not fuse the convert into the dot), so this
    is the slow-but-obvious path.

    Knobs:
      precision:   HIGHEST for tests; serving on TPU passes DEFAULT, as the float model's own matmuls
                   use (static)
    """
    x, q, scale, bits, group, dims = call
    w = dequantize(q, scale, bits=bits, group=group, in_features=dims.k)  # (N, K)
    y = lax.dot_general(x.astype(jnp.float32), w, (((1,), (1,)), ((), ())), precision=precision)
    return y.astype(x.dtype)


# --------------------------------------------------------------------------------------------
# Pallas kernel
# --------------------------------------------------------------------------------------------


def _quant_matmul_kernel(
    x_ref,  # [M, K]                       float32 | bfloat16
    q_ref,  # int8 [N, K] | uint8 [N, Kp // 2]
    s_ref,  # float32 [N] | float32 [N, Kp // G]
    o_ref,  # [M, N]                       dtype of x
    *,
    bits: int,
    group: int,
    block_m: int,
    block_n: int,
    block_k: int,
):
    """One program: a [block_m, block_n] tile of y, walking K (``block_k`` columns, or one int4
    group, per step). Every ref is the whole array; tile edges past M, N or K are masked loads (zeros)
    and a masked store, so no shape needs padding and no weight is copied."""
    M, K = x_ref.shape
    N = q_ref.shape[0]
    m0, n0 = pl.program_id(0) * block_m, pl.program_id(1) * block_n
    row_ok = m0 + jnp.arange(block_m) < M  # (block_m,)
    col_ok = n0 + jnp.arange(block_n) < N  # (block_n,)
    f32 = x_ref.dtype == jnp.float32
    precision = lax.Precision.HIGHEST if f32 else lax.Precision.DEFAULT

    def dot_t(a, b):  # (bm, k) . (bn, k)^T -> (bm, bn) float32
        return lax.dot_general(
            a, b.astype(a.dtype), (((1,), (1,)), ((), ())), precision=precision, preferred_element_type=jnp.float32
        )

    def load_x(k0, width):  # (block_m, width); columns >= K read as 0
        k_ok = k0 + jnp.arange(width) < K
        return plgpu.load(x_ref.at[pl.ds(m0, block_m), pl.ds(k0, width)], mask=row_ok[:, None] & k_ok[None, :], other=0)

    acc = jnp.zeros((block_m, block_n), jnp.float32)
    if bits == 8:

        def body(kb, acc):
            k0 = kb * block_k
            k_ok = k0 + jnp.arange(block_k) < K
            w = plgpu.load(
                q_ref.at[pl.ds(n0, block_n), pl.ds(k0, block_k)], mask=col_ok[:, None] & k_ok[None, :], other=0
            )  # (block_n, block_k) int8
            return acc + dot_t(load_x(k0, block_k), w.astype(jnp.float32))

        acc = lax.fori_loop(0, pl.cdiv(K, block_k), body, acc)
        s = plgpu.load(s_ref.at[pl.ds(n0, block_n)], mask=col_ok, other=0)  # (block_n,)
        acc = acc * s[None, :]
    else:
        half = group // 2
        num_groups = s_ref.shape[1]

        def body(g, acc):
            codes = plgpu.load(
                q_ref.at[pl.ds(n0, block_n), pl.ds(g * half, half)], mask=col_ok[:, None], other=0
            )  # (block_n, G/2) uint8
            s = plgpu.load(s_ref.at[pl.ds(n0, block_n), g], mask=col_ok, other=0)[:, None]  # (block_n, 1)
            lo = ((codes & 0xF).astype(jnp.int32) - INT4_OFFSET).astype(jnp.float32) * s  # columns g*G + [0, G/2)
            hi = ((codes >> 4).astype(jnp.int32) - INT4_OFFSET).astype(jnp.float32) * s  # columns g*G + [G/2, G)
            return acc + dot_t(load_x(g * group, half), lo) + dot_t(load_x(g * group + half, half), hi)

        acc = lax.fori_loop(0, num_groups, body, acc)
    plgpu.store(
        o_ref.at[pl.ds(m0, block_m), pl.ds(n0, block_n)],
        acc.astype(o_ref.dtype),
        mask=row_ok[:, None] & col_ok[None, :],
    )


def _is_pow2(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def _check_triton_tiles(bits: int, group: int, block_sizes: BlockSizes) -> None:
    sizes = {"block_m": block_sizes.block_m, "block_n": block_sizes.block_n, "block_k": block_sizes.block_k}
    sizes |= {"group // 2": group // 2} if bits == 4 else {}
    for name, value in sizes.items():
        _require(
            _is_pow2(value) and value >= 16, f"compiled kernel needs {name} to be a power of two >= 16, got {value}"
        )


@quant_matmul_api
def quant_matmul(call: QuantCall, *, block_sizes: BlockSizes = BlockSizes(), interpret: bool = False):
    """Weight-only quantized matmul (Pallas kernel): ``x . dequantize(q, scale)^T``.

    Knobs:
      block_sizes: tuning knobs, see BlockSizes (static)
      interpret:   run through the Pallas interpreter (CPU tests) instead of compiling (static)

    Grid: (ceil(M / block_m), ceil(N / block_n)). Each program reads its weight tile once per
    ``block_m`` rows of x, so at decode (M = 1) the weights are read exactly once. Compiled, it
    lowers through Triton, chosen explicitly with ``plgpu.CompilerParams`` (JAX's default GPU
    backend, Mosaic GPU, would stage the whole-array refs in shared memory).
    """
    x, q, scale, bits, group, dims = call
    if not interpret:
        _check_triton_tiles(bits, group, block_sizes)
    kernel = functools.partial(
        _quant_matmul_kernel,
        bits=bits,
        group=group,
        block_m=block_sizes.block_m,
        block_n=block_sizes.block_n,
        block_k=block_sizes.block_k,
    )
    return pl.pallas_call(
        kernel,
        grid=(pl.cdiv(dims.m, block_sizes.block_m), pl.cdiv(dims.n, block_sizes.block_n)),
        out_shape=jax.ShapeDtypeStruct((dims.m, dims.n), x.dtype),
        interpret=interpret,
        compiler_params=None
        if interpret
        else plgpu.CompilerParams(num_warps=block_sizes.num_warps, num_stages=block_sizes.num_stages),
        name=f"quant_matmul_int{bits}",
    )(x, q, scale)
