"""The Mosaic GPU ragged paged-attention kernel (pallas_kernels/ragged_paged_attention/mosaic_gpu.py).

Numerics: the kernel runs in JAX's Mosaic GPU interpreter (``interpret=True``: GMEM/SMEM, TMA page
copies and barriers simulated on CPU) against the jnp reference, on batches whose unused page slots
are NaN and whose page tables are permuted, at edge lengths (0, 1, page-1, page, page+1, max) over
several key blocks, mixing decode and prefill rows. The interpreter runs the kernel's own body except
the matmuls (``jnp`` dots of the SMEM tiles instead of WGMMA, see ``_qk``) and register layouts, so
the WGMMA path's numerics (layouts, swizzles) are proven only by a GPU run.
Lowered for sm_90 (CPU only): both ways the q tile reaches SMEM (staged for a padded group under 8).
Compiled: one serving-size shape compiled for H100 by the real compilers (Mosaic GPU -> PTX -> ptxas,
no GPU), under ``.venvs/cuda`` (``make compile-envs``).
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pallas_kernels.ragged_paged_attention.mosaic_gpu import (
    SMEM_LIMIT_BYTES,
    MosaicGpuBlockSizes,
    check_supported,
    mosaic_gpu_block_sizes,
    ragged_paged_attention_mosaic_gpu,
    smem_bytes,
)
from tests.support.attention_cases import BF16, F32, assert_close, edge_batch, i32, make_batch, run_paged, run_reference
from tools import compile_check as cc
from tools import lowering_check as lc

REQUIRED = os.environ.get("JAXSERVE_REQUIRE_COMPILERS") == "1"


def run_mosaic(b, **kw):
    return run_paged(ragged_paged_attention_mosaic_gpu, b, interpret=True, **kw)


# (page_size, num_q_heads, num_kv_heads, head_dim, sliding_window, soft_cap, block_sizes); bfloat16 throughout.
# Group 1, 3 (padded to 4), 8 (two WGMMA row blocks: 128 rows); key blocks of 64 and 128 keys; a window
# smaller than a key block (the walk starts past block 0).
CASES = [
    (8, 2, 2, 64, None, None, MosaicGpuBlockSizes()),
    (16, 3, 1, 64, 20, 2.0, MosaicGpuBlockSizes()),
    (8, 6, 2, 32, 7, None, MosaicGpuBlockSizes(pages_per_block=8)),
    (16, 8, 1, 32, None, 2.0, MosaicGpuBlockSizes(block_q=16, pages_per_block=4)),
    (32, 4, 2, 128, 40, None, MosaicGpuBlockSizes()),
]


def case_id(case):
    ps, hq, hkv, d, window, cap, bs = case
    return f"page{ps}-gqa{hq // hkv}-d{d}-win{window}-cap{cap}-bq{bs.block_q}-ppb{bs.pages_per_block}"


def case_batch(case, seed):
    """edge_batch's lengths with a max long enough for three key blocks (double buffering both ways)."""
    ps, hq, hkv, d, window, cap, bs = case
    q_lens, kv_lens = edge_batch(ps, max_kv_len=2 * 128 + ps + 3)
    b = make_batch(
        np.random.default_rng(seed),
        q_lens=q_lens,
        kv_lens=kv_lens,
        num_q_heads=hq,
        num_kv_heads=hkv,
        head_dim=d,
        page_size=ps,
        dtype=BF16,
    )
    return b, dict(sm_scale=1.0 / math.sqrt(d), sliding_window=window, soft_cap=cap)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_interpreted_kernel_matches_reference(case):
    b, kw = case_batch(case, seed=CASES.index(case))
    assert_close(run_mosaic(b, block_sizes=case[-1], **kw), run_reference(b, **kw))


def test_decode_only_and_long_prefill_batches():
    # Decodes at kv lengths around page and key-block edges; then one prompt of 70 tokens: two q blocks of
    # 64 tokens (group 1) over two key blocks of 64 keys.
    rng = np.random.default_rng(3)
    shape = dict(num_q_heads=2, num_kv_heads=2, head_dim=32, page_size=8, dtype=BF16, pad_tokens=0, pad_seqs=0)
    decode = make_batch(rng, q_lens=[1] * 7, kv_lens=[1, 7, 8, 9, 63, 64, 65], **shape)
    prefill = make_batch(rng, q_lens=[70], kv_lens=[70], **shape)
    bs = MosaicGpuBlockSizes(pages_per_block=8)
    for b in (decode, prefill):
        assert_close(run_mosaic(b, block_sizes=bs, sm_scale=0.2), run_reference(b, sm_scale=0.2))


def test_padding_sequences_may_hold_garbage_and_zero_sequences_give_zeros():
    shape = dict(num_q_heads=2, num_kv_heads=1, head_dim=32, page_size=8, dtype=BF16, pad_tokens=4, pad_seqs=3)
    b = make_batch(np.random.default_rng(4), q_lens=[2, 1], kv_lens=[6, 9], **shape)
    kw = dict(sm_scale=0.2, block_sizes=MosaicGpuBlockSizes(pages_per_block=8))
    expected = run_reference(b, sm_scale=0.2)
    # Entries past num_seqs are ignored: unsorted cu_q_lens and nonsense lengths change nothing.
    garbage = dict(b, cu_q_lens=i32([0, 2, 3, 1, 0, 7]), kv_lens=i32([6, 9, 50, 3, 1]))
    assert_close(run_mosaic(garbage, **kw), expected)
    assert not np.asarray(expected, np.float32)[3:].any()
    # No sequence: every row is one the wrapper zeroes (the kernel's output buffer is never written).
    assert_close(run_mosaic(dict(b, num_seqs=i32([0])), **kw), np.zeros(b["q"].shape, BF16))


# ---- lowered for sm_90 (no GPU, no CUDA plugin) ----------------------------------------------------


@pytest.mark.parametrize("hq,hkv", [(9, 3), (8, 1), (16, 1)], ids=["gp4-staged-q", "gp8-direct-q", "gp16-direct-q"])
def test_lowers_for_cuda_with_either_q_copy(hq, hkv):
    # gp < 8: the q tile's row offset is not a multiple of the 8-row SMEM tile, so q goes through o_smem
    # (JAX 0.12's layout inference refuses the direct TMA); gp >= 8: one TMA straight into q_smem.
    shape = lc.AttentionShape(64, hq, hkv, 16, "bfloat16", tokens=64, max_seqs=4, num_pages=64)
    fn, args, _ = lc.KERNELS["ragged_paged_attention_mosaic_gpu"].build(shape, lc.TARGETS["cuda"])
    assert "mosaic_gpu_v2" in lc.custom_calls(lc.lower(fn, args, lc.TARGETS["cuda"]))


# ---- refusals and block sizes (no kernel run) -----------------------------------------------------


def abstract_call(*, tokens=8, hq=2, hkv=2, d=64, page=16, q_dtype=BF16, kv_dtype=BF16, scales=False, **kw):
    """Traces the kernel at a small shape (the refusals fire while tracing; nothing runs)."""
    S = jax.ShapeDtypeStruct
    pages = (4, page, hkv, d)
    args = (
        S((tokens, hq, d), q_dtype),
        S(pages, kv_dtype),
        S(pages, kv_dtype),
        S((2,), jnp.int32),
        S((2, 4), jnp.int32),
        S((3,), jnp.int32),
        S((1,), jnp.int32),
    )
    extra = dict(k_scales=S(pages[:3], BF16), v_scales=S(pages[:3], BF16)) if scales else {}
    return jax.eval_shape(lambda *a: ragged_paged_attention_mosaic_gpu(*a, sm_scale=0.1, **extra, **kw), *args)


@pytest.mark.parametrize(
    "kw,message",
    [
        (dict(kv_dtype=jnp.int8, scales=True), "reads only a bfloat16 KV cache, got int8"),
        (dict(kv_dtype=jnp.float8_e4m3fn, scales=True), "reads only a bfloat16 KV cache, got float8_e4m3fn"),
        (dict(q_dtype=F32, kv_dtype=F32), "reads only a bfloat16 KV cache, got float32"),
        (dict(d=48), "head_dim a multiple of 32"),
        (dict(page=4), "page_size a multiple of 8"),
        (dict(block_sizes=MosaicGpuBlockSizes(block_q=3)), "power-of-two block_q"),
        (dict(block_sizes=MosaicGpuBlockSizes(block_q=16)), "multiple of 64 (WGMMA rows)"),
        (dict(block_sizes=MosaicGpuBlockSizes(pages_per_block=2)), "got 2 * 16 = 32"),
        (dict(block_sizes=MosaicGpuBlockSizes(pages_per_block=32)), "got 32 * 16 = 512"),
        (dict(d=256, block_sizes=MosaicGpuBlockSizes(block_q=128, pages_per_block=16)), "bytes of shared memory"),
    ],
    ids=lambda x: x if isinstance(x, str) else None,
)
def test_refusals_name_the_limit(kw, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        abstract_call(**kw)


def test_interpret_mode_has_the_same_limits():
    with pytest.raises(ValueError, match="page_size a multiple of 8"):
        abstract_call(page=4, interpret=True)


def test_block_sizes_validate_their_fields():
    for bad in (dict(block_q=0), dict(pages_per_block=True), dict(block_q=2.0)):
        with pytest.raises(ValueError, match="must be None or an int >= 1"):
            MosaicGpuBlockSizes(**bad)


def test_block_size_rule_always_gives_a_supported_tiling():
    # 64 rows a program (one WGMMA M); keys per block 128 (head_dim <= 128)
    # or 64 (256), at least one page; always within SMEM and the kernel's own tile rules.
    for d in (64, 128, 256):
        for hq, hkv in ((8, 8), (9, 3), (32, 8), (64, 8)):
            for page in (8, 16, 32, 64):
                dims = lc.AttentionShape(d, hq, hkv, page).dims()
                bs = mosaic_gpu_block_sizes(dims)
                gp = 1 << math.ceil(math.log2(hq // hkv))
                assert bs.block_q * gp == 64
                block_k = bs.pages_per_block * page
                assert block_k == max(page, 128 if d <= 128 else 64)
                check_supported(dims, BF16, BF16, bs)
                assert smem_bytes(bs.block_q * gp, block_k, d) <= SMEM_LIMIT_BYTES
    # Fields given are kept; only None fields are filled.
    dims = lc.AttentionShape(64, 9, 3, 16).dims()
    assert mosaic_gpu_block_sizes(dims, MosaicGpuBlockSizes(block_q=32)) == MosaicGpuBlockSizes(32, 8)


# ---- compiled for H100 (no GPU) --------------------------------------------------------------------

COMPILE_ONE = """
import json
from tools import compile_check as cc, lowering_check as lc
from tools.lowering_check import build_attention_mosaic_gpu
shape = lc.DEFAULT_ATTENTION_SHAPES[0]
fn, args, extra = build_attention_mosaic_gpu(shape, cc.TARGETS["h100"])
text, compiled = cc.compile_for(fn, args, cc.TARGETS["h100"])
print(json.dumps(dict(extra, calls=lc.custom_calls(text), memory=cc.memory_record(compiled), shape=shape.describe())))
"""


@pytest.mark.slow
def test_compiles_for_h100_with_a_serving_size_cache():
    python = cc.compiler_python("cuda")
    if python is None:
        if REQUIRED:
            pytest.fail("no cuda compiler (make compile-envs builds it)")
        pytest.skip(f"no cuda compiler here: `make compile-envs` builds {cc.VENVS['cuda']}")
    proc = subprocess.run(
        [python, "-c", COMPILE_ONE], cwd=cc.REPO, env=cc.worker_env("cuda"), capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "mosaic_gpu_v2" in record["calls"]
    assert record["shape"]["kv_gib_per_layer"] >= 4
    # The cache is an argument read in place: temporaries are the q/out relayouts, nowhere near the cache.
    assert record["memory"]["temp_bytes"] < record["memory"]["argument_bytes"] / 100
