"""Ragged paged attention: one kernel for a step that mixes prefill chunks and decode tokens.

Data flow: the engine flattens every scheduled token of a step onto one axis (``q``), writes their
K/V into the paged cache, then calls one of three implementations that share one validation
function and one semantics (and the paged two, one signature: ``paged_attention_api``):

* ``ragged_paged_attention``            Pallas kernel (Triton-lowerable; ``interpret=True`` on CPU).
* ``ragged_paged_attention_xla``        jnp gathers, no Pallas: the CPU engine's default.
* ``ragged_paged_attention_reference``  contiguous KV, a Python loop over sequences: tests only.

Index arithmetic (``block_q = 4``; three sequences; padding rows at the end stay zero)::

    q rows:       | seq0 prefill chunk (5)    | s1 | seq2 chunk (3) | padding ...... |
    row:            0   1   2   3   4           5    6    7    8      9 ... T-1
    cu_q_lens:     [0,                          5,   6,             9,  9, 9 ...]
    program (seq 0, q block 0) -> rows 0..3
    program (seq 0, q block 1) -> row 4        (rows 5..7 of its tile are masked: not its rows)
    program (seq 1, q block 0) -> row 5
    program (seq 1, q block 1) -> nothing      (5 + 4 >= 6: skipped)

    Query row j of sequence i (q_len = cu_q_lens[i+1] - cu_q_lens[i]) sits at absolute position
        p = kv_lens[i] - q_len + j
    and attends key positions t with  p - sliding_window < t <= p.  Key t lives at
        k_pages[page_indices[i, t // page_size], t % page_size]

        positions:  0 1 2 3 | 4 5 6 7 | 8 9        (page_size 4, kv_len 10)
        page table: [  17   |    3    |  42  , garbage ...]

Programs write disjoint rows (a tile's rows that belong to another sequence are masked out of
the store), and the output starts as zeros (aliased input), so rows past ``cu_q_lens[num_seqs]``
are exactly zero without any program touching them.

Quantized KV: all three take optional ``k_scales``/``v_scales`` (one scale per token and kv head,
``[..., num_kv_heads]`` beside ``[..., num_kv_heads, head_dim]`` codes, int8 or float8_e4m3fn).
A key's K is then ``k[...].astype(float32) * k_scales[...]``, V likewise; each implementation
dequantizes only the keys it reads (the kernel: a key block's codes and scales, in registers,
before its dots), so the cache stays 8-bit in memory.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

from pallas_kernels.api import public_kernel
from pallas_kernels.devices import check_gpu_kv_dtype, target_device_kind
from pallas_kernels.ragged_paged_attention.gpu_block_sizes import BlockSizes, gpu_block_sizes

# Finite "minus infinity": exp(MASK_VALUE - m) underflows to 0 without the inf - inf = NaN that a
# fully masked row would produce with a real -inf.
MASK_VALUE = -0.7 * float(np.finfo(np.float32).max)
SUPPORTED_DTYPES = (jnp.dtype(jnp.float32), jnp.dtype(jnp.bfloat16))
QUANTIZED_KV_DTYPES = (jnp.dtype(jnp.int8), jnp.dtype(jnp.float8_e4m3fn))
SCALE_DTYPES = SUPPORTED_DTYPES


class Dims(NamedTuple):
    """Sizes read off validated inputs."""

    max_num_tokens: int
    num_q_heads: int
    head_dim: int
    num_kv_heads: int
    max_num_seqs: int
    page_size: int | None  # None for contiguous KV
    pages_per_seq: int | None  # None for contiguous KV

    @property
    def group(self) -> int:
        return self.num_q_heads // self.num_kv_heads


def _require(cond: bool, msg: str) -> None:
    if not cond:
        raise ValueError(msg)


def _check_int_vector(name: str, x, shape: tuple[int, ...], what: str) -> None:
    _require(tuple(x.shape) == shape, f"{name} must have shape {shape} ({what}), got {tuple(x.shape)}")
    _require(jnp.dtype(x.dtype) == jnp.int32, f"{name} must be int32, got {x.dtype}")


def validate_inputs(
    q,
    k,
    v,
    kv_lens,
    cu_q_lens,
    num_seqs,
    page_indices=None,
    *,
    sm_scale,
    sliding_window=None,
    soft_cap=None,
    k_scales=None,
    v_scales=None,
) -> Dims:
    """Checks shapes, dtypes and static arguments; raises ValueError naming the bad input.

    With ``page_indices`` the KV is paged, ``k, v: [total_num_pages, page_size, num_kv_heads,
    head_dim]``; without it (the reference) it is contiguous, ``k, v: [max_num_seqs, max_kv_len,
    num_kv_heads, head_dim]``. With ``k_scales``/``v_scales`` (both or neither) k and v are 8-bit
    codes (int8 or float8_e4m3fn) and the scales are ``k.shape[:3]``, float32 or bfloat16; without
    them k and v have q's dtype. Only static facts are checked, so this works on tracers.
    """
    _require(q.ndim == 3, f"q must be [max_num_tokens, num_q_heads, head_dim], got shape {tuple(q.shape)}")
    max_num_tokens, num_q_heads, head_dim = q.shape
    _require(max_num_tokens >= 1, "q must hold at least one token row (max_num_tokens >= 1)")
    _require(num_q_heads >= 1 and head_dim >= 1, f"q has an empty head axis: shape {tuple(q.shape)}")
    _require(jnp.dtype(q.dtype) in SUPPORTED_DTYPES, f"q must be float32 or bfloat16, got {q.dtype}")

    layout = (
        "[total_num_pages, page_size, num_kv_heads, head_dim]"
        if page_indices is not None
        else "[max_num_seqs, max_kv_len, num_kv_heads, head_dim]"
    )
    _require(k.ndim == 4, f"k must be {layout}, got shape {tuple(k.shape)}")
    _require(
        tuple(v.shape) == tuple(k.shape), f"k and v must have the same shape, got {tuple(k.shape)} and {tuple(v.shape)}"
    )
    _require((k_scales is None) == (v_scales is None), "give both k_scales and v_scales, or neither")
    if k_scales is None:
        hint = " (an 8-bit cache needs k_scales and v_scales)" if jnp.dtype(k.dtype) in QUANTIZED_KV_DTYPES else ""
        _require(
            k.dtype == q.dtype and v.dtype == q.dtype,
            f"q, k and v must share one dtype, got q {q.dtype}, k {k.dtype}, v {v.dtype}{hint}",
        )
    else:
        _require(
            k.dtype == v.dtype and jnp.dtype(k.dtype) in QUANTIZED_KV_DTYPES,
            f"with k_scales/v_scales, k and v must both be int8 or float8_e4m3fn codes, got k {k.dtype}, v {v.dtype}",
        )
        for name, scales in (("k_scales", k_scales), ("v_scales", v_scales)):
            _require(
                tuple(scales.shape) == tuple(k.shape[:3]),
                f"{name} must have shape {tuple(k.shape[:3])} (one scale per token slot and kv head of "
                f"k/v), got {tuple(scales.shape)}",
            )
            _require(jnp.dtype(scales.dtype) in SCALE_DTYPES, f"{name} must be float32 or bfloat16, got {scales.dtype}")
    _require(k.shape[3] == head_dim, f"head_dim of k/v ({k.shape[3]}) must equal head_dim of q ({head_dim})")
    num_kv_heads = k.shape[2]
    _require(num_kv_heads >= 1, "k/v must have at least one kv head")
    _require(
        num_q_heads % num_kv_heads == 0,
        f"num_q_heads ({num_q_heads}) must be a multiple of num_kv_heads ({num_kv_heads})",
    )

    _require(kv_lens.ndim == 1, f"kv_lens must be int32[max_num_seqs], got shape {tuple(kv_lens.shape)}")
    max_num_seqs = kv_lens.shape[0]
    _require(max_num_seqs >= 1, "kv_lens must have at least one entry (max_num_seqs >= 1)")
    _check_int_vector("kv_lens", kv_lens, (max_num_seqs,), "max_num_seqs")
    _check_int_vector("cu_q_lens", cu_q_lens, (max_num_seqs + 1,), "max_num_seqs + 1")
    _check_int_vector("num_seqs", num_seqs, (1,), "a single count")

    page_size = pages_per_seq = None
    if page_indices is not None:
        total_num_pages, page_size = k.shape[0], k.shape[1]
        _require(
            total_num_pages >= 1 and page_size >= 1, f"k_pages needs >= 1 page of >= 1 slot, got shape {tuple(k.shape)}"
        )
        _require(
            page_indices.ndim == 2 and page_indices.shape[0] == max_num_seqs,
            f"page_indices must be int32[max_num_seqs={max_num_seqs}, pages_per_seq], "
            f"got shape {tuple(page_indices.shape)}",
        )
        _require(jnp.dtype(page_indices.dtype) == jnp.int32, f"page_indices must be int32, got {page_indices.dtype}")
        pages_per_seq = page_indices.shape[1]
        _require(pages_per_seq >= 1, "page_indices must have at least one column")
    else:
        _require(
            k.shape[0] == max_num_seqs,
            f"contiguous k/v must have max_num_seqs={max_num_seqs} rows, got shape {tuple(k.shape)}",
        )

    _require(
        isinstance(sm_scale, (int, float)) and not isinstance(sm_scale, bool) and math.isfinite(sm_scale),
        f"sm_scale must be a finite Python number, got {sm_scale!r}",
    )
    _require(
        sliding_window is None
        or (isinstance(sliding_window, int) and not isinstance(sliding_window, bool) and sliding_window >= 1),
        f"sliding_window must be None or an int >= 1, got {sliding_window!r}",
    )
    _require(
        soft_cap is None
        or (
            isinstance(soft_cap, (int, float))
            and not isinstance(soft_cap, bool)
            and math.isfinite(soft_cap)
            and soft_cap > 0
        ),
        f"soft_cap must be None or a finite number > 0, got {soft_cap!r}",
    )
    return Dims(max_num_tokens, num_q_heads, head_dim, num_kv_heads, max_num_seqs, page_size, pages_per_seq)


# --------------------------------------------------------------------------------------------
# The one public signature of the paged paths (GPU kernel, TPU kernel, XLA)
# --------------------------------------------------------------------------------------------


class PagedCall(NamedTuple):
    """One call of a paged path after ``validate_inputs``: what a platform's implementation receives."""

    q: jax.Array  # [max_num_tokens, num_q_heads, head_dim]
    k_pages: jax.Array  # [total_num_pages, page_size, num_kv_heads, head_dim]
    v_pages: jax.Array  # [total_num_pages, page_size, num_kv_heads, head_dim]
    kv_lens: jax.Array  # int32[max_num_seqs]
    page_indices: jax.Array  # int32[max_num_seqs, pages_per_seq]
    cu_q_lens: jax.Array  # int32[max_num_seqs + 1]
    num_seqs: jax.Array  # int32[1]
    k_scales: jax.Array | None  # [total_num_pages, page_size, num_kv_heads], or None: a float cache
    v_scales: jax.Array | None  # [total_num_pages, page_size, num_kv_heads], or None: a float cache
    sm_scale: float
    sliding_window: int | None
    soft_cap: float | None
    dims: Dims

    @property
    def quantized(self) -> bool:
        return self.k_scales is not None


PAGED_ARGS_DOC = """
    Args shared by every paged path (its own knobs above are static and keyword-only too):
      q:            [max_num_tokens, num_q_heads, head_dim]               float32 | bfloat16
      k_pages:      [total_num_pages, page_size, num_kv_heads, head_dim]  dtype of q, or int8 |
                    float8_e4m3fn codes (with k_scales)
      v_pages:      [total_num_pages, page_size, num_kv_heads, head_dim]  as k_pages
      kv_lens:      int32[max_num_seqs]  context length of each sequence, this step's tokens included
      page_indices: int32[max_num_seqs, pages_per_seq]  pages of each sequence in order; entries past
                    a sequence's last page may hold any valid page id
      cu_q_lens:    int32[max_num_seqs + 1]  sequence i owns q rows cu_q_lens[i]:cu_q_lens[i+1]
      num_seqs:     int32[1]  sequences past num_seqs[0] are padding and ignored
      sm_scale:     logit scale (static)
      sliding_window: keys per query including itself, or None (static)
      soft_cap:     logits -> soft_cap * tanh(logits / soft_cap) before masking, or None (static)
      k_scales, v_scales: [total_num_pages, page_size, num_kv_heads] float32 | bfloat16, or None:
                    a quantized cache, key = codes.astype(float32) * scale (then cast to q's dtype)
    Returns:
      [max_num_tokens, num_q_heads, head_dim] in q.dtype; rows >= cu_q_lens[num_seqs] are zero.
"""


def paged_attention_api(impl):
    """Gives a platform's implementation the one public signature of the paged paths.

    ``impl(call: PagedCall, *, <knobs>)`` becomes the jitted
    ``f(q, k_pages, v_pages, kv_lens, page_indices, cu_q_lens, num_seqs, *, sm_scale, sliding_window=None,
    soft_cap=None, k_scales=None, v_scales=None, <knobs>)``: the inputs go through ``validate_inputs``
    before ``impl`` sees them; sm_scale, sliding_window, soft_cap and impl's keyword-only knobs are
    static. The public docstring is impl's followed by ``PAGED_ARGS_DOC``.
    """

    def public(
        q,
        k_pages,
        v_pages,
        kv_lens,
        page_indices,
        cu_q_lens,
        num_seqs,
        *,
        sm_scale: float,
        sliding_window: int | None = None,
        soft_cap: float | None = None,
        k_scales: jax.Array | None = None,
        v_scales: jax.Array | None = None,
        **knob_values,
    ) -> jax.Array:
        static = dict(sm_scale=sm_scale, sliding_window=sliding_window, soft_cap=soft_cap)
        scales = dict(k_scales=k_scales, v_scales=v_scales)
        dims = validate_inputs(q, k_pages, v_pages, kv_lens, cu_q_lens, num_seqs, page_indices, **static, **scales)
        arrays = (q, k_pages, v_pages, kv_lens, page_indices, cu_q_lens, num_seqs)
        return impl(PagedCall(*arrays, **scales, **static, dims=dims), **knob_values)

    return public_kernel(public, impl, static=("sm_scale", "sliding_window", "soft_cap"), args_doc=PAGED_ARGS_DOC)


# --------------------------------------------------------------------------------------------
# Reference (contiguous KV)
# --------------------------------------------------------------------------------------------


def ragged_paged_attention_reference(
    q, k, v, kv_lens, cu_q_lens, num_seqs, *, sm_scale, sliding_window=None, soft_cap=None, k_scales=None, v_scales=None
):
    """Plain masked attention in float32. Needs concrete (non-traced) lengths.

    A Python loop over sequences assigns every q row its sequence and absolute position; then one
    dense jnp computation attends each row to its sequence's contiguous keys.

    Args:
      q:          [max_num_tokens, num_q_heads, head_dim]          float32 | bfloat16
      k, v:       [max_num_seqs, max_kv_len, num_kv_heads, head_dim] same dtype as q, or int8 |
                  float8_e4m3fn codes with scales; sequence i's keys are k[i, :kv_lens[i]].
      kv_lens:    int32[max_num_seqs]
      cu_q_lens:  int32[max_num_seqs + 1]
      num_seqs:   int32[1]
      k_scales, v_scales: [max_num_seqs, max_kv_len, num_kv_heads] float32 | bfloat16, or None;
                  key t of sequence i is k[i, t].astype(float32) * k_scales[i, t][:, None].
    Returns:
      [max_num_tokens, num_q_heads, head_dim] in q.dtype; rows >= cu_q_lens[num_seqs] are zero.
    """
    dims = validate_inputs(
        q,
        k,
        v,
        kv_lens,
        cu_q_lens,
        num_seqs,
        sm_scale=sm_scale,
        sliding_window=sliding_window,
        soft_cap=soft_cap,
        k_scales=k_scales,
        v_scales=v_scales,
    )
    if k_scales is not None:
        k = k.astype(jnp.float32) * k_scales.astype(jnp.float32)[..., None]
        v = v.astype(jnp.float32) * v_scales.astype(jnp.float32)[..., None]
    kv_lens_np, cu_np = np.asarray(kv_lens), np.asarray(cu_q_lens)
    n = int(np.asarray(num_seqs)[0])
    _require(0 <= n <= dims.max_num_seqs, f"num_seqs[0]={n} must be in [0, {dims.max_num_seqs}]")
    row_seq = np.zeros(dims.max_num_tokens, np.int32)  # sequence of each q row
    row_pos = np.full(dims.max_num_tokens, -1, np.int32)  # its absolute position; -1: not a real row
    for i in range(n):
        q_start, q_end, kv_len = int(cu_np[i]), int(cu_np[i + 1]), int(kv_lens_np[i])
        q_len = q_end - q_start
        _require(
            0 <= q_start <= q_end <= dims.max_num_tokens,
            f"cu_q_lens must be non-decreasing within [0, {dims.max_num_tokens}]; seq {i} has {q_start}:{q_end}",
        )
        _require(
            q_len <= kv_len <= k.shape[1],
            f"seq {i}: need q_len ({q_len}) <= kv_len ({kv_len}) <= max_kv_len ({k.shape[1]})",
        )
        row_seq[q_start:q_end] = i
        row_pos[q_start:q_end] = kv_len - q_len + np.arange(q_len)
    return _dense_reference(
        q,
        k,
        v,
        jnp.asarray(row_seq),
        jnp.asarray(row_pos),
        sm_scale=sm_scale,
        sliding_window=sliding_window,
        soft_cap=soft_cap,
    )


@functools.partial(jax.jit, static_argnames=("sm_scale", "sliding_window", "soft_cap"))
def _dense_reference(q, k, v, row_seq, row_pos, *, sm_scale, sliding_window, soft_cap):
    group = q.shape[1] // k.shape[2]
    ks = jnp.repeat(k[row_seq].astype(jnp.float32), group, axis=2)  # (T, max_kv_len, Hq, D)
    vs = jnp.repeat(v[row_seq].astype(jnp.float32), group, axis=2)  # (T, max_kv_len, Hq, D)
    logits = jnp.einsum("thd,tkhd->thk", q.astype(jnp.float32), ks, precision=lax.Precision.HIGHEST) * sm_scale
    if soft_cap is not None:
        logits = soft_cap * jnp.tanh(logits / soft_cap)
    q_pos = row_pos[:, None, None]  # (T, 1, 1)
    k_pos = jnp.arange(k.shape[1])[None, None, :]  # (1, 1, max_kv_len)
    mask = k_pos <= q_pos  # causal; also excludes keys >= kv_len since q_pos < kv_len
    if sliding_window is not None:
        mask &= k_pos > q_pos - sliding_window
    weights = jax.nn.softmax(jnp.where(mask, logits, -jnp.inf), axis=-1)  # (T, Hq, max_kv_len)
    weights = jnp.where(mask, weights, 0.0)  # non-rows: NaN -> 0
    vs = jnp.where((k_pos[0] <= row_pos[:, None])[:, :, None, None], vs, 0.0)  # unused keys may be NaN
    out = jnp.einsum("thk,tkhd->thd", weights, vs, precision=lax.Precision.HIGHEST)
    return out.astype(q.dtype)


# --------------------------------------------------------------------------------------------
# Pallas kernel
# --------------------------------------------------------------------------------------------


def scaled_logits(q, k, *, sm_scale: float, soft_cap: float | None, precision):
    """``q [rows, D] . k [keys, D]^T`` in float32, times ``sm_scale``, soft-capped if asked: the logits of
    one key block, in both kernels (GPU and TPU), before masking."""
    s = lax.dot_general(q, k, (((1,), (1,)), ((), ())), precision=precision, preferred_element_type=jnp.float32)
    s = s * sm_scale
    return s if soft_cap is None else soft_cap * jnp.tanh(s / soft_cap)


def _ragged_paged_attention_kernel(
    kv_lens_ref,  # int32[max_num_seqs]
    page_indices_ref,  # int32[max_num_seqs, pages_per_seq]
    cu_q_lens_ref,  # int32[max_num_seqs + 1]
    num_seqs_ref,  # int32[1]
    q_ref,  # [num_kv_heads, group_pad, max_num_tokens, head_dim]
    k_pages_ref,  # [total_num_pages, page_size, num_kv_heads, head_dim]  q's dtype, or 8-bit codes
    v_pages_ref,  # [total_num_pages, page_size, num_kv_heads, head_dim]  q's dtype, or 8-bit codes
    *rest,  # quantized: k_scales_ref, v_scales_ref; then o_zeros_ref, o_ref
    # k_scales_ref,  # [total_num_pages, page_size, num_kv_heads]  float32 | bfloat16 (quantized only)
    # v_scales_ref,  # [total_num_pages, page_size, num_kv_heads]  float32 | bfloat16 (quantized only)
    # o_zeros_ref,  # [num_kv_heads, group_pad, max_num_tokens, head_dim]  aliased to o_ref, never read
    # o_ref,  # [num_kv_heads, group_pad, max_num_tokens, head_dim]
    quantized: bool,
    sm_scale: float,
    sliding_window: int | None,
    soft_cap: float | None,
    block_q: int,
    pages_per_block: int,
):
    """One program: ``block_q`` query tokens of one sequence x every q head of one kv head's group.

    The tile is head-major, row ``r = g * block_q + t`` (q head ``g`` of the group, token ``t``),
    so the q tile and the output tile are single rectangular slices of the [kvh, g, T, D] layout.
    Every ref is the whole array: q rows start at ragged offsets and KV pages are scattered, so the
    kernel does its own (masked) indexing instead of BlockSpecs. A quantized cache's key block is
    dequantized right after its load (codes * their token's scale), before the dots.
    """
    k_scales_ref, v_scales_ref, _, o_ref = rest if quantized else (None, None, *rest)
    seq, kv_head, q_block = pl.program_id(0), pl.program_id(1), pl.program_id(2)
    _, group_pad, _, head_dim = q_ref.shape
    total_num_pages, page_size = k_pages_ref.shape[0], k_pages_ref.shape[1]
    pages_per_seq = page_indices_ref.shape[1]
    block_k = pages_per_block * page_size
    rows = group_pad * block_q

    seq_q_start = cu_q_lens_ref[seq]
    q_len = cu_q_lens_ref[seq + 1] - seq_q_start
    tile_start = seq_q_start + q_block * block_q  # first q row (token) of this program
    n_rows = jnp.minimum(block_q, q_len - q_block * block_q)  # tokens of this tile that are ours
    active = (seq < num_seqs_ref[0]) & (n_rows > 0)

    @pl.when(active)
    def _compute():
        kv_len = kv_lens_ref[seq]
        first_pos = kv_len - q_len + q_block * block_q  # absolute position of the tile's token 0
        last_pos = first_pos + n_rows - 1

        token_ok = jnp.arange(block_q) < n_rows  # (block_q,)
        tile_mask = jnp.broadcast_to(token_ok[None, :, None], (group_pad, block_q, head_dim))
        q_tile = plgpu.load(q_ref.at[kv_head, :, pl.ds(tile_start, block_q), :], mask=tile_mask, other=0)
        q_tile = q_tile.reshape(rows, head_dim)  # (rows, D)
        q_pos = first_pos + jnp.arange(rows) % block_q  # (rows,)

        # Only the key blocks some row of this tile can see: [first_pos - window + 1, last_pos].
        lo = 0 if sliding_window is None else jnp.maximum(first_pos - sliding_window + 1, 0)
        hi = jnp.maximum(jnp.minimum(last_pos + 1, kv_len), 0)
        blk_lo, blk_hi = lo // block_k, (hi + block_k - 1) // block_k

        f32 = q_tile.dtype == jnp.float32
        precision = lax.Precision.HIGHEST if f32 else lax.Precision.DEFAULT
        col = jnp.broadcast_to(jnp.arange(head_dim)[None, :], (block_k, head_dim))

        def body(blk, carry):
            m_prev, l_prev, acc_prev = carry  # (rows,), (rows,), (rows, D) float32
            key_pos = blk * block_k + jnp.arange(block_k)  # (block_k,)
            page_pos = jnp.minimum(key_pos // page_size, pages_per_seq - 1)
            page = jnp.clip(page_indices_ref[seq, page_pos], 0, total_num_pages - 1)  # (block_k,)
            page2 = jnp.broadcast_to(page[:, None], (block_k, head_dim))
            slot2 = jnp.broadcast_to((key_pos % page_size)[:, None], (block_k, head_dim))
            k = k_pages_ref[page2, slot2, kv_head, col]  # (block_k, D)
            v = v_pages_ref[page2, slot2, kv_head, col]  # (block_k, D)
            if quantized:
                slot = key_pos % page_size
                k_scale = k_scales_ref[page, slot, kv_head].astype(jnp.float32)  # (block_k,)
                v_scale = v_scales_ref[page, slot, kv_head].astype(jnp.float32)  # (block_k,)
                k = (k.astype(jnp.float32) * k_scale[:, None]).astype(q_tile.dtype)
                v = (v.astype(jnp.float32) * v_scale[:, None]).astype(q_tile.dtype)
            key_ok = key_pos < kv_len
            # Slots past kv_len may hold anything (even NaN); 0 * NaN would leak through p @ v.
            v = jnp.where(key_ok[:, None], v, jnp.zeros_like(v))

            s = scaled_logits(q_tile, k, sm_scale=sm_scale, soft_cap=soft_cap, precision=precision)  # (rows, block_k)
            mask = (key_pos[None, :] <= q_pos[:, None]) & key_ok[None, :]
            if sliding_window is not None:
                mask &= key_pos[None, :] > q_pos[:, None] - sliding_window
            s = jnp.where(mask, s, MASK_VALUE)

            m_next = jnp.maximum(m_prev, s.max(axis=1))
            alpha = jnp.exp(m_prev - m_next)
            p = jnp.where(mask, jnp.exp(s - m_next[:, None]), 0.0)
            l_next = alpha * l_prev + p.sum(axis=1)
            pv = lax.dot_general(
                p.astype(v.dtype), v, (((1,), (0,)), ((), ())), precision=precision, preferred_element_type=jnp.float32
            )  # (rows, D)
            return m_next, l_next, alpha[:, None] * acc_prev + pv

        init = (
            jnp.full((rows,), MASK_VALUE, jnp.float32),
            jnp.zeros((rows,), jnp.float32),
            jnp.zeros((rows, head_dim), jnp.float32),
        )
        _, l, acc = lax.fori_loop(blk_lo, blk_hi, body, init)
        out = acc / jnp.where(l > 0, l, 1.0)[:, None]
        out = out.astype(o_ref.dtype).reshape(group_pad, block_q, head_dim)
        plgpu.store(o_ref.at[kv_head, :, pl.ds(tile_start, block_q), :], out, mask=tile_mask)


def _is_pow2(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def _check_triton_tiles(dims: Dims, block_sizes: BlockSizes) -> None:
    block_k = block_sizes.pages_per_block * dims.page_size
    _require(_is_pow2(block_sizes.block_q), f"compiled kernel needs a power-of-two block_q, got {block_sizes.block_q}")
    rows = pl.next_power_of_2(dims.group) * block_sizes.block_q
    _require(rows >= 16, f"compiled kernel needs next_pow2(q heads per kv head) * block_q >= 16 (matmul M), got {rows}")
    _require(
        _is_pow2(block_k) and block_k >= 16,
        f"compiled kernel needs pages_per_block * page_size to be a power of two >= 16, got {block_k}",
    )
    _require(
        _is_pow2(dims.head_dim) and dims.head_dim >= 16,
        f"compiled kernel needs a power-of-two head_dim >= 16, got {dims.head_dim}",
    )


def table_block_sizes(dims: Dims, dtype, kv_dtype, device_kind: str | None = None) -> BlockSizes:
    """``block_sizes=None``: the GPU table for ``device_kind``, by default the target GPU (an abstract
    mesh's when cross-lowering, else this process's; the fallback rule when neither is a GPU, e.g. the
    interpreter on CPU)."""

    return gpu_block_sizes(
        target_device_kind("gpu") if device_kind is None else device_kind,
        head_dim=dims.head_dim,
        num_q_heads=dims.num_q_heads,
        num_kv_heads=dims.num_kv_heads,
        page_size=dims.page_size,
        dtype=dtype,
        kv_dtype=None if kv_dtype == dtype else kv_dtype,
    )


@paged_attention_api
def ragged_paged_attention(call: PagedCall, *, block_sizes: BlockSizes | None = None, interpret: bool = False):
    """Causal grouped-query attention over a paged KV cache for a ragged batch (Pallas kernel).

    Knobs:
      block_sizes:  tuning knobs, see BlockSizes (static); None: ``gpu_block_sizes`` for this
                    process's first device (its table entry, else the fallback rule)
      interpret:    run through the Pallas interpreter (CPU tests) instead of compiling (static)

    Compiled, it lowers through Triton (``__gpu$xla.gpu.triton``), chosen explicitly with
    ``plgpu.CompilerParams``: JAX's default GPU backend is Mosaic GPU, which would stage every
    whole-array ref (the entire KV cache) in shared memory. Triton keeps refs in global memory and
    only the loaded tiles (a ``[rows, head_dim]`` q tile, ``[block_k, head_dim]`` K/V tiles) in
    registers and shared memory.

    Grid: (max_num_seqs, num_kv_heads, ceil(max_num_tokens / block_q)); most (seq, q block)
    programs of a decode-heavy batch exit at once. Each active program reads only the key blocks
    its rows can see (causal and window bounds), ``block_k`` keys per online-softmax step.
    """
    dims, q = call.dims, call.q
    if block_sizes is None:
        block_sizes = table_block_sizes(dims, q.dtype, call.k_pages.dtype)
    if not interpret:
        _check_triton_tiles(dims, block_sizes)
        check_gpu_kv_dtype(call.k_pages.dtype, target_device_kind("gpu") or None)
    T, G, D, KVH = dims.max_num_tokens, dims.group, dims.head_dim, dims.num_kv_heads
    group_pad = pl.next_power_of_2(G)  # power-of-two tiles for Triton; padded heads are zeros
    block_q = block_sizes.block_q

    # [T, KVH * G, D] -> [KVH, group_pad, T, D]: a program's q rows become one rectangular slice.
    q_t = jnp.pad(q.reshape(T, KVH, G, D), ((0, 0), (0, 0), (0, group_pad - G), (0, 0))).transpose(1, 2, 0, 3)
    kernel = functools.partial(
        _ragged_paged_attention_kernel,
        quantized=call.quantized,
        sm_scale=float(call.sm_scale),
        sliding_window=call.sliding_window,
        soft_cap=None if call.soft_cap is None else float(call.soft_cap),
        block_q=block_q,
        pages_per_block=block_sizes.pages_per_block,
    )
    refs = (call.kv_lens, call.page_indices, call.cu_q_lens, call.num_seqs, q_t, call.k_pages, call.v_pages)
    scales = (call.k_scales, call.v_scales) if call.quantized else ()
    inputs = (*refs, *scales, jnp.zeros_like(q_t))
    out = pl.pallas_call(
        kernel,
        grid=(dims.max_num_seqs, KVH, pl.cdiv(T, block_q)),
        out_shape=jax.ShapeDtypeStruct(q_t.shape, q.dtype),
        input_output_aliases={len(inputs) - 1: 0},  # zeros in, so rows no program owns come out as 0
        interpret=interpret,
        compiler_params=None
        if interpret
        else plgpu.CompilerParams(num_warps=block_sizes.num_warps, num_stages=block_sizes.num_stages),
        name="ragged_paged_attention",
    )(*inputs)
    return out[:, :G].transpose(2, 0, 1, 3).reshape(T, KVH * G, D)


# --------------------------------------------------------------------------------------------
# XLA path (no Pallas)
# --------------------------------------------------------------------------------------------


def _token_coordinates(kv_lens, cu_q_lens, num_seqs, max_num_tokens):
    """For each q row: its sequence, absolute position and whether it is a real token."""
    max_num_seqs = kv_lens.shape[0]
    n = jnp.clip(num_seqs[0], 0, max_num_seqs)
    # Padding sequences become empty (their cu entries may be anything), keeping cu sorted.
    cu = jnp.where(jnp.arange(max_num_seqs + 1) <= n, cu_q_lens, cu_q_lens[n])
    t = jnp.arange(max_num_tokens, dtype=jnp.int32)
    # side="right" skips empty sequences: row t belongs to the last i with cu[i] <= t.
    seq = jnp.clip(jnp.searchsorted(cu, t, side="right").astype(jnp.int32) - 1, 0, max_num_seqs - 1)
    q_start = cu[seq]
    pos = kv_lens[seq] - (cu[seq + 1] - q_start) + (t - q_start)
    return seq, pos, t < cu[n]


XLA_KEYS_PER_BLOCK = 32  # keys per loop iteration of the XLA path (measured best on 2 CPU cores)


@paged_attention_api
def ragged_paged_attention_xla(call: PagedCall, *, pages_per_block: int | None = None, rows_per_block: int = 16):
    """Same contract as ``ragged_paged_attention`` (shapes, dtypes, result), with jnp gathers.

    Knobs:
      pages_per_block: pages per key block (static); None: ``XLA_KEYS_PER_BLOCK`` keys' worth
      rows_per_block:  query rows per row block (static)

    The CPU engine's default. Query rows are cut into blocks of ``rows_per_block`` consecutive rows
    (``lax.map``, one after another); for each row block a ``while_loop`` walks the keys in blocks of
    ``pages_per_block`` pages (default: ``XLA_KEYS_PER_BLOCK`` keys) with an online softmax (running max ``m``, sum ``l``, accumulator
    ``acc`` per row, float32), each row gathering one key block of its own sequence's pages:

        rows [r0 .. r0+R)   key block b:  page_indices[seq[t], b*ppb:(b+1)*ppb] -> K, V [R, ppb*page, KVH, D]

    Trip counts are data, not shapes, and are set per row block (the last key any of its rows can
    see; the first block inside every row's sliding window). Rows of one sequence are consecutive, so
    a block of decode rows walks the decodes' contexts, a block of a new prompt walks only that
    prompt, and a block of padding rows does nothing: one compiled program serves every context
    length and mix, costing about ``sum over row blocks of R * keys_visited * KVH * D`` gathered
    elements for each of K and V. A quantized cache is gathered as codes and scales and dequantized
    per key block.
    """
    q, k_pages, v_pages, k_scales, v_scales = call.q, call.k_pages, call.v_pages, call.k_scales, call.v_scales
    sm_scale, sliding_window, soft_cap, dims = call.sm_scale, call.sliding_window, call.soft_cap, call.dims
    T, G, D, KVH = dims.max_num_tokens, dims.group, dims.head_dim, dims.num_kv_heads
    page_size, R = dims.page_size, min(rows_per_block, T)  # a 1-token decode step: one row, not 16
    # The loop's cost is mostly per iteration, so its key block is ~32 keys whatever the page size.
    ppb = pages_per_block or max(1, XLA_KEYS_PER_BLOCK // page_size)
    block_keys = ppb * page_size
    seq, pos, valid = _token_coordinates(call.kv_lens, call.cu_q_lens, call.num_seqs, T)
    kv_len_t = call.kv_lens[seq]
    # Page table of each token, padded to whole key blocks (pad with page 0: masked anyway).
    n_pages = dims.pages_per_seq
    padded_pages = -(-n_pages // ppb) * ppb
    tok_pages = jnp.pad(call.page_indices, ((0, 0), (0, padded_pages - n_pages)))[seq]  # [T, padded_pages]
    tok_pages = jnp.clip(tok_pages, 0, k_pages.shape[0] - 1)
    qg = q.reshape(T, KVH, G, D).astype(jnp.float32)
    # Rows padded to whole row blocks; padding rows are invalid.
    Tp = -(-T // R) * R
    pad = Tp - T

    def rows(x, fill=0):
        x = jnp.pad(x, ((0, pad),) + ((0, 0),) * (x.ndim - 1), constant_values=fill)
        return x.reshape((Tp // R, R) + x.shape[1:])

    key_offsets = jnp.arange(block_keys, dtype=jnp.int32)

    def row_block(args):
        qb, pagesb, posb, kvlb, validb = args  # [R, KVH, G, D], [R, padded_pages], [R], [R], [R]
        last_key = jnp.where(validb, jnp.minimum(posb, kvlb - 1), -1)
        num_blocks = (jnp.max(last_key) + block_keys) // block_keys  # key blocks 0 .. num_blocks-1
        first_block = 0
        if sliding_window is not None:
            first_key = jnp.where(validb, posb - sliding_window + 1, jnp.iinfo(jnp.int32).max)
            first_block = jnp.minimum(jnp.clip(jnp.min(first_key), 0, None) // block_keys, num_blocks)

        def body(b, carry):
            m, l, acc = carry  # [R, KVH, G], [R, KVH, G], [R, KVH, G, D]
            pids = lax.dynamic_slice_in_dim(pagesb, b * ppb, ppb, axis=1)  # [R, ppb]
            k = k_pages[pids].reshape(R, block_keys, KVH, D).astype(jnp.float32)
            v = v_pages[pids].reshape(R, block_keys, KVH, D).astype(jnp.float32)
            if k_scales is not None:
                k = k * k_scales[pids].reshape(R, block_keys, KVH, 1).astype(jnp.float32)
                v = v * v_scales[pids].reshape(R, block_keys, KVH, 1).astype(jnp.float32)
            key = b * block_keys + key_offsets  # [BK]
            mask = (key[None, :] <= posb[:, None]) & (key[None, :] < kvlb[:, None]) & validb[:, None]
            if sliding_window is not None:
                mask &= key[None, :] > (posb[:, None] - sliding_window)
            s = jnp.einsum("tkgd,tlkd->tkgl", qb, k, precision=lax.Precision.HIGHEST) * sm_scale
            if soft_cap is not None:
                s = soft_cap * jnp.tanh(s / soft_cap)
            s = jnp.where(mask[:, None, None, :], s, -jnp.inf)
            m_new = jnp.maximum(m, jnp.max(s, axis=-1))
            m_safe = jnp.where(jnp.isfinite(m_new), m_new, 0.0)
            p = jnp.exp(s - m_safe[..., None])  # masked entries: exp(-inf) = 0
            alpha = jnp.exp(m - m_safe)
            v = jnp.where(mask[:, :, None, None], v, 0.0)  # unused slots may hold anything, even NaN
            acc = acc * alpha[..., None] + jnp.einsum("tkgl,tlkd->tkgd", p, v, precision=lax.Precision.HIGHEST)
            return m_new, l * alpha + p.sum(-1), acc

        init = (
            jnp.full((R, KVH, G), -jnp.inf, jnp.float32),
            jnp.zeros((R, KVH, G), jnp.float32),
            jnp.zeros((R, KVH, G, D), jnp.float32),
        )
        _, l, acc = lax.fori_loop(first_block, num_blocks, body, init)
        return acc / jnp.where(l > 0, l, 1.0)[..., None]

    out = lax.map(row_block, (rows(qg), rows(tok_pages), rows(pos), rows(kv_len_t), rows(valid, False)))
    return out.reshape(Tp, KVH * G, D)[:T].astype(q.dtype)
