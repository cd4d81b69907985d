"""Builders shared by the attention tests (the kernels in tests/pallas_kernels, the quantized cache in
tests/runtime/quant): paged batches with permuted, NaN-poisoned pages at edge lengths, the runners of
the reference / kernel / XLA path, and one tolerance table per dtype."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from pallas_kernels.ragged_paged_attention import (
    BlockSizes,
    ragged_paged_attention,
    ragged_paged_attention_reference,
    ragged_paged_attention_xla,
)

F32, BF16 = jnp.float32, jnp.bfloat16
# One table, keyed by dtype, for every elementwise comparison in this file: (rtol, atol).
TOLERANCES = {np.dtype(jnp.float32): (1e-5, 1e-5), np.dtype(jnp.bfloat16): (1e-2, 1e-2)}


def assert_close(actual, expected):
    expected = np.asarray(expected)
    rtol, atol = TOLERANCES[expected.dtype]
    assert np.asarray(actual).dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(actual, np.float32), expected.astype(np.float32), rtol=rtol, atol=atol)


def i32(x):
    return jnp.asarray(np.asarray(x, np.int32))


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
                paged[page, :n] = a[i, j * page_size : j * page_size + n]
    return [jnp.asarray(p) for p in pages], jnp.asarray(page_indices)


def make_batch(
    rng,
    *,
    q_lens,
    kv_lens,
    num_q_heads,
    num_kv_heads,
    head_dim,
    page_size,
    dtype,
    pad_tokens=3,
    pad_seqs=2,
    kv_dtype=None,
):
    """A ragged batch plus padding tokens and padding sequences (kv_len 0, empty q).

    ``kv_dtype`` "int8" / "fp8": K and V are also quantized per token and kv head
    (``runtime.quant.kv.quantize``) into ``kq``/``vq`` codes with ``k_scales``/``v_scales``,
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
            k, v, kv_lens, page_size, total_pages, rng
        )
        return batch
    from runtime.quant.kv import QUANTIZED_KV_DTYPES, quantize

    (kq, ks), (vq, vs) = (quantize(x, QUANTIZED_KV_DTYPES[kv_dtype]) for x in (k, v))
    pages, batch["page_indices"] = page_arrays([kq, vq, ks, vs], kv_lens, page_size, total_pages, rng)
    batch.update(kq=kq, vq=vq, k_scales=ks, v_scales=vs)
    batch.update(zip(("k_pages", "v_pages", "k_scale_pages", "v_scale_pages"), pages))
    return batch


# A batch's arrays in the order of the paged signature (the kernels, the XLA path), and of the reference's.
PAGED_ARGS = ("q", "k_pages", "v_pages", "kv_lens", "page_indices", "cu_q_lens", "num_seqs")
REFERENCE_ARGS = ("q", "k", "v", "kv_lens", "cu_q_lens", "num_seqs")


def run_reference(b, quantized=False, **kw):
    """The reference on the float K/V, or (``quantized``) on the batch's codes and scales."""
    if quantized:
        b = dict(b, k=b["kq"], v=b["vq"])
        kw = dict(k_scales=b["k_scales"], v_scales=b["v_scales"], **kw)
    return ragged_paged_attention_reference(*(b[n] for n in REFERENCE_ARGS), **kw)


def run_paged(fn, b, **kw):
    """A paged path (the GPU or TPU kernel, the XLA path) on batch ``b``, with its scale pages if it has them."""
    scales = dict(k_scales=b["k_scale_pages"], v_scales=b["v_scale_pages"]) if "k_scale_pages" in b else {}
    return fn(*(b[n] for n in PAGED_ARGS), **scales, **kw)


def run_kernel(b, **kw):
    return run_paged(ragged_paged_attention, b, interpret=True, **kw)


def run_xla(b, **kw):
    return run_paged(ragged_paged_attention_xla, b, **kw)


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
    return (
        f"page{ps}-gqa{hq // hkv}-d{d}-{np.dtype(dtype).name}-win{window}-cap{cap}"
        f"-bq{bs.block_q}-ppb{bs.pages_per_block}"
    )


def batch_for(case, seed, kv_dtype=None):
    ps, hq, hkv, d, dtype, window, cap, bs = case
    q_lens, kv_lens = edge_batch(ps, max_kv_len=3 * ps + 2)
    rng = np.random.default_rng(seed)
    b = make_batch(
        rng,
        q_lens=q_lens,
        kv_lens=kv_lens,
        num_q_heads=hq,
        num_kv_heads=hkv,
        head_dim=d,
        page_size=ps,
        dtype=dtype,
        kv_dtype=kv_dtype,
    )
    return b, dict(sm_scale=1.0 / math.sqrt(d), sliding_window=window, soft_cap=cap)


def small_inputs():
    """One sequence (2 new tokens of 3), 4 q heads on 2 kv heads, no padding: (batch, its paged arguments)."""
    shape = dict(num_q_heads=4, num_kv_heads=2, head_dim=16, page_size=4, dtype=F32, pad_tokens=0, pad_seqs=0)
    b = make_batch(np.random.default_rng(5), q_lens=[2], kv_lens=[3], **shape)
    return b, [b[n] for n in PAGED_ARGS]


def decode_and_prefill_batches():
    """Two unmixed steps on 4 q heads, 2 kv heads, page 8, no padding: six decode rows at kv lengths
    around the page edges (1, 5, 8, 9, 16, 17), then one 20-token prompt."""
    rng = np.random.default_rng(3)
    shape = dict(num_q_heads=4, num_kv_heads=2, head_dim=32, page_size=8, dtype=F32, pad_tokens=0, pad_seqs=0)
    decode = make_batch(rng, q_lens=[1] * 6, kv_lens=[1, 5, 8, 9, 16, 17], **shape)
    return decode, make_batch(rng, q_lens=[20], kv_lens=[20], **shape)


def padded_batches():
    """(b, garbage, none): two sequences, then three padding sequences and four padding rows; the same
    batch with garbage past num_seqs (unsorted cu_q_lens, nonsense lengths: both must be ignored); and
    with num_seqs 0 (all rows must come out zero)."""
    shape = dict(num_q_heads=2, num_kv_heads=1, head_dim=32, page_size=4, dtype=F32, pad_tokens=4, pad_seqs=3)
    b = make_batch(np.random.default_rng(4), q_lens=[2, 1], kv_lens=[6, 9], **shape)
    garbage = dict(b, cu_q_lens=i32([0, 2, 3, 1, 0, 7]), kv_lens=i32([6, 9, 50, 3, 1]))
    return b, garbage, dict(b, num_seqs=i32([0]))


def bad_args(index, replacement):
    """``small_inputs``' paged arguments with one replaced (k and v together, so that for a bad k dtype
    the dtype check is the one that fires)."""
    _, args = small_inputs()
    args[index] = replacement
    if index == 1:
        args[2] = replacement
    return args


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


# Quantized-cache cases (tests/runtime/quant/test_kv_quant.py, the TPU kernel's tests):
# (page_size, num_q_heads, num_kv_heads, head_dim, dtype, sliding_window, soft_cap, block_sizes), kv dtype
QUANT_CASES = [
    ((4, 6, 2, 32, F32, 5, None, BlockSizes(block_q=4, pages_per_block=2)), "int8"),
    ((8, 2, 2, 64, BF16, None, 2.0, BlockSizes(block_q=8, pages_per_block=3)), "int8"),
    ((16, 3, 1, 64, F32, None, None, BlockSizes()), "int8"),
    ((8, 6, 2, 32, F32, 7, 2.0, BlockSizes(block_q=4)), "fp8"),
]
