"""Weight-only quantized matmul for TPUs (Pallas Mosaic): ``y[M, N] = x[M, K] . dequant(W)[N, K]^T``.

Same contract as ``kernel.quant_matmul`` (the GPU kernel): the same arguments and layouts, the same
``validate_inputs`` and the same jnp reference (``quant_matmul_reference``) in the tests.

Grid ``(M blocks, N blocks, K blocks)``, BlockSpecs for every operand (Pallas double-buffers each
block from HBM into VMEM while the previous one computes), a float32 ``[block_m, block_n]``
accumulator in VMEM scratch that lives across the K axis ("arbitrary"; M and N are "parallel")::

    k = 0:            acc = 0
    every k:          acc += x[i, k] . W[j, k]^T        (the dequantized weight block, in x's dtype)
    k = last:         y[i, j] = acc (* scale[j] for int8), cast to x's dtype

* int8: ``q int8[N, K]`` blocks ``[block_n, block_k]``; the codes are cast to x's dtype for the
  MXU and the per-output-channel scale (passed as ``[1, N]``) multiplies the accumulator once, at
  the last K step.
* int4: the GPU layout (``kernel`` module docstring: each group of G columns stored as G/2 bytes,
  low nibbles = the group's first half, high nibbles = its second half). Two facts make it
  TPU-friendly without any lane shuffle:

  - x is split in the wrapper (XLA, a transpose of activations only) into ``x_lo, x_hi [M, Kp/2]``:
    ``x_lo[:, c]`` is the column that byte column ``c``'s low nibble holds, ``x_hi`` the high one.
    Then ``y = x_lo . W_lo^T + x_hi . W_hi^T`` with ``W_lo = (codes & 15) - 8``, ``W_hi = (codes >>
    4) - 8`` (times the scale), both ``[N, Kp/2]`` and aligned with the codes byte for byte.
  - The group scale varies along K, i.e. along lanes of a ``[block_n, bytes]`` codes tile, where
    repeating it G/2 times would be a lane shuffle. So the kernel works K-major: it transposes the
    widened int32 codes tile to ``[bytes, block_n]`` (one XLU transpose per step, shared by both
    nibbles) and repeats the scales along sublanes (a broadcast and a tile-aligned reshape, G/2 a
    multiple of 8), from the scale transposed in the wrapper to ``[Kp/G, N]``::

        s_t [groups_per_block, block_n] -> [groups_per_block, G/2, block_n] -> [bytes, block_n]
        W_lo^T = ((codes^T & 15) - 8) * that;  acc += x_lo [block_m, bytes] . W_lo^T  (NN dot)

    The wrapper's scale transpose costs ``2 * N * Kp/G * 4`` bytes of HBM traffic per call (a
    quarter of the codes' bytes at G = 64); storing TPU scales K-major at load time would remove it.

Blocks: ``tpu_block_sizes`` (a table by device kind) gives upper bounds; ``fit_blocks`` fits them
to the shape. A dim no bigger than its bound is one whole block (any size is legal then, so
decode's M = 1 needs no padding); a larger one is split into the largest legal block that divides
it; a weight dim (N up to 4x its bound, K up to 2x) that nothing divides is still taken whole,
so SmolLM2's 576 and Gemma 3's 640 are never padded; only past that is a dim padded (M: zero rows
of activations; N or K: a copy of the weights per call, which no served model's shape needs).
Legal (Mosaic's tiling): the last two dims of every block divisible by (8, 128) or equal to the
array's; rows in multiples of 16 for bfloat16 x; int4 K blocks whose byte width is a multiple of
128 and of 4 * G (so the scale block's rows are a multiple of 8). The scoped VMEM limit is twice
``vmem_estimate`` of those blocks, at least 16 MiB, at most the chip's VMEM.

Proof available without a TPU (tests/runtime/quant/test_quant.py): numerics in TPU interpret mode
(``interpret=True`` -> ``pltpu.InterpretParams()``) against the reference, and lowering for "TPU v5
lite" / "TPU v6 lite" through an abstract mesh (``pallas_kernels.lowering.lower_for_tpu``). Lowering
runs Pallas' Mosaic translation and its block checks, not libtpu's Mosaic compiler (layout passes,
VMEM allocation): that part is unproven until a TPU runs it. The block table is reasoned from the
chips' shapes, not timed.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from pallas_kernels.devices import target_device_kind, tpu_chip, tpu_info
from pallas_kernels.quant_matmul.kernel import INT4_OFFSET, Dims, QuantCall, quant_matmul_api


@dataclasses.dataclass(frozen=True)
class TpuBlockSizes:
    """Upper bounds on the TPU kernel's blocks (static; they never change the result).

    block_m: rows of x per program.  block_n: rows of W (output features) per program.
    block_k: columns of K per grid step (int4: ``block_k / 2`` bytes of codes).
    ``fit_blocks`` turns them into the legal blocks of a given shape (module docstring).
    """

    block_m: int = 256
    block_n: int = 256
    block_k: int = 1024

    def __post_init__(self):
        for name in ("block_m", "block_n", "block_k"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"TpuBlockSizes.{name} must be an int >= 1, got {value!r}")


# chip -> bounds. Reasoned, not timed: block_n is twice the MXU's width (128 on v4/v5e/v5p, 256
# on v6e); block_k makes a weight block 256 KiB (int8) or 128 KiB (int4) so each DMA is long;
# block_m 256 keeps a prefill step MXU-bound. At these sizes vmem_estimate is about 2.5 MiB (int8)
# and 4.5 MiB (int4, its unpacked temporaries included), well inside v4's 16 MiB, the smallest VMEM.
TUNED: dict[str, TpuBlockSizes] = {
    "v4": TpuBlockSizes(block_m=256, block_n=256, block_k=1024),
    "v5e": TpuBlockSizes(block_m=256, block_n=256, block_k=1024),
    "v5p": TpuBlockSizes(block_m=256, block_n=256, block_k=1024),
    "v6e": TpuBlockSizes(block_m=256, block_n=512, block_k=1024),
}
FALLBACK = TpuBlockSizes()


def tpu_block_sizes(device_kind: str) -> TpuBlockSizes:
    """The table entry for ``device_kind``'s chip, else ``FALLBACK`` (v5e's values)."""
    return TUNED.get(tpu_chip(device_kind), FALLBACK)


def _current_device_kind() -> str:
    return target_device_kind("tpu")


def _fit(size: int, bound: int, align: int, full_up_to: int) -> tuple[int, int]:
    """(block, padded size) for one dim, first that applies:

    1. ``size <= bound``: one block of the whole dim (legal whatever its size);
    2. the largest multiple of ``align`` <= bound that divides ``size``;
    3. ``size <= full_up_to``: one block of the whole dim again (a big block beats copying weights);
    4. equal blocks of about ``bound`` rounded up to ``align``, and padding: 300 rows, bound 256,
       align 16 -> 2 blocks of 160, 320 rows.
    """
    if size <= bound:
        return size, size
    for block in range(bound - bound % align, 0, -align):
        if size % block == 0:
            return block, size
    if size <= full_up_to:
        return size, size
    n_blocks = -(-size // bound)
    per_block = -(-size // n_blocks)
    block = -(-per_block // align) * align
    return block, n_blocks * block


def fit_blocks(dims: Dims, bits: int, group: int, x_dtype, block_sizes: TpuBlockSizes):
    """Legal (block_m, block_n, block_k) and padded (M, N, K) for this shape (module docstring).

    M pads freely (activations); N and K are weights, so a whole N of up to four times the bound,
    or a whole K of up to twice it, is taken as one block before anything is padded: SmolLM2's 576
    (N = 4.5 x 128) and Gemma 3's 640 need no padding. int4's K is counted in bytes of codes.
    """
    sublanes = 8 * (4 // jnp.dtype(x_dtype).itemsize)  # 8 rows for float32, 16 for bfloat16
    bm, mp = _fit(dims.m, block_sizes.block_m, sublanes, block_sizes.block_m)
    bn, np_ = _fit(dims.n, block_sizes.block_n, 128, 4 * block_sizes.block_n)
    if bits == 8:
        bk, kp = _fit(dims.k, block_sizes.block_k, 128, 2 * block_sizes.block_k)
        return (bm, bn, bk), (mp, np_, kp)
    align = 128 * 4 * group // math.gcd(128, 4 * group)  # bytes: 128 lanes, and 8 scale rows of G/2 bytes
    bound = max(block_sizes.block_k // 2, align)
    bkb, kpb = _fit(dims.k_padded // 2, bound, align, 2 * bound)
    return (bm, bn, 2 * bkb), (mp, np_, 2 * kpb)


def vmem_estimate(blocks: tuple[int, int, int], bits: int, group: int, x_dtype) -> int:
    """Bytes of VMEM one step needs, roughly: double-buffered blocks, the accumulator, temporaries."""
    bm, bn, bk = blocks
    xb = jnp.dtype(x_dtype).itemsize
    if bits == 8:
        blocks_in = bm * bk * xb + bn * bk + 8 * bn * 4  # x, codes, scale row (8 sublanes)
        temps = bn * bk * xb  # the codes cast to x's dtype
    else:
        blocks_in = bm * bk * xb + bn * bk // 2 + max(8, bk // group) * bn * 4  # x_lo + x_hi, codes, scales
        temps = 5 * (bk // 2) * bn * 4  # int32 codes, their transpose, w_lo, w_hi, expanded scales
    return 2 * (blocks_in + bm * bn * xb) + bm * bn * 4 + temps


def _vmem_limit(device_kind: str, need: int) -> int:
    """Twice the estimate, at least 16 MiB (every chip's default scoped limit), at most the chip's VMEM."""
    chip = tpu_chip(device_kind)
    capacity = 16 * 2**20 if chip is None else tpu_info(device_kind).vmem_capacity_bytes
    return min(capacity, max(16 * 2**20, 2 * need))


# ---- the kernels ---------------------------------------------------------------------------------


def _int8_kernel(
    x_ref,  # [block_m, block_k]   float32 | bfloat16
    q_ref,  # [block_n, block_k]   int8
    s_ref,  # [1, block_n]         float32
    o_ref,  # [block_m, block_n]   dtype of x
    acc_ref,  # [block_m, block_n]   float32 scratch, lives across the K axis
    *,
    precision,
):
    """One (i, j, k) step: acc += x . W^T on int8 codes; the scale once, at the last k."""
    k = pl.program_id(2)

    @pl.when(k == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    x = x_ref[...]
    w = q_ref[...].astype(x.dtype)  # int8 codes are exact in bfloat16 and float32
    acc_ref[...] += lax.dot_general(
        x, w, (((1,), (1,)), ((), ())), precision=precision, preferred_element_type=jnp.float32
    )

    @pl.when(k == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = (acc_ref[...] * s_ref[...]).astype(o_ref.dtype)


def _int4_kernel(
    xlo_ref,  # [block_m, block_k / 2]   the x columns of the low nibbles, float32 | bfloat16
    xhi_ref,  # [block_m, block_k / 2]   the x columns of the high nibbles
    c_ref,  # [block_n, block_k / 2]   uint8, two offset-binary codes a byte
    st_ref,  # [block_k / G, block_n]   float32 group scales, K-major
    o_ref,  # [block_m, block_n]       dtype of x
    acc_ref,  # [block_m, block_n]       float32 scratch, lives across the K axis
    *,
    half_group: int,
    precision,
):
    """One (i, j, k) step: unpack, scale and transpose a codes block K-major, two NN dots."""
    k = pl.program_id(2)

    @pl.when(k == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    codes_t = c_ref[...].astype(jnp.int32).T  # [bytes, block_n]
    st = st_ref[...]  # [groups, block_n]
    groups, block_n = st.shape
    scale = jnp.broadcast_to(st[:, None, :], (groups, half_group, block_n)).reshape(groups * half_group, block_n)
    dtype = xlo_ref.dtype
    w_lo = (((codes_t & 0xF) - INT4_OFFSET).astype(jnp.float32) * scale).astype(dtype)  # [bytes, block_n]
    w_hi = (((codes_t >> 4) - INT4_OFFSET).astype(jnp.float32) * scale).astype(dtype)  # [bytes, block_n]
    dot = functools.partial(
        lax.dot_general,
        dimension_numbers=(((1,), (0,)), ((), ())),
        precision=precision,
        preferred_element_type=jnp.float32,
    )
    acc_ref[...] += dot(xlo_ref[...], w_lo) + dot(xhi_ref[...], w_hi)

    @pl.when(k == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def _pad_to(a, shape):
    pads = [(0, want - have) for have, want in zip(a.shape, shape)]
    return a if all(p == (0, 0) for p in pads) else jnp.pad(a, pads)


@quant_matmul_api
def quant_matmul_tpu(call: QuantCall, *, block_sizes: TpuBlockSizes | None = None, interpret: bool = False):
    """Weight-only quantized matmul (Pallas TPU kernel): ``x . dequantize(q, scale)^T``.

    Knobs:
      block_sizes: upper bounds on the blocks (static); None: ``tpu_block_sizes`` of the device kind
                   lowered for (an abstract mesh's, else device 0's; the fallback off TPU)
      interpret:   run in the TPU interpreter (``pltpu.InterpretParams()``; CPU tests) (static)

    Grid: (M blocks, N blocks, K blocks) of ``fit_blocks``' sizes; the weights are read once per M
    block, so at decode (one M block) exactly once.
    """
    x, q, scale, bits, group, dims = call
    device_kind = _current_device_kind()
    if block_sizes is None:
        block_sizes = tpu_block_sizes(device_kind)
    (bm, bn, bk), (mp, np_, kp) = fit_blocks(dims, bits, group, x.dtype, block_sizes)
    vmem_limit = _vmem_limit(device_kind, vmem_estimate((bm, bn, bk), bits, group, x.dtype))
    precision = lax.Precision.HIGHEST if x.dtype == jnp.float32 else lax.Precision.DEFAULT
    if bits == 8:
        in_specs = [
            pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),  # x
            pl.BlockSpec((bn, bk), lambda i, j, k: (j, k)),  # q
            pl.BlockSpec((1, bn), lambda i, j, k: (0, j)),  # scale as [1, N]
        ]
        operands = (_pad_to(x, (mp, kp)), _pad_to(q, (np_, kp)), _pad_to(scale.reshape(1, -1), (1, np_)))
        kernel = functools.partial(_int8_kernel, precision=precision)
    else:
        half, bkb = group // 2, bk // 2
        # x [M, K] -> zero columns up to kp -> per group (lo half, hi half) -> x_lo, x_hi [M, kp/2].
        xg = _pad_to(x, (mp, kp)).reshape(mp, kp // group, 2, half)
        x_lo, x_hi = xg[:, :, 0, :].reshape(mp, kp // 2), xg[:, :, 1, :].reshape(mp, kp // 2)
        # Padded bytes hold code 0x88 (0.0) and padded scales 0, and they meet zero columns of x.
        codes = (
            q
            if q.shape == (np_, kp // 2)
            else jnp.pad(q, ((0, np_ - dims.n), (0, kp // 2 - q.shape[1])), constant_values=0x88)
        )
        st = _pad_to(scale, (np_, kp // group)).T  # [kp/G, N]: K-major (module docstring)
        in_specs = [
            pl.BlockSpec((bm, bkb), lambda i, j, k: (i, k)),  # x_lo
            pl.BlockSpec((bm, bkb), lambda i, j, k: (i, k)),  # x_hi
            pl.BlockSpec((bn, bkb), lambda i, j, k: (j, k)),  # codes
            pl.BlockSpec((bk // group, bn), lambda i, j, k: (k, j)),  # scales, K-major
        ]
        operands = (x_lo, x_hi, codes, st)
        kernel = functools.partial(_int4_kernel, half_group=half, precision=precision)
    y = pl.pallas_call(
        kernel,
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0,
            grid=(mp // bm, np_ // bn, kp // bk),
            in_specs=in_specs,
            out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
            scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],  # the accumulator
        ),
        out_shape=jax.ShapeDtypeStruct((mp, np_), x.dtype),
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary"), vmem_limit_bytes=vmem_limit
        ),
        interpret=pltpu.InterpretParams() if interpret else False,
        name=f"quant_matmul_int{bits}_tpu",
    )(*operands)
    return y[: dims.m, : dims.n]
