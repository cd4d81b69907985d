"""Kernels broken on purpose, for ``tests/tools/test_compile_check.py``: each lowers (the
lowering check passes it) and fails only in the device compiler, so the compile check must catch it.

    unaligned_dma_tpu     a DMA from a 1-D int32 HBM array at a dynamic offset Mosaic cannot prove to be
                          a whole 128-entry tile (the bug the TPU attention kernel had)
    vmem_overflow_tpu     a float32 block of 4096 x 8192 (128 MiB, double-buffered in and out): more
                          than any TPU's VMEM
    smem_overflow_gpu     a Triton ``jnp.dot`` of 512 x 512 float32 blocks: 1 MiB of shared memory
                          where an H100 has 227 KiB a block
    relaid_out_attention_tpu  the TPU attention kernel handed the ``[P, page, KVH, D]`` cache (the layout
                          before ``LanePages``): it compiles, but XLA relays the pages out before each call,
                          and the check must fail it on its temporaries (``RELAYOUT``)

Each builder takes the case's (ignored) shape and target, as the real ones do, and returns
``(fn, abstract args)``. ``KERNELS`` also holds the real ``quant_matmul_tpu``/``_gpu`` as controls.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from tools import lowering_check as lc


def _unaligned_dma(shape, target):
    def kernel(start_ref, table_hbm, o_ref, buf, sem):
        copy = pltpu.make_async_copy(table_hbm.at[pl.ds(start_ref[0], 8)], buf, sem)
        copy.start()
        copy.wait()
        o_ref[...] = jnp.full(o_ref.shape, buf[3], jnp.int32)

    def fn(start, table):
        return pl.pallas_call(
            kernel,
            grid_spec=pltpu.PrefetchScalarGridSpec(
                num_scalar_prefetch=1,
                grid=(1,),
                in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
                out_specs=pl.BlockSpec((8, 128), lambda i, *_: (0, 0)),
                scratch_shapes=[pltpu.SMEM((8,), jnp.int32), pltpu.SemaphoreType.DMA(())],
            ),
            out_shape=jax.ShapeDtypeStruct((8, 128), jnp.int32),
        )(start, table)

    S = jax.ShapeDtypeStruct
    return fn, (S((1,), jnp.int32), S((65536,), jnp.int32))


def _vmem_overflow(shape, target):
    rows, cols = 4096, 8192

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0

    def fn(x):
        spec = pl.BlockSpec((rows, cols), lambda i: (i, 0))
        return pl.pallas_call(
            kernel, grid=(2,), in_specs=[spec], out_specs=spec, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype)
        )(x)

    return fn, (jax.ShapeDtypeStruct((2 * rows, cols), jnp.float32),)


def _smem_overflow(shape, target):
    from jax.experimental.pallas import triton as plgpu

    n = 512

    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = jnp.dot(x_ref[...], y_ref[...])

    def fn(x, y):
        return pl.pallas_call(
            kernel,
            out_shape=jax.ShapeDtypeStruct((n, n), jnp.float32),
            compiler_params=plgpu.CompilerParams(num_warps=4, num_stages=1),
        )(x, y)

    S = jax.ShapeDtypeStruct
    return fn, (S((n, n), jnp.float32), S((n, n), jnp.float32))


KERNELS = {
    k.name: k
    for k in (
        lc.Kernel("unaligned_dma_tpu", ("tpu",), "matmul", _unaligned_dma),
        lc.Kernel("vmem_overflow_tpu", ("tpu",), "matmul", _vmem_overflow),
        lc.Kernel("smem_overflow_gpu", ("cuda",), "matmul", _smem_overflow),
        lc.KERNELS["quant_matmul_tpu"],
        lc.KERNELS["quant_matmul_gpu"],
    )
}


def _process_abort(shape, target):
    """A compiler that aborts the whole process (as LLVM's fatal errors do): the check must report the
    cases it never reached as failed, not hang or pass."""
    import os

    os.abort()


ABORTING = {"process_abort": lc.Kernel("process_abort", ("tpu", "cuda"), "matmul", _process_abort)}


def _relaid_out_attention(shape, target):
    """The real TPU kernel over the heads layout: what the engine stored before the lanes layout."""
    from pallas_kernels.ragged_paged_attention.tpu import ragged_paged_attention_tpu

    fn, args = lc._attention(ragged_paged_attention_tpu, shape, device_kind=target.device_kind)
    kv_bytes = shape.pages * lc.kv_bytes_per_page(shape.page_size, shape.num_kv_heads, shape.head_dim, shape.kv_dtype)
    return fn, args, {"kv_cache_bytes": kv_bytes}


RELAYOUT = {
    k.name: k
    for k in (
        lc.Kernel("relaid_out_attention_tpu", ("tpu",), "attention", _relaid_out_attention),
        lc.KERNELS["ragged_paged_attention_tpu"],
    )
}
