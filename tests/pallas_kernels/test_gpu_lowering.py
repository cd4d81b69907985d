"""The GPU kernels lower for ``cuda`` under JAX's default settings, from this CPU machine.

Abstract arrays (``jax.ShapeDtypeStruct``) at serving shapes, so nothing is allocated: every KV
cache here is >= 4 GiB per layer. The lowered text must call Triton (``__gpu$xla.gpu.triton``,
with the table's num_warps / num_stages) and never Mosaic GPU, JAX's default GPU backend, which
stages whole-array refs in shared memory and fails on any real cache. Lowering proves the Pallas ->
Triton translation; Triton -> PTX runs only next to a GPU (pallas_kernels/lowering.py).

Also here: the GPU tile table (gpu_block_sizes) and its fallback rule always satisfy the Triton tile
constraints, and shapes Triton cannot tile fail with a ValueError before lowering.
"""

from __future__ import annotations

import functools
import re

import jax
import jax.numpy as jnp
import pytest

from pallas_kernels.lowering import MOSAIC_GPU_CALL_TARGET, TRITON_CALL_TARGET, cuda_target_kind, lower_for_cuda
from pallas_kernels.quant_matmul import quant_matmul
from pallas_kernels.ragged_paged_attention.gpu_block_sizes import (
    FAMILIES,
    TUNED,
    _smem_bytes,
    gpu_block_sizes,
    gpu_family,
)
from pallas_kernels.ragged_paged_attention.kernel import Dims, _check_triton_tiles, ragged_paged_attention

S = jax.ShapeDtypeStruct
BF16, I32, F32 = jnp.bfloat16, jnp.int32, jnp.float32
GiB = 2**30
TOKENS, SEQS, PAGES_PER_SEQ = 2048, 256, 128


def assert_triton_only(text: str, num_warps: int, num_stages: int) -> None:
    assert TRITON_CALL_TARGET in text
    assert MOSAIC_GPU_CALL_TARGET not in text
    assert re.search(rf"num_warps = {num_warps} : i32", text), "compiler params did not reach the custom call"
    assert re.search(rf"num_stages = {num_stages} : i32", text)


# ---- ragged paged attention ------------------------------------------------------------------------

# (head_dim, num_q_heads, num_kv_heads, page_size, num_pages, kv dtype or None). A covering set:
# head dims 64/128/256, groups 1/3/4/8, pages 16/32/64 and int8/fp8 KV each appear at least once.
ATTENTION_SHAPES = [
    (128, 32, 8, 16, 65536, None),  # Llama-3-8B: group 4, 4 GiB
    (64, 9, 3, 32, 262144, None),  # SmolLM2-135M: group 3, 6 GiB
    (256, 4, 1, 64, 65536, None),  # Gemma 3 270M: group 4, head_dim 256, 4 GiB
    (128, 8, 8, 64, 16384, None),  # group 1 (MHA), 4 GiB
    (128, 64, 8, 16, 65536, None),  # group 8, 4 GiB
    (128, 32, 8, 16, 131072, jnp.int8),  # int8 KV: 4 GiB of codes (+ 32 MiB of scales)
    (64, 12, 4, 32, 262144, jnp.float8_e4m3fn),  # fp8 KV, group 3: 4 GiB of codes
    (128, 32, 8, 16, 163840, None),  # 5 GiB per array: offsets past 2**32 bytes (64-bit indexing)
]


def kv_bytes_per_layer(head_dim, num_kv_heads, page_size, num_pages, kv_dtype):
    return 2 * num_pages * page_size * num_kv_heads * head_dim * jnp.dtype(kv_dtype or BF16).itemsize


def attention_args(head_dim, num_q_heads, num_kv_heads, page_size, num_pages, kv_dtype):
    kv = kv_dtype or BF16
    args = [
        S((TOKENS, num_q_heads, head_dim), BF16),
        S((num_pages, page_size, num_kv_heads, head_dim), kv),
        S((num_pages, page_size, num_kv_heads, head_dim), kv),
        S((SEQS,), I32),
        S((SEQS, PAGES_PER_SEQ), I32),
        S((SEQS + 1,), I32),
        S((1,), I32),
    ]
    if kv_dtype is not None:  # k_scales, v_scales
        args += [S((num_pages, page_size, num_kv_heads), F32)] * 2
    return args


def attention_fn(block_sizes, quantized):
    def fn(q, k, v, kv_lens, page_indices, cu_q_lens, num_seqs, *scales):
        kw = dict(k_scales=scales[0], v_scales=scales[1]) if quantized else {}
        return ragged_paged_attention(
            q, k, v, kv_lens, page_indices, cu_q_lens, num_seqs, sm_scale=0.125, block_sizes=block_sizes, **kw
        )

    return fn


def shape_id(shape):
    d, hq, hkv, ps, pages, kv = shape
    gib = kv_bytes_per_layer(d, hkv, ps, pages, kv) / GiB
    return f"d{d}-g{hq // hkv}-page{ps}-{jnp.dtype(kv or BF16).name}-{gib:g}GiB"


def test_covering_set_covers():
    assert {s[0] for s in ATTENTION_SHAPES} == {64, 128, 256}
    assert {s[1] // s[2] for s in ATTENTION_SHAPES} == {1, 3, 4, 8}
    assert {s[3] for s in ATTENTION_SHAPES} == {16, 32, 64}
    assert {s[5] for s in ATTENTION_SHAPES} == {None, jnp.int8, jnp.float8_e4m3fn}
    assert all(kv_bytes_per_layer(d, hkv, ps, n, kv) >= 4 * GiB for d, _, hkv, ps, n, kv in ATTENTION_SHAPES)


@pytest.mark.parametrize("sizes", ["default", "hopper-table", "fallback-rule"])
@pytest.mark.parametrize("shape", ATTENTION_SHAPES, ids=shape_id)
def test_attention_lowers_for_cuda_through_triton(shape, sizes):
    """ "default": ``block_sizes=None`` as the engine calls it, no GPU named (lower_for_cuda's target: this
    process's GPU, else an H100); "hopper-table": the H100's table entry or rule, passed explicitly;
    "fallback-rule": the sizes for a GPU no table knows, passed explicitly."""
    # jax 0.10 and 0.11 send a pallas_call without compiler params to Mosaic GPU by default (this flag): the kernel
    # must still lower through Triton under it. jax 0.12 dropped the flag (Mosaic GPU is plgpu.kernel's alone).
    assert getattr(jax.config, "jax_pallas_use_mosaic_gpu", True)
    d, hq, hkv, ps, _, kv = shape
    kind = {"default": cuda_target_kind() or jax.devices()[0].device_kind, "hopper-table": "NVIDIA H100 80GB HBM3"}
    expected = gpu_block_sizes(
        kind.get(sizes, ""), head_dim=d, num_q_heads=hq, num_kv_heads=hkv, page_size=ps, dtype=BF16, kv_dtype=kv
    )
    fn = attention_fn(None if sizes == "default" else expected, kv is not None)
    text = lower_for_cuda(fn, *attention_args(*shape))
    assert_triton_only(text, expected.num_warps, expected.num_stages)


@pytest.mark.parametrize(
    "head_dim,page_size,message",
    [
        (96, 16, "power-of-two head_dim"),
        (80, 16, "power-of-two head_dim"),
        (128, 12, "pages_per_block \\* page_size to be a power of two"),
    ],
)
def test_shapes_triton_cannot_tile_fail_with_value_error(head_dim, page_size, message):
    args = attention_args(head_dim, 8, 2, page_size, 1024, None)
    with pytest.raises(ValueError, match=message):
        lower_for_cuda(attention_fn(None, False), *args)


# ---- the tile table and its rule -------------------------------------------------------------------


KINDS_OF_FAMILY = {
    "hopper": ("NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA H100 PCIe"),
    "ampere": ("NVIDIA A100-SXM4-80GB", "NVIDIA A100-PCIE-40GB"),
    "ada": ("NVIDIA L4", "NVIDIA L40S"),
    "fallback": ("Tesla T4", ""),
}


@pytest.mark.parametrize("kind,family", [(k, f) for f, kinds in KINDS_OF_FAMILY.items() for k in kinds])
def test_device_kind_families(kind, family):
    assert gpu_family(kind) == family


def table_shape(head_dim, group, page_size):
    """What the tile table is asked about: ``group`` q heads sharing one kv head."""
    return dict(head_dim=head_dim, num_q_heads=group, num_kv_heads=1, page_size=page_size)


def triton_dims(head_dim, group, page_size):
    shape = table_shape(head_dim, group, page_size)
    return Dims(max_num_tokens=TOKENS, max_num_seqs=SEQS, pages_per_seq=PAGES_PER_SEQ, **shape)


def test_rule_always_meets_the_triton_tile_constraints():
    """Every family x power-of-two head dim 16..256 x group 1..32 x page 1..256 x q and cache dtype."""
    checked = 0
    for kind in ("NVIDIA H200", "NVIDIA A100-SXM4-80GB", "NVIDIA L4", ""):
        for head_dim in (16, 32, 64, 128, 256):
            for group in (1, 2, 3, 4, 5, 8, 16, 32):
                for page_size in (1, 2, 4, 8, 16, 32, 64, 128, 256):
                    for dtype, kv in ((BF16, None), (F32, None), (BF16, jnp.int8), (BF16, jnp.float8_e4m3fn)):
                        bs = gpu_block_sizes(kind, dtype=dtype, kv_dtype=kv, **table_shape(head_dim, group, page_size))
                        _check_triton_tiles(triton_dims(head_dim, group, page_size), bs)
                        checked += 1
    assert checked == 4 * 5 * 8 * 9 * 4


def test_table_entries_are_legal_and_fit_their_family():
    for key, bs in TUNED.items():
        _check_triton_tiles(triton_dims(key.head_dim, key.group, key.page_size), bs)
        rows = key.group * bs.block_q
        smem = _smem_bytes(
            rows,
            bs.pages_per_block * key.page_size,
            key.head_dim,
            bs.num_stages,
            jnp.dtype(key.dtype).itemsize,
            jnp.dtype(key.kv_dtype).itemsize,
        )
        assert smem <= FAMILIES[key.family].smem_per_block, key


def test_table_is_consulted_by_device_kind_and_shape():
    """SmolLM2-135M (head_dim 64, 9 q heads, 3 kv heads: group 3 padded to 4) hits a pinned entry."""
    key = next(k for k in TUNED if (k.family, k.head_dim, k.group, k.kv_dtype) == ("ada", 64, 4, "int8"))
    assert (
        gpu_block_sizes(
            "NVIDIA L4", head_dim=64, num_q_heads=9, num_kv_heads=3, page_size=16, dtype=BF16, kv_dtype=jnp.int8
        )
        is TUNED[key]
    )
    # Gemma 3 (head_dim 256) on Ada keeps two pipeline stages with 32-key blocks (2 pages of 16).
    gemma = gpu_block_sizes("NVIDIA L40S", head_dim=256, num_q_heads=4, num_kv_heads=1, page_size=16, dtype=BF16)
    assert (gemma.block_q, gemma.pages_per_block, gemma.num_stages) == (8, 2, 2)


# ---- quantized matmul --------------------------------------------------------------------------------

M, K, N = 2048, 4096, 4096


@pytest.mark.parametrize("bits,group", [(8, 0), (4, 32), (4, 128)], ids=["int8", "int4-g32", "int4-g128"])
def test_quant_matmul_lowers_for_cuda_through_triton(bits, group):
    q = S((N, K), jnp.int8) if bits == 8 else S((N, K // 2), jnp.uint8)
    scale = S((N,), F32) if bits == 8 else S((N, K // group), F32)
    fn = functools.partial(quant_matmul, bits=bits, group=group, in_features=K)
    text = lower_for_cuda(fn, S((M, K), BF16), q, scale)
    assert_triton_only(text, num_warps=4, num_stages=2)  # BlockSizes() defaults
