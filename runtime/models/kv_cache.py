"""The paged KV cache as the model sees it: one step's ``AttentionMetadata``, where each token's K/V goes
(``slot_mapping``), and ``write_kv``, which puts it there.

The model runner (runtime/worker/model_runner.py) builds the metadata on the host from the scheduler's
block tables; the model families (llama.py, gemma3.py) take it into the jitted step, write their new
K/V with ``write_kv`` and pass it on to the attention function (runtime/worker/attention.py). All the
step's tokens sit on one flattened axis:

    tokens:      | seq0 chunk (3) | seq1 decode (1) | seq2 decode (1) | padding ... |
    cu_q_lens:   [0, 3, 4, 5, 5, 5 ...]           (seq i owns rows cu_q_lens[i]:cu_q_lens[i+1])
    kv_lens:     [ctx0 + 3, ctx1 + 1, ctx2 + 1, 0 ...]   (context including this step's tokens)
    page_indices[i]: the pages of seq i in order (unused tail: the null page 0)
    slot_mapping[t]: page * page_size + offset where token t's K/V is written (padding: slot 0, null page)

The cache is float pages ``[P, page, KVH, D]`` or, for an 8-bit KV cache, ``QuantizedPages`` (codes and
per-token, per-head scales, runtime/quant/kv.py): ``write_kv`` quantizes into those. For the TPU kernel
the pages (or codes) are ``LanePages`` (``[P, page, lanes]``, runtime/quant/kv.py): ``write_kv`` lays each
row out in lanes first.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from runtime.quant.kv import LanePages, LaneScales, QuantizedPages, quantize


class AttentionMetadata(NamedTuple):
    slot_mapping: jax.Array  # int32[T]
    kv_lens: jax.Array  # int32[S]
    page_indices: jax.Array  # int32[S, pages_per_seq]
    cu_q_lens: jax.Array  # int32[S + 1]
    num_seqs: jax.Array  # int32[1]


def slot_mapping(block_table, positions, block_size: int) -> np.ndarray:
    """int32 KV slot of each token position of one request: where ``write_kv`` puts its K/V.

    Position ``p`` lives in block ``block_table[p // block_size]`` at offset ``p % block_size``; the
    cache viewed as ``[num_blocks * block_size, ...]`` has it at that block's first slot + offset::

        positions    0 1 2 3 | 4 5 6 7 | 8 9         (block_size 4)
        block_table  [   7   ,    2    ,  5  ]
        slots        28..31  |  8..11  | 20 21       = table[p // 4] * 4 + p % 4

    The one place this arithmetic is written: the model runner's steps, scoring and KV transfers use it.
    """
    table = np.asarray(block_table, np.int32)
    pos = np.asarray(positions, np.int32)
    return table[pos // block_size] * block_size + pos % block_size


def write_kv(k_pages, v_pages, k: jax.Array, v: jax.Array, slot_mapping: jax.Array):
    """Scatter this step's K/V ([T, KVH, D]) into the paged cache ([P, page, KVH, D]) in place.

    A ``QuantizedPages`` cache gets each new token's K and V quantized per kv head (symmetric absmax,
    ``runtime.quant.kv.quantize``): codes into the pages, scales into the same slots of the scales.
    """
    return _write_pages(k_pages, k, slot_mapping), _write_pages(v_pages, v, slot_mapping)


# Rows are scattered into the pages as they are shaped, at (page, offset): the earlier scatter into a
# reshaped [P * page, ...] view made XLA:CPU copy every layer's K and V pages on every step (60 copies
# of the whole cache per SmolLM2 decode step: at 8K context, 377 MB a token; seen in the compiled HLO).
# Dynamic-update-slices row by row also avoided the copy but unrolled into 960 ops for a 16-token step
# (13 s to compile it instead of 5). Slots are always valid: padding rows write to the null block.
def _set_rows(pages, rows: jax.Array, slots: jax.Array):
    """pages [P, page, ...] with slot s = page * page_size + offset set to rows[i] for s = slots[i]
    (``LanePages``: rows [T, KVH, D] laid out in its lanes first)."""
    if isinstance(pages, LanePages):
        return pages.with_data(_set_rows(pages.data, pages.to_lanes(rows.astype(pages.dtype)), slots))
    if isinstance(pages, LaneScales):  # rows: the scales [T, KVH]
        return pages.set(slots, rows)
    page_size = pages.shape[1]
    return pages.at[slots // page_size, slots % page_size].set(rows.astype(pages.dtype), mode="promise_in_bounds")


def _write_pages(pages, x: jax.Array, slot_mapping: jax.Array):
    if isinstance(pages, QuantizedPages):
        codes, scales = quantize(x, pages.codes.dtype)  # [T, KVH, D], [T, KVH]
        return QuantizedPages(
            _set_rows(pages.codes, codes, slot_mapping), _set_rows(pages.scales, scales, slot_mapping)
        )
    return _set_rows(pages, x, slot_mapping)
