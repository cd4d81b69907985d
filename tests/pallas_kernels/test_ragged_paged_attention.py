"""Ragged paged attention: hand-worked cases pin the reference, then the Pallas kernel (interpret
mode) and the XLA path are compared with it elementwise over paged, permuted, NaN-poisoned caches.
The builders here also make quantized (int8 / fp8 + scales) caches for tests/runtime/quant/test_kv_quant.py."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
import pytest

from pallas_kernels.ragged_paged_attention import (
    BlockSizes,
    ragged_paged_attention,
    ragged_paged_attention_reference,
    ragged_paged_attention_xla,
)

# One table, keyed by dtype, for every elementwise comparison in this file: (rtol, atol).
TOLERANCES = {
    np.dtype(jnp.float32): (1e-5, 1e-5),
    np.dtype(jnp.bfloat16): (1e-2, 1e-2),
}


def assert_close(actual, expected):
    expected = np.asarray(expected)
    rtol, atol = TOLERANCES[expected.dtype]
    assert np.asarray(actual).dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(actual, np.float32), expected.astype(np.float32), rtol=rtol, atol=atol)


def i32(x):
    return jnp.asarray(np.asarray(x, np.int32))


# ---- building inputs ---------------------------------------------------------------------------


def contiguous_to_paged(k, v, kv_lens, page_size, total_num_pages, rng, extra_pages=1):
    """Contiguous [S, max_kv_len, KVH, D] K/V -> (k_pages, v_pages, page_indices)."""
    (k_pages, v_pages), page_indices = page_arrays([k, v], kv_lens, page_size, total_num_pages, rng, extra_pages)
    return k_pages, v_pages, page_indices


def page_arrays(arrays, kv_lens, page_size, total_num_pages, rng, extra_pages=1):
    """Contiguous per-token arrays [S, max_kv_len, ...] -> ([P, page_size, ...] each, page_indices).

    Pages are handed out in a random permutation of the pool; every slot no sequence owns (unused
    pages, the tail of a sequence's last page) is poisoned (NaN; random codes for int8), and
    page-table entries past a sequence's pages hold random valid ids, so reading anything the
    kernel should not read shows up.
    """
    arrays = [np.asarray(a) for a in arrays]
    num_seqs_max, max_kv_len = arrays[0].shape[:2]
    pages_per_seq = -(-max_kv_len // page_size) + extra_pages
    pages = []
    for a in arrays:
        shape = (total_num_pages, page_size) + a.shape[2:]
        if np.issubdtype(a.dtype, np.integer):
            pages.append(rng.integers(-128, 128, shape).astype(a.dtype))
        else:
            pages.append(np.full(shape, np.nan, a.dtype))
    page_indices = rng.integers(0, total_num_pages, (num_seqs_max, pages_per_seq)).astype(np.int32)
    free = iter(rng.permutation(total_num_pages))
    for i, kv_len in enumerate(np.asarray(kv_lens)):
        for j in range(-(-int(kv_len) // page_size)):
            page = next(free)  # StopIteration here means the pool is too small for the test
            page_indices[i, j] = page
            n = min(page_size, int(kv_len) - j * page_size)
            for a, paged in zip(arrays, pages):
                paged[page, :n] = a[i, j * page_size:j * page_size + n]
    return [jnp.asarray(p) for p in pages], jnp.asarray(page_indices)


def make_batch(rng, *, q_lens, kv_lens, num_q_heads, num_kv_heads, head_dim, page_size, dtype,
               pad_tokens=3, pad_seqs=2, kv_dtype=None):
    """A ragged batch plus padding tokens and padding sequences (kv_len 0, empty q).

    ``kv_dtype`` "int8" / "fp8": K and V are also quantized per token and kv head
    (``runtime.kv_quant.quantize``) into ``kq``/``vq`` codes with ``k_scales``/``v_scales``,
    contiguous and paged (``*_pages``); ``k``/``v`` stay the float originals.
    """
    q_lens, kv_lens = list(q_lens) + [0] * pad_seqs, list(kv_lens) + [0] * pad_seqs
    num_seqs = len(q_lens) - pad_seqs
    max_kv_len = max(max(kv_lens), 1)
    cu = np.concatenate([[0], np.cumsum(q_lens)])
    T = int(cu[-1]) + pad_tokens
    q = jnp.asarray(rng.standard_normal((T, num_q_heads, head_dim)) * 2, dtype)
    k = jnp.asarray(rng.standard_normal((len(q_lens), max_kv_len, num_kv_heads, head_dim)), dtype)
    v = jnp.asarray(rng.standard_normal((len(q_lens), max_kv_len, num_kv_heads, head_dim)), dtype)
    total_pages = sum(-(-n // page_size) for n in kv_lens) + 5
    batch = dict(q=q, k=k, v=v, kv_lens=i32(kv_lens), cu_q_lens=i32(cu), num_seqs=i32([num_seqs]))
    if kv_dtype is None:
        batch["k_pages"], batch["v_pages"], batch["page_indices"] = contiguous_to_paged(
            k, v, kv_lens, page_size, total_pages, rng)
        return batch
    from runtime.quant.kv import QUANTIZED_KV_DTYPES, quantize

    (kq, ks), (vq, vs) = (quantize(x, QUANTIZED_KV_DTYPES[kv_dtype]) for x in (k, v))
    pages, batch["page_indices"] = page_arrays([kq, vq, ks, vs], kv_lens, page_size, total_pages, rng)
    batch.update(kq=kq, vq=vq, k_scales=ks, v_scales=vs)
    batch.update(zip(("k_pages", "v_pages", "k_scale_pages", "v_scale_pages"), pages))
    return batch


def run_reference(b, quantized=False, **kw):
    """The reference on the float K/V, or (``quantized``) on the batch's codes and scales."""
    if quantized:
        return ragged_paged_attention_reference(b["q"], b["kq"], b["vq"], b["kv_lens"], b["cu_q_lens"], b["num_seqs"],
                                                k_scales=b["k_scales"], v_scales=b["v_scales"], **kw)
    return ragged_paged_attention_reference(b["q"], b["k"], b["v"], b["kv_lens"], b["cu_q_lens"], b["num_seqs"], **kw)


def _scales(b):
    return dict(k_scales=b["k_scale_pages"], v_scales=b["v_scale_pages"]) if "k_scale_pages" in b else {}


def run_kernel(b, **kw):
    return ragged_paged_attention(b["q"], b["k_pages"], b["v_pages"], b["kv_lens"], b["page_indices"],
                                  b["cu_q_lens"], b["num_seqs"], interpret=True, **_scales(b), **kw)


def run_xla(b, **kw):
    return ragged_paged_attention_xla(b["q"], b["k_pages"], b["v_pages"], b["kv_lens"], b["page_indices"],
                                      b["cu_q_lens"], b["num_seqs"], **_scales(b), **kw)


# ---- the reference, by hand ----------------------------------------------------------------------
# One q head, one kv head, sm_scale 1 unless said otherwise. Keys k0 = 0, k1 = ln 3 (head_dim 1),
# values v0 = 4, v1 = 8.

LN3 = math.log(3.0)


def tiny(q_rows, keys, values, q_lens, kv_lens, num_seqs=None, max_tokens=None):
    """q_rows [T][H][D]; keys/values [S][L][KVH][D] as nested lists."""
    q = np.zeros((max_tokens or len(q_rows), *np.shape(q_rows)[1:]), np.float32)
    q[:len(q_rows)] = q_rows
    cu = np.concatenate([[0], np.cumsum(q_lens)])
    return dict(q=jnp.asarray(q), k=jnp.asarray(np.array(keys, np.float32)), v=jnp.asarray(np.array(values, np.float32)),
                kv_lens=i32(kv_lens), cu_q_lens=i32(cu), num_seqs=i32([len(q_lens) if num_seqs is None else num_seqs]))


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
    b = tiny([[[1.0, 0.0], [0.0, 1.0]]], [[[[0.0, 0.0]], [[LN3, 0.0]]]], [[[[4.0, 0.0]], [[8.0, 2.0]]]],
             q_lens=[1], kv_lens=[2])
    assert_close(run_reference(b, sm_scale=1.0), np.array([[[7.0, 1.5], [6.0, 1.0]]], np.float32))


def test_reference_ragged_rows_empty_sequence_and_padding():
    # seq0: decode at position 1 (context k0, k1) -> 7.  seq1: q_len 0, contributes nothing.
    # seq2: one token, kv_len 1 -> only its own key -> its value 5. Padding seq3 and row 2 stay 0.
    keys = [[[[0.0]], [[LN3]]], [[[9.0]], [[9.0]]], [[[1.0]], [[0.0]]], [[[1.0]], [[1.0]]]]
    values = [[[[4.0]], [[8.0]]], [[[9.0]], [[9.0]]], [[[5.0]], [[0.0]]], [[[1.0]], [[1.0]]]]
    b = tiny([[[1.0]], [[3.0]]], keys, values, q_lens=[1, 0, 1, 0], kv_lens=[2, 0, 1, 2], num_seqs=3, max_tokens=3)
    assert_close(run_reference(b, sm_scale=1.0), np.array([[[7.0]], [[5.0]], [[0.0]]], np.float32))


# ---- kernel and XLA path against the reference -------------------------------------------------


def edge_batch(page_size, max_kv_len):
    """(q_lens, kv_lens): kv lengths at the edges, mixing decode rows and prefill chunks.

    1 / 1            first token of a prompt           page-1 / page-1   whole short prompt
    1 / page         decode filling a page exactly     3 / page+1        chunk with page-2 context
    0 / 0            empty real sequence               5 / max           chunk at the end of a long context
    1 / max-2        decode, long context
    """
    ps = page_size
    q_lens = [1, ps - 1, 1, 3, 0, 5, 1]
    kv_lens = [1, ps - 1, ps, ps + 1, 0, max_kv_len, max_kv_len - 2]
    return q_lens, kv_lens


F32, BF16 = jnp.float32, jnp.bfloat16
# (page_size, num_q_heads, num_kv_heads, head_dim, dtype, sliding_window, soft_cap, block_sizes)
CASES = [
    (4, 2, 2, 32, F32, None, None, BlockSizes()),
    (4, 6, 2, 32, F32, 5, None, BlockSizes(block_q=4, pages_per_block=2)),
    (4, 2, 2, 64, BF16, None, 2.0, BlockSizes(block_q=8, pages_per_block=3)),
    (4, 3, 1, 64, BF16, 6, 2.0, BlockSizes()),
    (8, 2, 2, 64, F32, 7, 2.0, BlockSizes(block_q=4)),
    (8, 6, 2, 64, F32, None, None, BlockSizes(pages_per_block=2)),
    (8, 2, 2, 32, BF16, 7, None, BlockSizes()),
    (8, 6, 2, 32, BF16, None, 2.0, BlockSizes(block_q=4, pages_per_block=2)),
    (16, 2, 2, 32, F32, None, 2.0, BlockSizes(block_q=8)),
    (16, 3, 1, 64, F32, 20, None, BlockSizes()),
    (16, 2, 2, 64, BF16, None, None, BlockSizes(pages_per_block=2)),
    (16, 6, 2, 32, BF16, 20, 2.0, BlockSizes(block_q=4)),
]


def case_id(case):
    ps, hq, hkv, d, dtype, window, cap, bs = case
    return (f"page{ps}-gqa{hq // hkv}-d{d}-{np.dtype(dtype).name}-win{window}-cap{cap}"
            f"-bq{bs.block_q}-ppb{bs.pages_per_block}")


def batch_for(case, seed, kv_dtype=None):
    ps, hq, hkv, d, dtype, window, cap, bs = case
    q_lens, kv_lens = edge_batch(ps, max_kv_len=3 * ps + 2)
    rng = np.random.default_rng(seed)
    b = make_batch(rng, q_lens=q_lens, kv_lens=kv_lens, num_q_heads=hq, num_kv_heads=hkv, head_dim=d,
                   page_size=ps, dtype=dtype, kv_dtype=kv_dtype)
    return b, dict(sm_scale=1.0 / math.sqrt(d), sliding_window=window, soft_cap=cap)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_kernel_matches_reference(case):
    b, kw = batch_for(case, seed=CASES.index(case))
    assert_close(run_kernel(b, block_sizes=case[-1], **kw), run_reference(b, **kw))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_xla_matches_reference(case):
    b, kw = batch_for(case, seed=100 + CASES.index(case))
    assert_close(run_xla(b, **kw), run_reference(b, **kw))


@pytest.mark.parametrize("block_sizes", [BlockSizes(block_q=1), BlockSizes(block_q=3, pages_per_block=4),
                                         BlockSizes(block_q=32, pages_per_block=5)], ids=str)
def test_kernel_block_sizes_do_not_change_the_result(block_sizes):
    # Tiles of one row, tiles bigger than every sequence, key blocks running past the page table.
    b, kw = batch_for((4, 6, 2, 32, F32, None, None, block_sizes), seed=7)
    assert_close(run_kernel(b, block_sizes=block_sizes, **kw), run_reference(b, **kw))


def test_all_decode_and_single_prefill_batches():
    rng = np.random.default_rng(3)
    decode = make_batch(rng, q_lens=[1] * 6, kv_lens=[1, 5, 8, 9, 16, 17], num_q_heads=4, num_kv_heads=2,
                        head_dim=32, page_size=8, dtype=F32, pad_tokens=0, pad_seqs=0)
    prefill = make_batch(rng, q_lens=[20], kv_lens=[20], num_q_heads=4, num_kv_heads=2, head_dim=32,
                         page_size=8, dtype=F32, pad_tokens=0, pad_seqs=0)
    for b in (decode, prefill):
        kw = dict(sm_scale=0.2)
        expected = run_reference(b, **kw)
        assert_close(run_kernel(b, block_sizes=BlockSizes(block_q=8), **kw), expected)
        assert_close(run_xla(b, **kw), expected)


def test_padding_sequences_may_hold_garbage_and_zero_sequences_give_zeros():
    rng = np.random.default_rng(4)
    b = make_batch(rng, q_lens=[2, 1], kv_lens=[6, 9], num_q_heads=2, num_kv_heads=1, head_dim=32,
                   page_size=4, dtype=F32, pad_tokens=4, pad_seqs=3)
    kw = dict(sm_scale=0.2)
    expected = run_reference(b, **kw)
    # Entries past num_seqs are ignored: unsorted cu_q_lens and nonsense lengths change nothing.
    garbage = dict(b, cu_q_lens=i32([0, 2, 3, 1, 0, 7]), kv_lens=i32([6, 9, 50, 3, 1]))
    assert_close(run_kernel(garbage, **kw), expected)
    assert_close(run_xla(garbage, **kw), expected)
    assert not np.asarray(expected)[3:].any()

    none = dict(b, num_seqs=i32([0]))
    zeros = np.zeros(b["q"].shape, np.float32)
    assert_close(run_kernel(none, **kw), zeros)
    assert_close(run_xla(none, **kw), zeros)
    assert_close(run_reference(none, **kw), zeros)


# ---- validation --------------------------------------------------------------------------------


def small_inputs():
    b = make_batch(np.random.default_rng(5), q_lens=[2], kv_lens=[3], num_q_heads=4, num_kv_heads=2,
                   head_dim=16, page_size=4, dtype=F32, pad_tokens=0, pad_seqs=0)
    paged = [b[n] for n in ("q", "k_pages", "v_pages", "kv_lens", "page_indices", "cu_q_lens", "num_seqs")]
    return b, paged


BAD_INPUTS = [
    # (argument index in the paged signature, replacement, message fragment)
    (0, jnp.zeros((2, 64), F32), "q must be"),
    (0, jnp.zeros((2, 4, 16), jnp.float16), "float32 or bfloat16"),
    (0, jnp.zeros((2, 3, 16), F32), "multiple of num_kv_heads"),
    (0, jnp.zeros((2, 4, 8), F32), "head_dim"),
    (1, jnp.zeros((7, 4, 2, 16), BF16), "share one dtype"),
    (2, jnp.zeros((7, 4, 2, 8), F32), "same shape"),
    (3, jnp.zeros((1,), jnp.float32), "kv_lens must be int32"),
    (4, jnp.zeros((2, 2), jnp.int32), "page_indices must be"),
    (5, jnp.zeros((3,), jnp.int32), "cu_q_lens must have shape"),
    (6, jnp.zeros((2,), jnp.int32), "num_seqs must have shape"),
]


@pytest.mark.parametrize("index,replacement,message", BAD_INPUTS, ids=[m for _, _, m in BAD_INPUTS])
@pytest.mark.parametrize("impl", ["kernel", "xla"])
def test_bad_inputs_raise_value_error(impl, index, replacement, message):
    _, args = small_inputs()
    args[index] = replacement
    if index == 1:  # keep k and v consistent so the dtype check is the one that fires
        args[2] = replacement
    with pytest.raises(ValueError, match=message):
        if impl == "kernel":
            ragged_paged_attention(*args, sm_scale=1.0, interpret=True)
        else:
            ragged_paged_attention_xla(*args, sm_scale=1.0)


@pytest.mark.parametrize("kw,message", [
    (dict(sliding_window=0), "sliding_window"),
    (dict(soft_cap=-1.0), "soft_cap"),
    (dict(sm_scale=float("nan")), "sm_scale"),
], ids=["window0", "negative_cap", "nan_scale"])
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
