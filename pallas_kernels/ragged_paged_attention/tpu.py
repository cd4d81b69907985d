"""Ragged paged attention for TPUs (Pallas Mosaic): KV pages stay in HBM, double-buffered into VMEM.

Same contract as ``kernel.ragged_paged_attention`` (the GPU kernel): the same arguments, the same
``validate_inputs`` and the same jnp reference (``ragged_paged_attention_reference``) in the tests.
Data flow of one call::

    HBM                                   SMEM                            VMEM
    q      [T, Hq*D]  --BlockSpec-->                                      q block  [block_q, Hq*D]
    k/v    [P, page, lanes] (memory_space ANY; one DMA a page)  -------->  k/v buf  [2, ppb, page, lanes]
    scales [P, 1, slanes]   (8-bit cache only, DMA'd beside the codes) ->  s buf    [2, ppb, 1, slanes]
    page table [S * pages_per_seq] --- a window of ppb ids an item --> pages [2, ppb]
                                          scalar prefetch: kv_lens,
                                          cu_q_lens, num_seqs,
                                          seq_lo / seq_hi per q block
    out    [T, Hq*D]  <--BlockSpec--                                      acc [Hq, block_q, D], m, l [Hq, block_q, 1]

Grid: one program per block of ``block_q`` consecutive rows of the flattened token axis. Rows of one
q block can belong to several sequences (a block of decode rows holds ``block_q`` of them); the
wrapper finds, per q block, the range of sequences that own one of its rows (``seq_lo``/``seq_hi``,
a searchsorted over ``cu_q_lens``), and the program walks that range::

    q block b:   rows [b*block_q, (b+1)*block_q)
                  | s3 (tail) | s4 | s5 | s6 (head of a prefill chunk) |
    work items:  (s3, key blocks of s3 that rows of s3 in this block can see), (s4, ...), ...

Each work item is one sequence and one key block (``pages_per_block`` pages). Its pages are copied
from HBM by one async DMA per page into one of two VMEM slots while the previous item computes on
the other (double buffering across items, sequences included); then, for every kv head, the key
block is sliced out of the page rows by lanes (``[:, h*D:(h+1)*D]``), dequantized if 8-bit, and
every q head of that kv head's group runs one online-softmax step on all ``block_q`` rows. Rows that
are not the item's sequence are masked to ``MASK_VALUE``, which leaves their running max, sum and
accumulator unchanged (alpha = 1, p = 0): one set of accumulators serves every sequence of the
block, and each row ends with exactly its own sequence's softmax. Rows of no sequence (padding)
keep acc = 0 and come out as zeros.

Why this layout: one page of all kv heads, ``[page, lanes]`` with head ``h`` at lanes ``[h*D, (h+1)*D)``
and ``lanes`` a multiple of 128 (or exactly ``KVH*D``), is one contiguous DMA, read once for all heads, and
a head is a lane slice, tile-aligned when ``head_dim`` is a multiple of 128. An 8-bit cache's scales of a
page are one row, ``[1, slanes]``: head ``h``'s ``page`` scales at lanes ``[h*page, (h+1)*page)``, padded
to whole vregs. This is how the engine stores its TPU cache (``ragged_paged_attention_tpu_lanes``;
``runtime.quant.kv.LanePages``): XLA keeps an array whose last axis is a multiple of 128 in the tiles
Mosaic reads, so nothing is relaid out before the call. ``ragged_paged_attention_tpu`` takes the
``[P, page, KVH, D]`` pages (and ``[P, page, KVH]`` scales) of the other paths and converts them first,
which on a TPU is a relayout of the whole cache each call: a convenience, not the engine's path. The page table stays in HBM and each item copies its window
of ``pages_per_block`` ids into SMEM: scalar-prefetching the whole table would cap max_num_seqs x
max_model_len by SMEM (1 MiB on v5e/v6e; 256 sequences of 8,192 tokens at page 16 need 512 KiB).

Block sizes come from ``tpu_block_sizes`` (a table keyed by device kind and shape, with a fallback
rule). The entries are reasoned, not tuned: no TPU has run this kernel yet (see the README's
"what is proven where" table).
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
from pallas_kernels.ragged_paged_attention.kernel import (
    MASK_VALUE,
    Dims,
    PagedCall,
    _require,
    paged_attention_api,
    scaled_logits,
    validate_inputs,
)


@dataclasses.dataclass(frozen=True)
class TpuBlockSizes:
    """Tuning knobs of the TPU kernel (static; they never change the result).

    block_q:          rows of the flattened token axis per program (a multiple of 8; 16 for bfloat16
                      and 32 for 8-bit inputs keep sublane tiles whole when compiled).
    pages_per_block:  pages per key block (``block_k = pages_per_block * page_size`` keys per
                      online-softmax step and per DMA batch).
    vmem_limit_bytes: the scoped VMEM limit given to Mosaic, or None for the compiler's default.
    """

    block_q: int = 32
    pages_per_block: int = 8
    vmem_limit_bytes: int | None = None

    def __post_init__(self):
        for name in ("block_q", "pages_per_block"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"TpuBlockSizes.{name} must be an int >= 1, got {value!r}")
        if self.vmem_limit_bytes is not None and (
            not isinstance(self.vmem_limit_bytes, int) or self.vmem_limit_bytes < 1
        ):
            raise ValueError(
                f"TpuBlockSizes.vmem_limit_bytes must be None or an int >= 1, got {self.vmem_limit_bytes!r}"
            )


# ---- block sizes: a table keyed by device kind and shape, then a fallback rule ---------------

# (chip, head_dim, page_size) -> (block_q, pages_per_block). Key blocks of 128 keys fill the lanes
# of the [block_q, block_k] scores on every chip; v6e's 256-wide MXU takes 256 when head_dim >= 128.
# Reasoned from the chips' shapes, not measured: replace entries with timed ones on a device.
TUNED = {
    ("v5e", 64, 16): (32, 8),
    ("v5e", 64, 32): (32, 4),
    ("v5e", 64, 64): (32, 2),
    ("v5e", 128, 16): (32, 8),
    ("v5e", 128, 32): (32, 4),
    ("v5e", 128, 64): (32, 2),
    ("v5e", 256, 16): (16, 8),
    ("v5e", 256, 32): (16, 4),
    ("v5e", 256, 64): (16, 2),
    ("v6e", 64, 16): (32, 8),
    ("v6e", 64, 32): (32, 4),
    ("v6e", 64, 64): (32, 2),
    ("v6e", 128, 16): (32, 16),
    ("v6e", 128, 32): (32, 8),
    ("v6e", 128, 64): (32, 4),
    ("v6e", 256, 16): (16, 16),
    ("v6e", 256, 32): (16, 8),
    ("v6e", 256, 64): (16, 4),
}
_DEFAULT_VMEM = 16 * 2**20  # the smallest chip's VMEM (v4), for unknown device kinds
LANES = 128  # a vreg's lanes: a KV row of this many lanes (or exactly KVH * D) goes to the kernel as it is
PAGE_TABLE_TILE = 128  # Mosaic slices a 1-D int32 array at whole tiles of 128 entries (4096 bits)


def vmem_capacity(device_kind: str | None) -> int:
    info = tpu_info(device_kind)
    return _DEFAULT_VMEM if info is None else info.vmem_capacity_bytes


def vmem_bytes(dims: Dims, q_dtype, kv_dtype, scale_dtype, block_q: int, pages_per_block: int) -> int:
    """VMEM the kernel uses: q and out blocks (double-buffered by Pallas), two KV slots, accumulators."""
    hq, d, kvh, ps = dims.num_q_heads, dims.head_dim, dims.num_kv_heads, dims.page_size

    def rows(n, dtype):  # a sublane tile is 8 rows of 32 bits: 8 float32, 16 bfloat16, 32 int8 rows
        tile = 8 * (4 // jnp.dtype(dtype).itemsize)
        return -(-n // tile) * tile

    def lanes(n):  # 128 lanes
        return -(-n // 128) * 128

    qb = jnp.dtype(q_dtype).itemsize
    q_and_out = 2 * 2 * rows(block_q, q_dtype) * lanes(hq * d) * qb
    kv = 2 * 2 * pages_per_block * rows(ps, kv_dtype) * lanes(kvh * d) * jnp.dtype(kv_dtype).itemsize
    scales = (  # one lane row a page (a whole sublane tile in VMEM), and the select that makes it a column
        0
        if scale_dtype is None
        else 2 * 2 * pages_per_block * rows(1, scale_dtype) * lanes(kvh * ps) * jnp.dtype(scale_dtype).itemsize
        + pages_per_block * ps * lanes(ps) * 4
    )
    acc = hq * rows(block_q, jnp.float32) * (lanes(d) + 2 * 128) * 4
    # The compute of one (head, key block) step: scores, probabilities and a dequantized key block.
    temps = 4 * rows(block_q, jnp.float32) * lanes(pages_per_block * ps) * 4 + 2 * pages_per_block * ps * lanes(d) * 4
    return q_and_out + kv + scales + acc + temps


def tpu_block_sizes(device_kind: str | None, dims: Dims, q_dtype, kv_dtype, scale_dtype=None) -> TpuBlockSizes:
    """Block sizes for ``device_kind`` and this shape: the table, else the fallback rule.

    Fallback: ``block_q`` 32 (16 for head_dim > 128), key blocks of ~128 keys
    (``pages_per_block = max(1, 128 // page_size)``). Either way, while the VMEM estimate exceeds
    half the chip's VMEM, ``block_q`` and then ``pages_per_block`` are halved (to one sublane tile of
    q's dtype, 8 rows of float32 or 16 of bfloat16, and 1). The
    scoped VMEM limit is set to twice the estimate, within the chip's capacity.
    """
    hit = TUNED.get((tpu_chip(device_kind), dims.head_dim, dims.page_size))
    if hit is None:
        block_q = 32 if dims.head_dim <= 128 else 16
        pages_per_block = max(1, 128 // dims.page_size)
    else:
        block_q, pages_per_block = hit
    capacity = vmem_capacity(device_kind)
    min_block_q = 8 * (4 // jnp.dtype(q_dtype).itemsize)  # whole sublane tiles of q: 8 f32, 16 bf16
    while vmem_bytes(dims, q_dtype, kv_dtype, scale_dtype, block_q, pages_per_block) > capacity // 2:
        if block_q > min_block_q:
            block_q //= 2
        elif pages_per_block > 1:
            pages_per_block //= 2
        else:
            break
    need = vmem_bytes(dims, q_dtype, kv_dtype, scale_dtype, block_q, pages_per_block)
    limit = min(capacity, max(32 * 2**20, 2 * need)) if capacity > 32 * 2**20 else capacity
    return TpuBlockSizes(block_q=block_q, pages_per_block=pages_per_block, vmem_limit_bytes=limit)


# ---- the kernel ------------------------------------------------------------------------------


def _kernel(
    # scalar prefetch (SMEM)
    kv_lens_ref,  # int32[max_num_seqs]
    cu_q_lens_ref,  # int32[max_num_seqs + 1]  (entries past num_seqs replaced by the total)
    num_seqs_ref,  # int32[1]  (clipped to [0, max_num_seqs])
    seq_lo_ref,  # int32[num_q_blocks]  first sequence owning a row of q block b
    seq_hi_ref,  # int32[num_q_blocks]  one past the last
    # inputs
    page_indices_hbm,  # int32[max_num_seqs * pages_per_seq]  (HBM, row-major; pages_per_seq a multiple of ppb)
    q_ref,  # [block_q, num_q_heads * head_dim]  (VMEM block)
    k_hbm,  # [total_num_pages, page_size, num_kv_heads * head_dim]  (HBM) q's dtype or 8-bit codes
    v_hbm,  # [total_num_pages, page_size, num_kv_heads * head_dim]  (HBM)
    *rest,
    # k_scales_hbm,  # [total_num_pages, 1, scale_lanes]  (HBM, 8-bit cache only; head h at h * page_size)
    # v_scales_hbm,  # [total_num_pages, 1, scale_lanes]  (HBM, 8-bit cache only)
    # o_ref,  # [block_q, num_q_heads * head_dim]  (VMEM block)
    # k_buf, v_buf,  # [2, pages_per_block, page_size, num_kv_heads * head_dim]  (VMEM scratch)
    # ks_buf, vs_buf,  # [2, pages_per_block, 1, scale_lanes]  (VMEM scratch, 8-bit only)
    # sems,  # DMA semaphores [4, 2]: (k, v, k scales, v scales) x slot
    # pages_ref,  # int32[2, pages_per_block] (SMEM scratch): the item's window of the page table, per slot
    # pages_sem,  # DMA semaphore [2]: its copies
    # m_ref, l_ref,  # [num_q_heads, block_q, 1] float32: running max and sum per row and q head
    # acc_ref,  # [num_q_heads, block_q, head_dim] float32: running numerator
    quantized: bool,
    num_q_heads: int,
    num_kv_heads: int,
    head_dim: int,
    pages_per_seq: int,
    window: int,
    sm_scale: float,
    sliding_window: int | None,
    soft_cap: float | None,
):
    if quantized:
        ks_hbm, vs_hbm, o_ref, k_buf, v_buf, ks_buf, vs_buf, sems, pages_ref, pages_sem, m_ref, l_ref, acc_ref = rest
    else:
        ks_hbm = vs_hbm = ks_buf = vs_buf = None
        o_ref, k_buf, v_buf, sems, pages_ref, pages_sem, m_ref, l_ref, acc_ref = rest
    block_q = q_ref.shape[0]
    _, ppb, page_size, _ = k_buf.shape
    block_k = ppb * page_size
    total_num_pages = k_hbm.shape[0]
    group = num_q_heads // num_kv_heads
    D = head_dim
    b = pl.program_id(0)
    row0 = b * block_q
    seq_lo, seq_hi = seq_lo_ref[b], seq_hi_ref[b]

    m_ref[...] = jnp.full(m_ref.shape, MASK_VALUE, jnp.float32)
    l_ref[...] = jnp.zeros(l_ref.shape, jnp.float32)
    acc_ref[...] = jnp.zeros(acc_ref.shape, jnp.float32)
    # Each page's scales are one lane row (head h's at lanes [h * page, (h + 1) * page)); the dequantization
    # wants them as a column beside the page's key rows. The lane -> sublane move is a select and a lane sum
    # against the identity (a page x page mask), which Mosaic compiles; a select, not a product with the
    # identity, so that a NaN scale in an unused slot cannot leak into another token's sum (0 * NaN).
    ident = lax.broadcasted_iota(jnp.int32, (page_size, page_size), 0) == lax.broadcasted_iota(
        jnp.int32, (page_size, page_size), 1
    )

    def scale_column(buf, slot, h):
        """(ppb, page, 1) float32: head ``h``'s scales of the slot's pages, one per key row."""
        row = buf[slot].reshape(ppb, buf.shape[-1]).astype(jnp.float32)[:, h * page_size : (h + 1) * page_size]
        return jnp.sum(jnp.where(ident[None], row[:, None, :], 0.0), axis=-1, keepdims=True)

    def key_blocks(seq):
        """[blk_lo, blk_hi): the key blocks that rows of ``seq`` inside this q block can see."""
        q_start, q_end = cu_q_lens_ref[seq], cu_q_lens_ref[seq + 1]
        kv_len = kv_lens_ref[seq]
        r0, r1 = jnp.maximum(q_start, row0), jnp.minimum(q_end, row0 + block_q)
        first_pos = kv_len - (q_end - q_start) + (r0 - q_start)
        last_pos = first_pos + (r1 - r0) - 1
        lo = 0 if sliding_window is None else jnp.maximum(first_pos - sliding_window + 1, 0)
        hi = jnp.maximum(jnp.minimum(last_pos + 1, kv_len), 0)
        blk_lo, blk_hi = lo // block_k, (hi + block_k - 1) // block_k
        empty = r1 <= r0
        return jnp.where(empty, 0, blk_lo), jnp.where(empty, 0, blk_hi)

    def first_item(seq):
        """The first (seq', blk) with seq' >= seq that has work, or (seq_hi, 0)."""

        def cond(c):
            s, lo, hi = c
            return (s < seq_hi) & (lo >= hi)

        def body(c):
            s = c[0] + 1
            lo, hi = key_blocks(jnp.minimum(s, seq_hi - 1))
            return s, lo, hi

        lo, hi = key_blocks(jnp.minimum(seq, jnp.maximum(seq_hi - 1, 0)))
        s, lo, _ = lax.while_loop(cond, body, (seq, lo, hi))
        return s, lo

    def next_item(seq, blk):
        _, hi = key_blocks(seq)
        return lax.cond(blk + 1 < hi, lambda: (seq, blk + 1), lambda: first_item(seq + 1))

    arrays = [(k_hbm, k_buf), (v_hbm, v_buf)] + ([(ks_hbm, ks_buf), (vs_hbm, vs_buf)] if quantized else [])

    def for_each_copy(seq, blk, slot, action):
        """``action`` (start or wait) on the DMAs of the item's pages that belong to the sequence.

        One copy per (page of the key block, array), into page slot j of VMEM slot ``slot``; pages past
        the sequence's last are neither copied nor waited for (their keys are masked). A loop over the
        pages, not an unrolled one: the kernel's size does not grow with ``pages_per_block``. The page
        ids come from ``pages_ref[slot]`` (``fetch_pages``); a wait needs only the copy's shape.
        """
        n_pages = jnp.minimum((kv_lens_ref[seq] + page_size - 1) // page_size, pages_per_seq)
        first = page_offset(seq, blk)

        def body(j, carry):
            page = jnp.clip(pages_ref[slot, first + j], 0, total_num_pages - 1)

            @pl.when(blk * ppb + j < n_pages)
            def _():
                for a, (src, dst) in enumerate(arrays):
                    action(pltpu.make_async_copy(src.at[page], dst.at[slot, j], sems.at[a, slot]))

            return carry

        lax.fori_loop(0, ppb, body, 0)

    def fetch_pages(seq, blk, slot):
        """The item's ``pages_per_block`` page ids: a small DMA from the page table in HBM into SMEM.

        The table stays out of SMEM (1 MiB on v5e/v6e): 256 sequences of 8,192 tokens at page 16
        would need 512 KiB of it as a scalar-prefetch operand. Mosaic slices a 1-D int32 array only
        at offsets that are whole 128-entry tiles, so the copy is the aligned window that holds the
        item's ids (``window`` entries from ``start`` rounded down to a tile); ``page_offset`` finds
        them in it::

            table  |  tile k  |  tile k+1  | ...
                   ^aligned   ^start = seq * pages_per_seq + blk * ppb
                   [------------ window ------------]
        """
        start = seq * pages_per_seq + blk * ppb
        aligned = pl.multiple_of((start // PAGE_TABLE_TILE) * PAGE_TABLE_TILE, PAGE_TABLE_TILE)
        copy = pltpu.make_async_copy(
            page_indices_hbm.at[pl.ds(aligned, window)], pages_ref.at[slot], pages_sem.at[slot]
        )
        copy.start()
        copy.wait()

    def page_offset(seq, blk):
        start = seq * pages_per_seq + blk * ppb
        return start - (start // PAGE_TABLE_TILE) * PAGE_TABLE_TILE

    def start(seq, blk, slot):
        fetch_pages(seq, blk, slot)
        for_each_copy(seq, blk, slot, lambda copy: copy.start())

    def wait(seq, blk, slot):
        for_each_copy(seq, blk, slot, lambda copy: copy.wait())

    def compute(seq, blk, slot):
        q_start, q_end = cu_q_lens_ref[seq], cu_q_lens_ref[seq + 1]
        kv_len = kv_lens_ref[seq]
        row = row0 + lax.broadcasted_iota(jnp.int32, (block_q, 1), 0)  # (bq, 1) absolute row
        q_pos = kv_len - (q_end - q_start) + (row - q_start)  # (bq, 1) absolute position
        key = blk * block_k + lax.broadcasted_iota(jnp.int32, (1, block_k), 1)  # (1, bk)
        mask = (row >= q_start) & (row < q_end) & (key <= q_pos) & (key < kv_len)  # (bq, bk)
        if sliding_window is not None:
            mask &= key > q_pos - sliding_window
        key_ok = (blk * block_k + lax.broadcasted_iota(jnp.int32, (block_k, 1), 0)) < kv_len  # (bk, 1)
        for h in range(num_kv_heads):
            k = k_buf[slot, :, :, h * D : (h + 1) * D]  # (ppb, page, D)
            v = v_buf[slot, :, :, h * D : (h + 1) * D]  # (ppb, page, D)
            if quantized:
                ks, vs = scale_column(ks_buf, slot, h), scale_column(vs_buf, slot, h)  # (ppb, page, 1)
                k = (k.astype(jnp.float32) * ks).reshape(block_k, D).astype(q_ref.dtype)
                v = (v.astype(jnp.float32) * vs).reshape(block_k, D).astype(q_ref.dtype)
            else:
                k, v = k.reshape(block_k, D), v.reshape(block_k, D)
            # Slots past kv_len may hold anything (stale VMEM, NaN pages); 0 * NaN would leak through p @ v.
            v = jnp.where(key_ok, v, jnp.zeros_like(v))
            f32 = q_ref.dtype == jnp.float32
            precision = lax.Precision.HIGHEST if f32 else lax.Precision.DEFAULT
            for g in range(group):
                j = h * group + g
                q = q_ref[:, j * D : (j + 1) * D]  # (bq, D)
                s = scaled_logits(q, k, sm_scale=sm_scale, soft_cap=soft_cap, precision=precision)  # (bq, bk)
                s = jnp.where(mask, s, MASK_VALUE)
                m_prev, l_prev = m_ref[j], l_ref[j]  # (bq, 1)
                m_next = jnp.maximum(m_prev, s.max(axis=1, keepdims=True))
                alpha = jnp.exp(m_prev - m_next)
                p = jnp.where(mask, jnp.exp(s - m_next), 0.0)
                l_ref[j] = alpha * l_prev + p.sum(axis=1, keepdims=True)
                m_ref[j] = m_next
                pv = lax.dot_general(
                    p.astype(v.dtype),
                    v,
                    (((1,), (0,)), ((), ())),
                    precision=precision,
                    preferred_element_type=jnp.float32,
                )  # (bq, D)
                acc_ref[j] = alpha * acc_ref[j] + pv

    seq0, blk0 = first_item(seq_lo)

    @pl.when(seq0 < seq_hi)
    def _():
        start(seq0, blk0, 0)

    def loop_cond(carry):
        return carry[0] < seq_hi

    def loop_body(carry):
        seq, blk, slot = carry
        nseq, nblk = next_item(seq, blk)

        @pl.when(nseq < seq_hi)
        def _():
            start(nseq, nblk, 1 - slot)  # the next item's pages load while this one computes

        wait(seq, blk, slot)
        compute(seq, blk, slot)
        return nseq, nblk, 1 - slot

    lax.while_loop(loop_cond, loop_body, (seq0, blk0, jnp.int32(0)))

    for j in range(num_q_heads):
        l = l_ref[j]
        out = acc_ref[j] / jnp.where(l > 0, l, 1.0)
        o_ref[:, j * D : (j + 1) * D] = out.astype(o_ref.dtype)


def _q_block_seq_ranges(cu_q_lens, num_seqs, block_q: int, num_q_blocks: int):
    """Per q block: [seq_lo, seq_hi), the sequences owning one of its rows; and cu_q_lens made sorted."""
    max_num_seqs = cu_q_lens.shape[0] - 1
    n = jnp.clip(num_seqs[0], 0, max_num_seqs)
    # Entries past num_seqs may be anything: make those sequences empty, keeping cu sorted.
    cu = jnp.where(jnp.arange(max_num_seqs + 1) <= n, cu_q_lens, cu_q_lens[n]).astype(jnp.int32)
    starts = jnp.arange(num_q_blocks, dtype=jnp.int32) * block_q
    # side="right" skips empty sequences: row r belongs to the last i with cu[i] <= r.
    seq_lo = jnp.searchsorted(cu, starts, side="right").astype(jnp.int32) - 1
    seq_hi = jnp.searchsorted(cu, starts + block_q - 1, side="right").astype(jnp.int32)
    seq_lo = jnp.clip(seq_lo, 0, n)
    seq_hi = jnp.where(starts < cu[n], jnp.clip(seq_hi, 0, n), seq_lo)  # blocks past the last row: nothing
    return cu, n.reshape(1), seq_lo, seq_hi


def _check_tpu_tiles(dims: Dims, q_dtype, kv_dtype, bs: TpuBlockSizes, device_kind: str | None = None) -> None:
    """What compiling for a TPU needs beyond ``validate_inputs`` (interpret mode needs none of it)."""
    info = tpu_info(device_kind)
    if info is not None:
        need = smem_bytes(dims.max_num_seqs, -(-dims.max_num_tokens // bs.block_q), bs.pages_per_block)
        have = info.smem_capacity_bytes
        if need > have // 2:
            raise ValueError(
                f"the sequence metadata needs {need} bytes of SMEM, more than half of {device_kind}'s "
                f"{have}: fewer max_num_seqs or a larger block_q"
            )
    sublanes = 8 * (4 // jnp.dtype(q_dtype).itemsize)
    if bs.block_q % sublanes:
        raise ValueError(
            f"compiled TPU kernel needs block_q to be a multiple of {sublanes} for {jnp.dtype(q_dtype).name} "
            f"q, got {bs.block_q}"
        )
    # A page is reshaped into key rows: whole sublane tiles of the dtype the key block is computed in
    # (8-bit codes are widened to float32 first).
    rows = 8 if jnp.dtype(kv_dtype).itemsize == 1 else 8 * (4 // jnp.dtype(kv_dtype).itemsize)
    if dims.page_size % rows:
        raise ValueError(
            f"compiled TPU kernel needs page_size to be a multiple of {rows} for a "
            f"{jnp.dtype(kv_dtype).name} KV cache, got {dims.page_size}"
        )


@paged_attention_api
def ragged_paged_attention_tpu(
    call: PagedCall,
    *,
    block_sizes: TpuBlockSizes | None = None,
    device_kind: str | None = None,
    interpret: bool = False,
):
    """Causal grouped-query attention over a paged KV cache for a ragged batch (Pallas TPU kernel).

    The arrays are ``ragged_paged_attention``'s (below); k_pages and v_pages (and their scales) stay
    in HBM and are DMA'd page by page as needed, and page-table entries past a sequence's last page
    are never read.

    Knobs:
      block_sizes:  TpuBlockSizes, or None for ``tpu_block_sizes(device_kind, ...)`` (static)
      device_kind:  the TPU to pick block sizes for (e.g. "TPU v6 lite"); None: the target TPU (an
                    abstract mesh's when cross-lowering, else this process's), or the fallback rule
                    where there is none (static)
      interpret:    run through the Pallas TPU interpreter (``pltpu.InterpretParams()``: DMAs,
                    semaphores and scalar prefetch simulated on CPU) instead of compiling (static)
    """
    P, ps, KVH, D = call.k_pages.shape
    lanes = (call.k_pages.reshape(P, ps, KVH * D), call.v_pages.reshape(P, ps, KVH * D))  # a relayout on TPU
    if call.quantized:
        call = call._replace(k_scales=scale_rows(call.k_scales), v_scales=scale_rows(call.v_scales))
    return _lanes_call(call, *lanes, block_sizes=block_sizes, device_kind=device_kind, interpret=interpret)


def scale_rows(scales: jax.Array) -> jax.Array:
    """8-bit cache scales ``[P, page, KVH]`` -> the kernel's ``[P, 1, slanes]``: each page's scales one row,
    head by head (head ``h`` at lanes ``[h * page, (h + 1) * page)``), padded to a multiple of 128 lanes."""
    P, ps, kvh = scales.shape
    rows = jnp.swapaxes(scales, 1, 2).reshape(P, 1, kvh * ps)
    pad = -(-kvh * ps // LANES) * LANES - kvh * ps
    return jnp.pad(rows, ((0, 0), (0, 0), (0, pad))) if pad else rows


@functools.partial(
    jax.jit,
    static_argnames=(
        "num_kv_heads",
        "sm_scale",
        "sliding_window",
        "soft_cap",
        "block_sizes",
        "device_kind",
        "interpret",
    ),
)
def ragged_paged_attention_tpu_lanes(
    q,
    k_lanes,
    v_lanes,
    kv_lens,
    page_indices,
    cu_q_lens,
    num_seqs,
    *,
    num_kv_heads: int,
    sm_scale: float,
    sliding_window: int | None = None,
    soft_cap: float | None = None,
    k_scales: jax.Array | None = None,
    v_scales: jax.Array | None = None,
    block_sizes: TpuBlockSizes | None = None,
    device_kind: str | None = None,
    interpret: bool = False,
) -> jax.Array:
    """``ragged_paged_attention_tpu`` over a cache already in the kernel's layout (what the engine stores on
    a TPU: ``runtime.quant.kv.LanePages``): ``k_lanes, v_lanes [total_num_pages, page_size, lanes]``, kv head
    ``h`` at lanes ``[h * head_dim, (h + 1) * head_dim)``, lanes past ``num_kv_heads * head_dim`` padding
    (never read). An 8-bit cache's ``k_scales, v_scales`` are ``[total_num_pages, 1, scale_lanes]``: a page's
    scales one row, head ``h``'s ``page_size`` of them at lanes ``[h * page_size, (h + 1) * page_size)``
    (``scale_rows`` makes them from ``[P, page, KVH]``). With ``lanes`` and ``scale_lanes`` multiples of 128
    (or exactly ``num_kv_heads * head_dim`` and ``num_kv_heads * page_size``) the arrays go to the kernel as
    they are: no relayout before the call. Every other argument is ``ragged_paged_attention_tpu``'s;
    ``num_kv_heads`` is static."""
    _require(
        k_lanes.ndim == 3, f"k_lanes must be [total_num_pages, page_size, lanes], got shape {tuple(k_lanes.shape)}"
    )
    _require(
        tuple(v_lanes.shape) == tuple(k_lanes.shape),
        f"k_lanes and v_lanes must have the same shape, got {tuple(k_lanes.shape)} and {tuple(v_lanes.shape)}",
    )
    P, ps, width = k_lanes.shape
    _require(
        isinstance(num_kv_heads, int) and num_kv_heads >= 1, f"num_kv_heads must be an int >= 1, got {num_kv_heads!r}"
    )
    D = q.shape[-1]
    need = num_kv_heads * D
    _require(
        width == need or (width >= need and width % LANES == 0),
        f"k_lanes holds {width} lanes a token; {num_kv_heads} kv heads x head_dim {D} need {need}, or a multiple "
        f"of {LANES} at least that",
    )
    for name, sc in (("k_scales", k_scales), ("v_scales", v_scales)):
        if sc is None:
            continue
        need = num_kv_heads * ps
        _require(
            sc.ndim == 3
            and tuple(sc.shape[:2]) == (P, 1)
            and (sc.shape[2] == need or (sc.shape[2] >= need and sc.shape[2] % LANES == 0)),
            f"{name} must be [total_num_pages={P}, 1, scale_lanes]: {num_kv_heads} kv heads x page_size {ps} = "
            f"{need} lanes, or a multiple of {LANES} at least that; got shape {tuple(sc.shape)}",
        )
    static = dict(sm_scale=sm_scale, sliding_window=sliding_window, soft_cap=soft_cap)
    # The shared checks, on the [P, page, KVH, D] pages these lanes hold (shapes only: nothing is reshaped).
    heads = jax.ShapeDtypeStruct((P, ps, num_kv_heads, D), k_lanes.dtype)
    per_head = {  # the scales as [P, page, KVH], for the checks
        name: None if sc is None else jax.ShapeDtypeStruct((P, ps, num_kv_heads), sc.dtype)
        for name, sc in (("k_scales", k_scales), ("v_scales", v_scales))
    }
    dims = validate_inputs(q, heads, heads, kv_lens, cu_q_lens, num_seqs, page_indices, **static, **per_head)
    scales = dict(k_scales=k_scales, v_scales=v_scales)
    call = PagedCall(q, k_lanes, v_lanes, kv_lens, page_indices, cu_q_lens, num_seqs, **scales, **static, dims=dims)
    return _lanes_call(call, k_lanes, v_lanes, block_sizes=block_sizes, device_kind=device_kind, interpret=interpret)


def _lanes_call(call: PagedCall, k_lanes, v_lanes, *, block_sizes, device_kind, interpret):
    """The kernel over ``[P, page, lanes]`` K and V and ``[P, 1, scale_lanes]`` scales (``call``'s own pages
    are not read; its scales are these)."""
    q, page_indices, dims = call.q, call.page_indices, call.dims
    k_scales, v_scales, quantized = call.k_scales, call.v_scales, call.quantized
    scale_dtype = k_scales.dtype if quantized else None
    device_kind = device_kind or target_device_kind("tpu")
    if block_sizes is None:
        block_sizes = tpu_block_sizes(device_kind, dims, q.dtype, k_lanes.dtype, scale_dtype)
    if not interpret:
        _check_tpu_tiles(dims, q.dtype, k_lanes.dtype, block_sizes, device_kind)
    T, Hq, D, KVH, ps = dims.max_num_tokens, dims.num_q_heads, dims.head_dim, dims.num_kv_heads, dims.page_size
    width = k_lanes.shape[2]
    block_q, ppb = block_sizes.block_q, block_sizes.pages_per_block
    num_q_blocks = pl.cdiv(T, block_q)
    Tp = num_q_blocks * block_q
    q2 = q.reshape(T, Hq * D)
    if Tp != T:
        q2 = jnp.pad(q2, ((0, Tp - T), (0, 0)))
    cu, n, seq_lo, seq_hi = _q_block_seq_ranges(call.cu_q_lens, call.num_seqs, block_q, num_q_blocks)
    scalars = (call.kv_lens, cu, n, seq_lo, seq_hi)
    # Each item reads a window of ppb page ids: pad rows to whole windows (not needed when ppb divides
    # pages_per_seq, as at serving shapes, so no copy then).
    pages_per_seq = pl.cdiv(dims.pages_per_seq, ppb) * ppb
    if pages_per_seq != dims.pages_per_seq:
        page_indices = jnp.pad(page_indices, ((0, 0), (0, pages_per_seq - dims.pages_per_seq)))
    # The flat table, padded so the last item's aligned window stays inside it (fetch_pages).
    window = page_table_window(ppb)
    flat = page_indices.reshape(-1)
    flat_len = pl.cdiv(flat.shape[0], PAGE_TABLE_TILE) * PAGE_TABLE_TILE + window - PAGE_TABLE_TILE
    if flat_len != flat.shape[0]:
        flat = jnp.pad(flat, (0, flat_len - flat.shape[0]))

    kv_inputs = [k_lanes, v_lanes]
    scratch = [pltpu.VMEM((2, ppb, ps, width), k_lanes.dtype), pltpu.VMEM((2, ppb, ps, width), v_lanes.dtype)]
    if quantized:
        kv_inputs += [k_scales, v_scales]
        scratch += [pltpu.VMEM((2, ppb, *sc.shape[1:]), sc.dtype) for sc in (k_scales, v_scales)]
    scratch += [
        pltpu.SemaphoreType.DMA((4, 2)),
        pltpu.SMEM((2, window), jnp.int32),
        pltpu.SemaphoreType.DMA((2,)),
        pltpu.VMEM((Hq, block_q, 1), jnp.float32),
        pltpu.VMEM((Hq, block_q, 1), jnp.float32),
        pltpu.VMEM((Hq, block_q, D), jnp.float32),
    ]
    q_spec = pl.BlockSpec((block_q, Hq * D), lambda b, *_: (b, 0))
    kernel = functools.partial(
        _kernel,
        quantized=quantized,
        num_q_heads=Hq,
        num_kv_heads=KVH,
        head_dim=D,
        pages_per_seq=pages_per_seq,
        window=window,
        sm_scale=float(call.sm_scale),
        sliding_window=call.sliding_window,
        soft_cap=None if call.soft_cap is None else float(call.soft_cap),
    )
    out = pl.pallas_call(
        kernel,
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=len(scalars),
            grid=(num_q_blocks,),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY), q_spec] + [pl.BlockSpec(memory_space=pl.ANY)] * len(kv_inputs),
            out_specs=q_spec,
            scratch_shapes=scratch,
        ),
        out_shape=jax.ShapeDtypeStruct((Tp, Hq * D), q.dtype),
        # Every program starts and drains its own DMAs: q blocks are independent (megacore may split them).
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel",), vmem_limit_bytes=block_sizes.vmem_limit_bytes
        ),
        interpret=pltpu.InterpretParams() if interpret else False,
        name="ragged_paged_attention_tpu",
    )(*scalars, flat, q2, *kv_inputs)
    return out[:T].reshape(T, Hq, D)


def page_table_window(pages_per_block: int) -> int:
    """Entries of the page table one item copies: whole 128-entry tiles that surely hold its
    ``pages_per_block`` ids. One tile when ``pages_per_block`` divides 128 (an item's ids then start at
    a multiple of ``pages_per_block`` and never straddle a tile), else enough tiles for any offset."""
    if PAGE_TABLE_TILE % pages_per_block == 0:
        return PAGE_TABLE_TILE
    return -(-(pages_per_block + PAGE_TABLE_TILE - 1) // PAGE_TABLE_TILE) * PAGE_TABLE_TILE


def smem_bytes(max_num_seqs: int, num_q_blocks: int, pages_per_block: int) -> int:
    """SMEM bytes: scalar-prefetched per-sequence and per-q-block metadata (1-D int32 arrays are padded
    to powers of two) and the two page-table windows. The page table itself stays in HBM."""

    def pow2(n):
        return 1 << max(0, math.ceil(math.log2(max(n, 1))))

    window = page_table_window(pages_per_block)
    return 4 * (pow2(max_num_seqs) + pow2(max_num_seqs + 1) + 1 + 2 * pow2(num_q_blocks) + 2 * window)
