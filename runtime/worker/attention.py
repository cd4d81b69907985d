"""Attention backend dispatch: which kernel computes ``attend(q, k_pages, v_pages, metadata)``.

The model never sees how attention is computed: each layer writes its new K/V into the paged cache
(``runtime.models.kv_cache.write_kv``, at the metadata's ``slot_mapping``) and calls the ``attend``
function this module builds. The ``cpu`` backend's ``attend`` is a ``FusedAttention``
(``runtime.models.contracts``): it also offers ``rope_write_attend(qkv, cos, sin, k_pages, v_pages, md, *,
num_heads)``, RoPE, the write and attention in one kernel call, or None where the kernel does not take it (``runtime.worker.cpu_attention.rope_write_attention_cpu``). Nor how the cache is stored: ``k_pages``/``v_pages`` are float arrays or,
for an 8-bit KV cache, ``QuantizedPages`` (codes and per-token, per-head scales, ``runtime/quant/kv.py``)
that ``attend`` hands to the backend, which dequantizes the pages it reads. The metadata
(``AttentionMetadata``, one step's ragged batch on one flattened token axis) is described in
``runtime/models/kv_cache.py``.

Backends (``EngineConfig.attention_backend``), resolved per platform by ``resolve_backend``::

    name                   what runs                                         runs on
    xla                    jnp gathers + online softmax (no Pallas)          any platform
    cpu                    the C++ kernel, one XLA FFI call per layer        cpu
                           (runtime/worker/cpu_attention.cc, built on
                           first use; without a compiler: the XLA path,
                           one warning)
    pallas_gpu             a GPU kernel, compiled: by the target's compute   gpu (cuda, rocm)
                           capability, the Mosaic GPU kernel (sm_90+,
                           bfloat16 KV) or the Triton one (pallas_kernels.
                           ragged_paged_attention)
    pallas_tpu             the TPU kernel (.ragged_paged_attention.tpu:      tpu
                           HBM pages, scalar prefetch, DMAs), compiled
    pallas_gpu_interpret   the GPU kernel in the Pallas interpreter          any (CPU tests)
    pallas_tpu_interpret   the TPU kernel in the TPU interpreter             any (CPU tests)
                           (interpret=True -> pltpu.InterpretParams())
    pallas                 the compiled kernel of this platform              tpu -> pallas_tpu, gpu -> pallas_gpu
    pallas_interpret       alias of pallas_gpu_interpret (older configs)     any
    auto                   tpu -> pallas_tpu, gpu -> pallas_gpu, cpu -> cpu when its kernel builds
                           (``runtime.worker.cpu_attention.kernel_available``), otherwise xla
                           (interpreted Pallas is slow: never auto's choice)

A compiled kernel asked for on a platform it cannot run on (``pallas_tpu`` on a GPU, ``pallas_gpu``
on a TPU, a Pallas kernel on CPU, ``cpu`` on an accelerator) is a ``ValueError`` at engine start that names
``attention_backend`` and the choices that would run here. Block sizes are the kernels' own business
(each looks its tuned table up for the current device); the dispatcher passes none.

The cache's layout follows the backend (``kv_lane_groups``): the TPU kernel (``pallas_tpu``, and its
interpreter) reads ``LanePages`` ``[P, page, lanes]``, its own DMA layout, so that XLA never relays the
cache out before a call (runtime/quant/kv.py says why); every other backend reads ``[P, page, KVH, D]``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax

from runtime.api import ATTENTION_BACKENDS
from runtime.models.kv_cache import AttentionMetadata
from runtime.platform import platform_family
from runtime.quant.kv import LanePages, split_pages

BACKENDS = ATTENTION_BACKENDS  # the names EngineConfig accepts (runtime/api.py)
ALIASES = {"pallas_interpret": "pallas_gpu_interpret"}  # the name before there was a TPU kernel
COMPILED = {"pallas_gpu": "gpu", "pallas_tpu": "tpu", "cpu": "cpu"}  # compiled kernel -> the family it needs
AUTO = {"tpu": "pallas_tpu", "gpu": "pallas_gpu"}  # platform family -> auto's choice; cpu: _auto; others: xla


AttendFn = Callable[..., jax.Array]
LANES_BACKENDS = ("pallas_tpu", "pallas_tpu_interpret")  # read LanePages (runtime/quant/kv.py)


def kv_lane_groups(backend: str, platform: str | None = None, tensor_parallel: int = 1) -> int:
    """0: the cache is ``[P, page, KVH, D]`` pages; N >= 1: ``LanePages`` of N lane groups, one per device of a
    ``tensor_parallel`` N mesh (each device's heads padded to whole vregs on their own)."""
    return max(tensor_parallel, 1) if resolve_backend(backend, platform) in LANES_BACKENDS else 0


def resolve_backend(backend: str, platform: str | None = None) -> str:
    """The backend that runs for ``backend`` on ``platform`` (default: JAX's default backend; a string such
    as "cpu", "gpu", "cuda", "rocm", "tpu" for tests and cross-lowering). Returns one of xla, cpu,
    pallas_gpu, pallas_tpu, pallas_gpu_interpret, pallas_tpu_interpret; raises ValueError naming
    ``attention_backend`` for an unknown name or a compiled kernel this platform cannot run. ``auto`` on
    CPU builds the C++ kernel (once per process) to know whether it can pick it."""
    if backend not in BACKENDS:
        raise ValueError(f"attention_backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    family = platform_family(platform)
    if backend == "auto":
        return _auto(family)
    if backend == "pallas":
        if family not in AUTO:
            raise ValueError(
                f"attention_backend 'pallas' (the compiled kernel of this platform) has no kernel for "
                f"{family}: {_what_runs(family)}"
            )
        return AUTO[family]
    backend = ALIASES.get(backend, backend)
    needs = COMPILED.get(backend)
    if needs is not None and needs != family:
        raise ValueError(
            f"attention_backend {backend!r} is the compiled {needs.upper()} kernel and cannot run on "
            f"{family}: {_what_runs(family)}"
        )
    return backend


def _auto(family: str) -> str:
    if family == "cpu":
        from runtime.worker.cpu_attention import kernel_available  # builds the kernel on first use

        return "cpu" if kernel_available() else "xla"
    return AUTO.get(family, "xla")


def _what_runs(family: str) -> str:
    here = f"'auto' ({_auto(family)} here), " + (f"'pallas' ({AUTO[family]}), " if family in AUTO else "")
    return (
        f"use {here}'xla', or 'pallas_gpu_interpret' / 'pallas_tpu_interpret' (a kernel in the Pallas "
        f"interpreter: slow, for tests)"
    )


def _gpu_kernel(kw: dict) -> Callable[..., jax.Array]:
    """The compiled GPU kernel, chosen per call by the target's compute capability when traced: the Mosaic GPU
    kernel (``mosaic_gpu.py``: TMA pages into shared memory, WGMMA) on sm_90+ for a bfloat16 cache it accepts,
    else the Triton kernel (sm_80 and up; every KV dtype the chip converts)."""
    from pallas_kernels.devices import target_device_kind
    from pallas_kernels.ragged_paged_attention import Dims, ragged_paged_attention
    from pallas_kernels.ragged_paged_attention.mosaic_gpu import ragged_paged_attention_mosaic_gpu, runs

    def fn(q, k_pages, v_pages, kv_lens, page_indices, cu_q_lens, num_seqs, *, k_scales=None, v_scales=None):
        T, H, D = q.shape
        dims = Dims(T, H, D, k_pages.shape[2], kv_lens.shape[0], k_pages.shape[1], page_indices.shape[1])
        mosaic = k_scales is None and runs(dims, q.dtype, k_pages.dtype, target_device_kind("gpu") or None)
        kernel = ragged_paged_attention_mosaic_gpu if mosaic else ragged_paged_attention
        args = (q, k_pages, v_pages, kv_lens, page_indices, cu_q_lens, num_seqs)
        return kernel(*args, k_scales=k_scales, v_scales=v_scales, interpret=False, **kw)

    return fn


def make_attend_fn(
    backend: str,
    *,
    sm_scale: float,
    sliding_window: int | None = None,
    soft_cap: float | None = None,
    platform: str | None = None,
) -> AttendFn:
    """(q [T,H,D], k_pages [P,page,KVH,D], LanePages (pallas_tpu) or QuantizedPages, v_pages, metadata) -> [T,H,D].

    ``platform``: where the step will run (default: here); another one only to lower for it
    (``jax.jit(...).trace(...).lower(lowering_platforms=...)``)."""
    backend = resolve_backend(backend, platform)
    kw = dict(sm_scale=sm_scale, sliding_window=sliding_window, soft_cap=soft_cap)
    if backend == "xla":
        from pallas_kernels.ragged_paged_attention import ragged_paged_attention_xla

        fn = functools.partial(ragged_paged_attention_xla, **kw)
    elif backend == "cpu":
        from runtime.worker.cpu_attention import ragged_paged_attention_cpu

        fn = functools.partial(ragged_paged_attention_cpu, **kw)
    elif backend.startswith("pallas_tpu"):
        # Imported here: the TPU kernel (Mosaic TPU) is only needed when it is asked for.
        from pallas_kernels.ragged_paged_attention.tpu import (
            ragged_paged_attention_tpu,
            ragged_paged_attention_tpu_lanes,
        )

        interpret = backend.endswith("_interpret")
        heads = functools.partial(ragged_paged_attention_tpu, interpret=interpret, **kw)
        lanes = functools.partial(ragged_paged_attention_tpu_lanes, interpret=interpret, **kw)

        def fn(q, k_pages, v_pages, *rest, k_scales=None, v_scales=None):
            if isinstance(k_pages, LanePages):  # the engine's TPU cache: the kernel's layout, one group
                assert k_pages.groups == 1, "LanePages of several groups reach attention only through shard_map"
                scales = {}
                if k_scales is not None:  # LaneScales: one row a page
                    scales = dict(k_scales=k_scales.data, v_scales=v_scales.data)
                return lanes(q, k_pages.data, v_pages.data, *rest, num_kv_heads=k_pages.num_kv_heads, **scales)
            return heads(q, k_pages, v_pages, *rest, k_scales=k_scales, v_scales=v_scales)
    elif backend == "pallas_gpu":
        fn = _gpu_kernel(kw)
    else:
        from pallas_kernels.ragged_paged_attention import ragged_paged_attention

        fn = functools.partial(ragged_paged_attention, interpret=True, **kw)

    def attend(q, k_pages, v_pages, md: AttentionMetadata):
        (k_pages, k_scales), (v_pages, v_scales) = split_pages(k_pages), split_pages(v_pages)
        # A float cache in another dtype than the activations (bfloat16 KV, float32 model): the
        # backends take q, k and v in one dtype, so attention runs in the cache's.
        q_in = q if k_scales is not None or k_pages.dtype == q.dtype else q.astype(k_pages.dtype)
        out = fn(
            q_in,
            k_pages,
            v_pages,
            md.kv_lens,
            md.page_indices,
            md.cu_q_lens,
            md.num_seqs,
            k_scales=k_scales,
            v_scales=v_scales,
        )
        return out.astype(q.dtype)

    if backend == "cpu":
        # The model asks for RoPE, the KV write and attention in one call where the kernel takes it (float32
        # activations and cache; None otherwise): a FusedAttention (runtime.models.contracts).
        from runtime.worker.cpu_attention import rope_write_attention_cpu

        return AttendWithRopeWrite(attend, functools.partial(rope_write_attention_cpu, **kw))
    return attend


class AttendWithRopeWrite:
    """``attend`` and its fused RoPE + KV write + attention call: a ``runtime.models.contracts.FusedAttention``."""

    def __init__(self, attend: AttendFn, rope_write_attend: Callable):
        self._attend, self._rope_write_attend = attend, rope_write_attend

    def __call__(self, q, k_pages, v_pages, md: AttentionMetadata) -> jax.Array:
        return self._attend(q, k_pages, v_pages, md)

    def rope_write_attend(self, qkv, cos, sin, k_pages, v_pages, md: AttentionMetadata, *, num_heads: int):
        return self._rope_write_attend(qkv, cos, sin, k_pages, v_pages, md, num_heads=num_heads)
