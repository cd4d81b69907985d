"""The TPU kernel's cache layout, ``LanePages`` ``[P, page, lanes]`` (runtime/quant/kv.py): its geometry, the
KV write into it, KV transfer out of and into it, and the bytes the engine counts for it. The kernel on it
is in tests/pallas_kernels/test_ragged_paged_attention_tpu.py; a model and a tensor-parallel engine on it in
tests/runtime/models/test_tiny_model.py and tests/runtime/distributed/test_sharding.py."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime.core.kv_sizing import KVShape, kv_bytes_per_block, kv_bytes_per_token, lane_width
from runtime.distributed.kv_transfer import gather_kv, scatter_kv
from runtime.models.kv_cache import write_kv
from runtime.quant.kv import LanePages, LaneScales, QuantizedPages, allocate_pages


@pytest.mark.parametrize(
    "kvh,d,groups,lanes",
    [
        (3, 64, 1, 256),  # SmolLM2 on one chip: 192 lanes padded to two vregs
        (3, 64, 3, 384),  # SmolLM2 over 3 chips: each chip's one head padded to a vreg of its own
        (1, 256, 1, 256),  # Gemma 3 270M: already whole vregs
        (8, 128, 2, 1024),  # Llama 3 8B over 2 chips: no padding
        (2, 16, 2, 256),  # the tiny test model over 2 devices
    ],
)
def test_lane_width(kvh, d, groups, lanes):
    assert lane_width(kvh, d, groups) == lanes
    assert lanes % 128 == 0 and lanes >= kvh * d


def test_lane_width_refuses_heads_that_do_not_split():
    with pytest.raises(ValueError, match="3 kv heads do not split into 2 groups"):
        lane_width(3, 64, 2)


def test_to_and_from_lanes_place_each_group_at_its_vreg_and_pad_with_zeros():
    pages = LanePages(jnp.zeros((2, 4, 256)), 4, 16, 2)  # 4 kv heads of 16, 2 groups
    x = jnp.arange(3 * 4 * 16, dtype=jnp.float32).reshape(3, 4, 16) + 1  # no zero in it
    y = np.asarray(pages.to_lanes(x))
    assert y.shape == (3, 256)
    np.testing.assert_array_equal(y[:, :32], np.asarray(x[:, :2]).reshape(3, 32))  # group 0: heads 0, 1
    np.testing.assert_array_equal(y[:, 128:160], np.asarray(x[:, 2:]).reshape(3, 32))  # group 1 from lane 128
    assert not y[:, 32:128].any() and not y[:, 160:].any()
    np.testing.assert_array_equal(np.asarray(pages.from_lanes(jnp.asarray(y))), np.asarray(x))
    local = pages.local()
    assert (local.num_kv_heads, local.groups, local.group_lanes) == (2, 1, 128)


def test_lane_scales_put_a_pages_heads_side_by_side_in_one_row():
    scales = LaneScales(jnp.zeros((3, 1, 256), jnp.float32), 4, 8, 2)  # 4 kv heads, pages of 8, 2 groups
    slots = jnp.asarray([8 + 5, 2 * 8 + 0], jnp.int32)  # page 1 offset 5, page 2 offset 0
    values = jnp.asarray([[1, 2, 3, 4], [5, 6, 7, 8]], jnp.float32)
    out = scales.set(slots, values)
    row = np.asarray(out.data[1, 0])
    # group 0 (heads 0, 1) from lane 0, 8 scales a head; group 1 (heads 2, 3) from lane 128
    assert (row[5], row[8 + 5], row[128 + 5], row[128 + 8 + 5]) == (1, 2, 3, 4)
    assert np.count_nonzero(np.asarray(out.data)) == 8
    np.testing.assert_array_equal(np.asarray(out.get(slots)), np.asarray(values))
    assert (out.local().num_kv_heads, out.local().groups, out.local().group_lanes) == (2, 1, 128)


def test_lane_pages_are_a_pytree_whose_geometry_survives_jit():
    pages = allocate_pages((3, 4, 3, 64), jnp.bfloat16, lane_groups=1)
    assert isinstance(pages, LanePages) and pages.shape == (3, 4, 256) and pages.dtype == jnp.bfloat16
    out = jax.jit(lambda p: p.with_data(p.data + 1))(pages)
    assert isinstance(out, LanePages) and (out.num_kv_heads, out.head_dim, out.groups) == (3, 64, 1)
    quantized = allocate_pages((3, 4, 3, 64), jnp.int8, lane_groups=3)
    assert isinstance(quantized, QuantizedPages) and isinstance(quantized.codes, LanePages)
    assert quantized.codes.shape == (3, 4, 384)
    # the scales: a row a page, each device's one head's 4 scales padded to a vreg of its own
    assert isinstance(quantized.scales, LaneScales) and quantized.scales.shape == (3, 1, 384)


def _heads_and_lanes(kv_dtype, groups, seed=0):
    """The same random K/V written into a [P, page, KVH, D] cache and a LanePages one."""
    P, page, kvh, d, T = 6, 4, 4, 16, 7
    rng = np.random.default_rng(seed)
    k = jnp.asarray(rng.standard_normal((T, kvh, d)), jnp.float32)
    v = jnp.asarray(rng.standard_normal((T, kvh, d)), jnp.float32)
    slots = jnp.asarray(rng.choice(np.arange(page, P * page), T, replace=False), jnp.int32)  # page 0 is the null page
    heads = write_kv(*(allocate_pages((P, page, kvh, d), kv_dtype) for _ in "kv"), k, v, slots)
    lanes = write_kv(*(allocate_pages((P, page, kvh, d), kv_dtype, groups) for _ in "kv"), k, v, slots)
    return heads, lanes, slots


def _codes(pages):
    return pages.codes if isinstance(pages, QuantizedPages) else pages


@pytest.mark.parametrize("kv_dtype", [jnp.float32, jnp.int8])
@pytest.mark.parametrize("groups", [1, 2])
def test_write_kv_into_lanes_holds_what_the_heads_layout_holds(kv_dtype, groups):
    heads, lanes, _ = _heads_and_lanes(kv_dtype, groups)
    for h, l in zip(heads, lanes):
        data = _codes(l)
        assert isinstance(data, LanePages) and data.groups == groups
        P, page = data.shape[:2]
        got = np.asarray(data.from_lanes(data.data.reshape(P * page, -1))).reshape(_codes(h).shape)
        np.testing.assert_array_equal(got, np.asarray(_codes(h)))
        if isinstance(h, QuantizedPages):
            assert isinstance(l.scales, LaneScales)
            got = np.asarray(l.scales.get(jnp.arange(P * page, dtype=jnp.int32))).reshape(h.scales.shape)
            np.testing.assert_array_equal(got, np.asarray(h.scales))


@pytest.mark.parametrize("kv_dtype", [jnp.float32, jnp.int8])
def test_kv_transfer_out_of_and_into_lanes(kv_dtype):
    heads, lanes, slots = _heads_and_lanes(kv_dtype, groups=2)
    out_heads, out_lanes = gather_kv([heads], slots), gather_kv([lanes], slots)
    for a, b in zip(out_heads, out_lanes):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
    # Into an empty LanePages cache: the same rows come back out, and nothing else was written.
    empty = [tuple(jax.tree.map(jnp.zeros_like, c) for c in lanes)]
    filled = scatter_kv(empty, slots, *out_lanes)
    again = gather_kv(filled, slots)
    for a, b in zip(out_lanes, again):
        if a is not None:
            np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
    total = sum(float(jnp.abs(x.astype(jnp.float32)).sum()) for x in jax.tree.leaves(filled))
    written = sum(float(jnp.abs(x.astype(jnp.float32)).sum()) for x in out_lanes if x is not None)
    assert total == pytest.approx(written)


def test_engine_counts_the_padded_lanes():
    smollm2 = KVShape(num_layers=30, num_kv_heads=3, head_dim=64)
    tpu = KVShape(30, 3, 64, lane_groups=1)
    assert kv_bytes_per_token(smollm2, "bfloat16") == 2 * 30 * 3 * 64 * 2
    assert kv_bytes_per_block(tpu, "bfloat16", 16) == 2 * 30 * 16 * 256 * 2  # a third more: 192 lanes -> 256
    # int8: a page's 3 x 16 scales are one row of 128 float32 lanes (heads side by side, then padding)
    assert kv_bytes_per_block(smollm2, "int8", 16) == 2 * 30 * 16 * (192 + 3 * 2)
    assert kv_bytes_per_block(tpu, "int8", 16) == 2 * 30 * (16 * 256 + 128 * 4)
    assert kv_bytes_per_token(tpu, "int8", 16) == 2 * 30 * (256 + 32)
    tp3 = KVShape(30, 3, 64, lane_groups=3)  # one head a device: 128 lanes each, and a 128-lane scale row each
    assert kv_bytes_per_block(tp3, "int8", 16) == 2 * 30 * (16 * 384 + 384 * 4)
