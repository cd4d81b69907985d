"""The TPU ragged paged-attention kernel in TPU interpret mode (``pltpu.InterpretParams``: scalar
prefetch, DMAs and semaphores simulated on CPU, uninitialized VMEM filled with NaN) against the same
reference and the same test matrix as the GPU kernel (tests/pallas_kernels/test_ragged_paged_attention.py): edge
lengths, permuted and poisoned page tables, mixed decode/prefill rows, float32/bfloat16, int8/fp8
KV, sliding windows, soft caps. Then its block-size table and what compiling for a TPU requires.
Lowering for TPU v5e/v6e is in tests/tools/test_lowering_check.py."""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pallas_kernels.lowering import lower_for_tpu
from pallas_kernels.ragged_paged_attention import ragged_paged_attention_tpu, validate_inputs
from pallas_kernels.ragged_paged_attention.tpu import (
    TUNED,
    TpuBlockSizes,
    _q_block_seq_ranges,
    ragged_paged_attention_tpu_lanes,
    scale_rows,
    tpu_block_sizes,
    vmem_bytes,
    vmem_capacity,
)
from tests.support import attention_cases as cases
from tests.support.attention_cases import BF16, F32, i32


def tpu_sizes(bs) -> TpuBlockSizes:
    """The GPU cases' BlockSizes as TPU block sizes (interpret mode takes any block_q)."""
    return TpuBlockSizes(block_q=bs.block_q, pages_per_block=bs.pages_per_block)


def run_tpu(b, **kw):
    return cases.run_paged(ragged_paged_attention_tpu, b, interpret=True, **kw)


@pytest.mark.parametrize("case", cases.CASES, ids=cases.case_id)
def test_tpu_kernel_matches_reference(case):
    b, kw = cases.batch_for(case, seed=cases.CASES.index(case))
    cases.assert_close(run_tpu(b, block_sizes=tpu_sizes(case[-1]), **kw), cases.run_reference(b, **kw))


@pytest.mark.parametrize(
    "case,kv_dtype", cases.QUANT_CASES, ids=[f"{k}-{cases.case_id(c)}" for c, k in cases.QUANT_CASES]
)
def test_tpu_kernel_matches_reference_on_quantized_cache(case, kv_dtype):
    # Unused slots hold random codes and NaN scales: reading one would show.
    b, kw = cases.batch_for(case, seed=200 + cases.QUANT_CASES.index((case, kv_dtype)), kv_dtype=kv_dtype)
    cases.assert_close(run_tpu(b, block_sizes=tpu_sizes(case[-1]), **kw), cases.run_reference(b, quantized=True, **kw))


@pytest.mark.parametrize(
    "block_sizes",
    [
        TpuBlockSizes(block_q=1, pages_per_block=1),
        TpuBlockSizes(block_q=3, pages_per_block=4),
        TpuBlockSizes(block_q=32, pages_per_block=5),
    ],
    ids=str,
)
def test_tpu_block_sizes_do_not_change_the_result(block_sizes):
    # One-row blocks (one sequence each), blocks spanning every sequence, key blocks past the page table.
    b, kw = cases.batch_for((4, 6, 2, 32, F32, 5, None, None), seed=7)
    cases.assert_close(run_tpu(b, block_sizes=block_sizes, **kw), cases.run_reference(b, **kw))


def test_tpu_all_decode_and_single_prefill_batches():
    for b in cases.decode_and_prefill_batches():
        # block_q 8 does not divide 6 or 20 rows: the last q block is padded inside the wrapper.
        cases.assert_close(
            run_tpu(b, sm_scale=0.2, block_sizes=TpuBlockSizes(block_q=8, pages_per_block=2)),
            cases.run_reference(b, sm_scale=0.2),
        )


def test_tpu_padding_sequences_may_hold_garbage_and_zero_sequences_give_zeros():
    b, garbage, none = cases.padded_batches()
    bs = TpuBlockSizes(block_q=2, pages_per_block=2)
    expected = cases.run_reference(b, sm_scale=0.2)
    cases.assert_close(run_tpu(garbage, sm_scale=0.2, block_sizes=bs), expected)
    cases.assert_close(run_tpu(none, sm_scale=0.2, block_sizes=bs), np.zeros(b["q"].shape, np.float32))


def test_q_block_sequence_ranges_by_hand():
    # Rows: seq0 0..4, seq1 5, seq2 empty, seq3 6..8; padding rows 9..; block_q 4.
    #   block 0 rows 0-3  -> seq0 only          [0, 1)
    #   block 1 rows 4-7  -> seq0, seq1, seq3   [0, 4)  (seq2 is empty: walked, no key blocks)
    #   block 2 rows 8-11 -> seq3               [3, 4)
    #   block 3 rows 12-15 -> none              empty
    # num_seqs 4 of 6: entries 5, 6 of cu (garbage 1, 0) become the total, 9.
    cu, n, lo, hi = _q_block_seq_ranges(i32([0, 5, 6, 6, 9, 1, 0]), i32([4]), block_q=4, num_q_blocks=4)
    assert np.asarray(cu).tolist() == [0, 5, 6, 6, 9, 9, 9]
    assert int(n[0]) == 4
    assert np.asarray(lo).tolist()[:3] == [0, 0, 3] and np.asarray(hi).tolist()[:3] == [1, 4, 4]
    assert int(lo[3]) == int(hi[3])


@pytest.mark.parametrize("index,replacement,message", cases.BAD_INPUTS, ids=[m for _, _, m in cases.BAD_INPUTS])
def test_tpu_bad_inputs_raise_the_shared_value_error(index, replacement, message):
    with pytest.raises(ValueError, match=message):
        ragged_paged_attention_tpu(*cases.bad_args(index, replacement), sm_scale=1.0, interpret=True)


def test_compiled_tile_constraints_are_checked_before_lowering():
    _, args = cases.small_inputs()  # float32, page_size 4
    with pytest.raises(ValueError, match="multiple of 8 for float32 q"):
        ragged_paged_attention_tpu(*args, sm_scale=1.0, block_sizes=TpuBlockSizes(block_q=12))
    with pytest.raises(ValueError, match="page_size to be a multiple of 8"):
        ragged_paged_attention_tpu(*args, sm_scale=1.0, block_sizes=TpuBlockSizes(block_q=16))
    with pytest.raises(ValueError, match="block_q must be an int >= 1"):
        TpuBlockSizes(block_q=0)


def _dims(head_dim=128, heads=32, kv_heads=8, page_size=16, tokens=2048, seqs=256, pages=4096):
    S = lambda shape, dtype: jnp.zeros(shape, dtype)  # noqa: E731  (validate_inputs reads shapes only)
    return validate_inputs(
        S((tokens, heads, head_dim), BF16),
        S((pages, page_size, kv_heads, head_dim), BF16),
        S((pages, page_size, kv_heads, head_dim), BF16),
        S((seqs,), jnp.int32),
        S((seqs + 1,), jnp.int32),
        S((1,), jnp.int32),
        S((seqs, 16), jnp.int32),
        sm_scale=1.0,
    )


def test_block_size_table_then_fallback_then_vmem_rule():
    dims = _dims()
    hit = tpu_block_sizes("TPU v6 lite", dims, BF16, BF16)
    assert (hit.block_q, hit.pages_per_block) == TUNED[("v6e", 128, 16)]
    # A kind the table has never seen: block_q 32, ~128 keys a block.
    fallback = tpu_block_sizes("TPU v9 someday", _dims(page_size=32), BF16, BF16)
    assert (fallback.block_q, fallback.pages_per_block) == (32, 4)
    # Big heads on a small-VMEM chip: block_q halves (not below bfloat16's 16-row tile), then pages_per_block.
    # (v4 is not in the table: the fallback gives head_dim 256 block_q 16 and 8 pages of 16.)
    big = _dims(heads=128, kv_heads=16, head_dim=256)
    assert vmem_bytes(big, BF16, BF16, None, 16, 8) > vmem_capacity("TPU v4") // 2  # the fallback won't fit
    small = tpu_block_sizes("TPU v4", big, BF16, BF16)
    assert (small.block_q, small.pages_per_block) == (16, 1)
    assert vmem_bytes(big, BF16, BF16, None, small.block_q, small.pages_per_block) <= vmem_capacity("TPU v4")
    assert small.vmem_limit_bytes <= vmem_capacity("TPU v4")


def test_sm_scale_is_applied_like_the_reference():
    # Same batch, two scales: both match the reference (catches a scale applied twice or never).
    b, _ = cases.batch_for((8, 2, 2, 32, F32, None, None, None), seed=11)
    for scale in (1.0, 1.0 / math.sqrt(32)):
        cases.assert_close(
            run_tpu(b, sm_scale=scale, block_sizes=TpuBlockSizes(block_q=8, pages_per_block=2)),
            cases.run_reference(b, sm_scale=scale),
        )


def test_too_many_sequences_for_smem_are_refused_before_lowering():
    # The page table stays in HBM; per-sequence lengths are scalar-prefetched into SMEM. 65,536 sequence
    # slots need 768 KiB of them, more than half of a v5e's 1 MiB.
    S = jnp.zeros
    n = 65536
    args = [
        S((64, 8, 128), BF16),
        S((64, 16, 2, 128), BF16),
        S((64, 16, 2, 128), BF16),
        S((n,), jnp.int32),
        S((n, 1), jnp.int32),
        S((n + 1,), jnp.int32),
        S((1,), jnp.int32),
    ]
    with pytest.raises(ValueError, match="SMEM"):
        ragged_paged_attention_tpu(*args, sm_scale=1.0, device_kind="TPU v5 lite")


def test_a_long_page_table_is_not_limited_by_smem():
    # 256 sequences of 32,768 tokens at page 16: a 2 MiB page table, twice a v6e's SMEM. It stays in HBM,
    # so the kernel still lowers (Mosaic TPU, abstract "TPU v6 lite").
    S = jax.ShapeDtypeStruct
    args = (
        S((2048, 32, 128), BF16),
        S((8192, 16, 8, 128), BF16),
        S((8192, 16, 8, 128), BF16),
        S((256,), jnp.int32),
        S((256, 2048), jnp.int32),
        S((257,), jnp.int32),
        S((1,), jnp.int32),
    )
    text = lower_for_tpu(functools.partial(ragged_paged_attention_tpu, sm_scale=0.1), *args, device_kind="TPU v6 lite")
    assert "tpu_custom_call" in text


# ---------------------------------------------------------------- the engine's TPU layout (LanePages)


def lanes_of(pages, width, fill=np.nan):
    """[P, page, KVH, D] pages -> [P, page, width] lanes, heads side by side, the padding ``fill``."""
    pages = np.asarray(pages)
    P, ps, kvh, d = pages.shape
    out = np.full((P, ps, width), fill, pages.dtype)
    out[:, :, : kvh * d] = pages.reshape(P, ps, kvh * d)
    return jnp.asarray(out)


def scale_lanes_of(scales, extra=0):
    """[P, page, KVH] scales -> [P, 1, slanes] rows (``scale_rows``), ``extra`` more lanes of NaN padding."""
    rows = np.array(scale_rows(jnp.asarray(scales)))
    used = scales.shape[1] * scales.shape[2]
    rows[..., used:] = np.nan  # scale_rows pads with zeros: make reading the padding show
    if extra:
        rows = np.concatenate([rows, np.full((*rows.shape[:2], extra), np.nan, rows.dtype)], axis=-1)
    return jnp.asarray(rows)


def run_tpu_lanes(b, width, scale_extra=0, **kw):
    kvh, d = b["k_pages"].shape[2:]
    scales = {}
    if "k_scale_pages" in b:
        scales = {n: scale_lanes_of(b[f"{n[0]}_scale_pages"], scale_extra) for n in ("k_scales", "v_scales")}
    fill = np.nan if b["k_pages"].dtype.kind == "f" else 77  # int8 codes: a value that would show
    k, v = (lanes_of(b[n], width, fill) for n in ("k_pages", "v_pages"))
    rest = (b[n] for n in ("kv_lens", "page_indices", "cu_q_lens", "num_seqs"))
    return ragged_paged_attention_tpu_lanes(b["q"], k, v, *rest, num_kv_heads=kvh, interpret=True, **scales, **kw)


@pytest.mark.parametrize("case", cases.CASES[:6], ids=cases.case_id)
def test_tpu_kernel_on_lanes_equals_it_on_heads_and_never_reads_the_padding(case):
    """The lanes entry (the engine's TPU cache) gives the heads entry's output bit for bit, both with the
    row exactly KVH * D wide and padded to a multiple of 128 lanes holding NaN (read, it would show)."""
    b, kw = cases.batch_for(case, seed=300 + cases.CASES.index(case))
    kvh, d = b["k_pages"].shape[2:]
    heads = np.asarray(run_tpu(b, block_sizes=tpu_sizes(case[-1]), **kw))
    for width in (kvh * d, -(-kvh * d // 128) * 128 + 128):
        got = np.asarray(run_tpu_lanes(b, width, block_sizes=tpu_sizes(case[-1]), **kw))
        np.testing.assert_array_equal(got, heads)


@pytest.mark.parametrize(
    "case,kv_dtype", cases.QUANT_CASES[:2], ids=[f"{k}-{cases.case_id(c)}" for c, k in cases.QUANT_CASES[:2]]
)
def test_tpu_kernel_on_quantized_lanes_equals_it_on_heads(case, kv_dtype):
    b, kw = cases.batch_for(case, seed=400 + cases.QUANT_CASES.index((case, kv_dtype)), kv_dtype=kv_dtype)
    kvh, d = b["k_pages"].shape[2:]
    heads = np.asarray(run_tpu(b, block_sizes=tpu_sizes(case[-1]), **kw))
    for extra in (0, 128):  # padded to whole vregs (NaN past the used lanes), and a vreg wider still
        got = np.asarray(
            run_tpu_lanes(b, -(-kvh * d // 128) * 128, scale_extra=extra, block_sizes=tpu_sizes(case[-1]), **kw)
        )
        np.testing.assert_array_equal(got, heads)


def test_scale_rows_put_each_pages_heads_side_by_side():
    scales = jnp.arange(2 * 4 * 3, dtype=jnp.float32).reshape(2, 4, 3)  # [P, page, KVH]
    rows = np.asarray(scale_rows(scales))
    assert rows.shape == (2, 1, 128)
    for p, t, h in np.ndindex(2, 4, 3):
        assert rows[p, 0, h * 4 + t] == scales[p, t, h]
    assert not rows[:, :, 12:].any()


def test_tpu_lanes_scales_must_be_one_row_a_page():
    b, _ = cases.batch_for(cases.QUANT_CASES[0][0], seed=1, kv_dtype="int8")
    kvh, d = b["k_pages"].shape[2:]
    k = lanes_of(b["k_pages"], 128, 0)
    rest = (b[n] for n in ("kv_lens", "page_indices", "cu_q_lens", "num_seqs"))
    with pytest.raises(ValueError, match=r"k_scales must be \[total_num_pages=.*, 1, scale_lanes\]"):
        ragged_paged_attention_tpu_lanes(
            b["q"],
            k,
            k,
            *rest,
            num_kv_heads=kvh,
            sm_scale=1.0,
            interpret=True,
            k_scales=b["k_scale_pages"],
            v_scales=b["v_scale_pages"],  # [P, page, KVH]: the heads layout's
        )


@pytest.mark.parametrize(
    "width,num_kv_heads,message",
    [
        (100, 2, "need 128"),  # 2 x 64 lanes do not fit 100
        (192, 2, "a multiple of 128"),  # wider than 2 x 64 but not whole vregs
        (256, 3, "num_q_heads"),  # 4 q heads do not split over 3 kv heads
        (128, 0, "num_kv_heads must be an int >= 1"),
    ],
)
def test_tpu_lanes_bad_geometry_is_a_value_error_naming_it(width, num_kv_heads, message):
    b, _ = cases.small_inputs()  # 4 q heads on 2 kv heads of 16: a row of 32 lanes
    q = jnp.zeros((b["q"].shape[0], 4, 64), F32)
    pages = jnp.zeros((b["k_pages"].shape[0], b["k_pages"].shape[1], width), F32)
    rest = (b[n] for n in ("kv_lens", "page_indices", "cu_q_lens", "num_seqs"))
    with pytest.raises(ValueError, match=message):
        ragged_paged_attention_tpu_lanes(
            q, pages, pages, *rest, num_kv_heads=num_kv_heads, sm_scale=1.0, interpret=True
        )


def test_tpu_lanes_pages_need_three_axes():
    b, args = cases.small_inputs()
    with pytest.raises(ValueError, match=r"k_lanes must be \[total_num_pages, page_size, lanes\]"):
        ragged_paged_attention_tpu_lanes(*args, num_kv_heads=2, sm_scale=1.0, interpret=True)
