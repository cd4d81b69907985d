"""Ragged paged attention: hand-worked cases pin the reference, then the Pallas kernel (interpret
mode) and the XLA path are compared with it elementwise over paged, permuted, NaN-poisoned caches.
The builders are in tests/support/attention_cases.py."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
import pytest

from pallas_kernels.ragged_paged_attention import BlockSizes, ragged_paged_attention, ragged_paged_attention_xla
from tests.support.attention_cases import (
    BAD_INPUTS,
    CASES,
    F32,
    assert_close,
    bad_args,
    batch_for,
    case_id,
    decode_and_prefill_batches,
    i32,
    padded_batches,
    run_kernel,
    run_reference,
    run_xla,
    small_inputs,
)

# ---- building inputs ---------------------------------------------------------------------------


# ---- the reference, by hand ----------------------------------------------------------------------
# One q head, one kv head, sm_scale 1 unless said otherwise. Keys k0 = 0, k1 = ln 3 (head_dim 1),
# values v0 = 4, v1 = 8.

LN3 = math.log(3.0)


def tiny(q_rows, keys, values, q_lens, kv_lens, num_seqs=None, max_tokens=None):
    """q_rows [T][H][D]; keys/values [S][L][KVH][D] as nested lists."""
    q = np.zeros((max_tokens or len(q_rows), *np.shape(q_rows)[1:]), np.float32)
    q[: len(q_rows)] = q_rows
    cu = np.concatenate([[0], np.cumsum(q_lens)])
    return dict(
        q=jnp.asarray(q),
        k=jnp.asarray(np.array(keys, np.float32)),
        v=jnp.asarray(np.array(values, np.float32)),
        kv_lens=i32(kv_lens),
        cu_q_lens=i32(cu),
        num_seqs=i32([len(q_lens) if num_seqs is None else num_seqs]),
    )


def test_reference_decode_two_keys():
    # q = 1: logits (0, ln 3) -> softmax (1/4, 3/4) -> 4/4 + 3*8/4 = 7.
    b = tiny([[[1.0]]], [[[[0.0]], [[LN3]]]], [[[[4.0]], [[8.0]]]], q_lens=[1], kv_lens=[2])
    assert_close(run_reference(b, sm_scale=1.0), np.array([[[7.0]]], np.float32))


def test_reference_prefill_is_causal_and_sm_scale_applies():
    # q rows (2, 2), sm_scale 0.5 -> effective q = 1. Row 0 is at position 0: sees k0 only -> v0 = 4.
    # Row 1 at position 1: (1/4, 3/4) as above -> 7.
    b = tiny([[[2.0]], [[2.0]]], [[[[0.0]], [[LN3]]]], [[[[4.0]], [[8.0]]]], q_lens=[2], kv_lens=[2])
    assert_close(run_reference(b, sm_scale=0.5), np.array([[[4.0]], [[7.0]]], np.float32))


def test_reference_sliding_window_of_one_sees_only_itself():
    # Window 1: row 1 attends key 1 only -> v1 = 8; row 0 -> v0 = 4.
    b = tiny([[[1.0]], [[1.0]]], [[[[0.0]], [[LN3]]]], [[[[4.0]], [[8.0]]]], q_lens=[2], kv_lens=[2])
    assert_close(run_reference(b, sm_scale=1.0, sliding_window=1), np.array([[[4.0]], [[8.0]]], np.float32))


def test_reference_soft_cap():
    # Keys (0, 100), q = 1, soft_cap 1: logits (0, 1*tanh(100)) = (0, 1) -> weights (1, e) / (1 + e).
    # Values (0, 1) -> e / (1 + e) = 0.7310585786.
    b = tiny([[[1.0]]], [[[[0.0]], [[100.0]]]], [[[[0.0]], [[1.0]]]], q_lens=[1], kv_lens=[2])
    expected = math.e / (1 + math.e)
    assert_close(run_reference(b, sm_scale=1.0, soft_cap=1.0), np.array([[[expected]]], np.float32))


def test_reference_gqa_two_q_heads_share_one_kv_head():
    # head_dim 2. k0 = (0, 0), k1 = (ln 3, 0); v0 = (4, 0), v1 = (8, 2).
    # q head 0 = (1, 0): logits (0, ln 3) -> (1/4, 3/4) -> (1 + 6, 0 + 1.5) = (7, 1.5).
    # q head 1 = (0, 1): logits (0, 0)    -> (1/2, 1/2) -> (2 + 4, 0 + 1)   = (6, 1).
    b = tiny(
        [[[1.0, 0.0], [0.0, 1.0]]],
        [[[[0.0, 0.0]], [[LN3, 0.0]]]],
        [[[[4.0, 0.0]], [[8.0, 2.0]]]],
        q_lens=[1],
        kv_lens=[2],
    )
    assert_close(run_reference(b, sm_scale=1.0), np.array([[[7.0, 1.5], [6.0, 1.0]]], np.float32))


def test_reference_ragged_rows_empty_sequence_and_padding():
    # seq0: decode at position 1 (context k0, k1) -> 7.  seq1: q_len 0, contributes nothing.
    # seq2: one token, kv_len 1 -> only its own key -> its value 5. Padding seq3 and row 2 stay 0.
    keys = [[[[0.0]], [[LN3]]], [[[9.0]], [[9.0]]], [[[1.0]], [[0.0]]], [[[1.0]], [[1.0]]]]
    values = [[[[4.0]], [[8.0]]], [[[9.0]], [[9.0]]], [[[5.0]], [[0.0]]], [[[1.0]], [[1.0]]]]
    b = tiny([[[1.0]], [[3.0]]], keys, values, q_lens=[1, 0, 1, 0], kv_lens=[2, 0, 1, 2], num_seqs=3, max_tokens=3)
    assert_close(run_reference(b, sm_scale=1.0), np.array([[[7.0]], [[5.0]], [[0.0]]], np.float32))


# ---- kernel and XLA path against the reference -------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_kernel_matches_reference(case):
    b, kw = batch_for(case, seed=CASES.index(case))
    assert_close(run_kernel(b, block_sizes=case[-1], **kw), run_reference(b, **kw))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_xla_matches_reference(case):
    b, kw = batch_for(case, seed=100 + CASES.index(case))
    assert_close(run_xla(b, **kw), run_reference(b, **kw))


@pytest.mark.parametrize(
    "block_sizes",
    [BlockSizes(block_q=1), BlockSizes(block_q=3, pages_per_block=4), BlockSizes(block_q=32, pages_per_block=5)],
    ids=str,
)
def test_kernel_block_sizes_do_not_change_the_result(block_sizes):
    # Tiles of one row, tiles bigger than every sequence, key blocks running past the page table.
    b, kw = batch_for((4, 6, 2, 32, F32, None, None, block_sizes), seed=7)
    assert_close(run_kernel(b, block_sizes=block_sizes, **kw), run_reference(b, **kw))


def test_all_decode_and_single_prefill_batches():
    for b in decode_and_prefill_batches():
        kw = dict(sm_scale=0.2)
        expected = run_reference(b, **kw)
        assert_close(run_kernel(b, block_sizes=BlockSizes(block_q=8), **kw), expected)
        assert_close(run_xla(b, **kw), expected)


def test_padding_sequences_may_hold_garbage_and_zero_sequences_give_zeros():
    b, garbage, none = padded_batches()
    kw = dict(sm_scale=0.2)
    expected = run_reference(b, **kw)
    # Entries past num_seqs are ignored: unsorted cu_q_lens and nonsense lengths change nothing.
    assert_close(run_kernel(garbage, **kw), expected)
    assert_close(run_xla(garbage, **kw), expected)
    assert not np.asarray(expected)[3:].any()

    zeros = np.zeros(b["q"].shape, np.float32)
    assert_close(run_kernel(none, **kw), zeros)
    assert_close(run_xla(none, **kw), zeros)
    assert_close(run_reference(none, **kw), zeros)


# ---- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize("index,replacement,message", BAD_INPUTS, ids=[m for _, _, m in BAD_INPUTS])
@pytest.mark.parametrize("impl", ["kernel", "xla"])
def test_bad_inputs_raise_value_error(impl, index, replacement, message):
    args = bad_args(index, replacement)
    with pytest.raises(ValueError, match=message):
        if impl == "kernel":
            ragged_paged_attention(*args, sm_scale=1.0, interpret=True)
        else:
            ragged_paged_attention_xla(*args, sm_scale=1.0)


@pytest.mark.parametrize(
    "kw,message",
    [
        (dict(sliding_window=0), "sliding_window"),
        (dict(soft_cap=-1.0), "soft_cap"),
        (dict(sm_scale=float("nan")), "sm_scale"),
    ],
    ids=["window0", "negative_cap", "nan_scale"],
)
def test_bad_static_arguments_raise_value_error(kw, message):
    b, args = small_inputs()
    kw = {"sm_scale": 1.0, **kw}
    with pytest.raises(ValueError, match=message):
        ragged_paged_attention(*args, interpret=True, **kw)
    with pytest.raises(ValueError, match=message):
        run_reference(b, **kw)


def test_reference_rejects_bad_layout_and_lengths():
    b, _ = small_inputs()
    with pytest.raises(ValueError, match="max_num_seqs=1 rows"):
        run_reference(dict(b, k=b["k_pages"], v=b["v_pages"]), sm_scale=1.0)
    with pytest.raises(ValueError, match=r"q_len \(2\) <= kv_len \(1\)"):
        run_reference(dict(b, kv_lens=i32([1])), sm_scale=1.0)


def test_block_sizes_and_compiled_tile_constraints():
    with pytest.raises(ValueError, match="block_q must be an int >= 1"):
        BlockSizes(block_q=0)
    with pytest.raises(ValueError, match="pages_per_block"):
        BlockSizes(pages_per_block=1.5)
    # Checked before lowering, so it fails the same way on any machine.
    _, args = small_inputs()
    with pytest.raises(ValueError, match="power of two >= 16"):
        ragged_paged_attention(*args, sm_scale=1.0, block_sizes=BlockSizes(block_q=16, pages_per_block=1))
    with pytest.raises(ValueError, match="power-of-two block_q"):
        ragged_paged_attention(*args, sm_scale=1.0, block_sizes=BlockSizes(block_q=3, pages_per_block=4))
