"""The CPU attention backend: ``runtime/worker/cpu_attention.cc``, one XLA FFI custom call per layer.

Flow: the first ``ragged_paged_attention_cpu`` traced on CPU builds the C++ source with the matmul kernels'
machinery (``runtime.quant.cpu.NativeKernels``: ``$CXX -O3 -march=native`` or ``JAXSERVE_KERNEL_ISA``, a
hashed cache file in ``$JAXSERVE_KERNEL_CACHE``, loaded with ctypes, registered with XLA:CPU), then every
call is one custom call: q cast to float32 in, float32 out, cast back to q's dtype. The attention backend
``cpu`` (``runtime.worker.attention``) runs it, and ``auto`` picks it on CPU when ``kernel_available()``;
without a compiler (or when the build fails) one warning is logged and ``cpu`` and ``auto`` run the XLA path
(``ragged_paged_attention_xla``), which gives the same numbers.

Semantics: exactly ``pallas_kernels.ragged_paged_attention.ragged_paged_attention_xla``'s (the same
validation, ``paged_attention_api``; the arguments' shapes and dtypes are in its docstring): ragged rows on
one token axis, causal within each sequence's new tokens, GQA, ``sm_scale``, ``sliding_window``,
``soft_cap``; a float32 or bfloat16 cache, or an 8-bit one (int8 or float8_e4m3fn codes with per-token,
per-head float32 or bfloat16 scales, ``runtime/quant/kv.py``), each key widened to float32 as it is read.
Online softmax in float32. The one difference, on inputs the engine never builds: a ``kv_lens`` entry
larger than its page table holds reads no key past the table (the XLA path would wrap around it).

``rope_write_attention_cpu``: the same call with the layer's RoPE and KV write in front (a float32 cache):
q, k and v side by side before RoPE in, the pages written in place (aliased results) and attention's output
out; the ``cpu`` backend's ``attend`` offers it to the model (``runtime.worker.attention``).

Why: the XLA path is ~40 small XLA:CPU ops per layer (two nested ``while`` loops, gathers of the page
table and of every key block, copies), each with its own dispatch; a batch-1 decode step spent more time
in them than in attention's arithmetic. The kernel walks each row's keys in place, in one call.
"""

from __future__ import annotations

import logging
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from pallas_kernels.ragged_paged_attention import ragged_paged_attention_xla
from pallas_kernels.ragged_paged_attention.kernel import PagedCall, paged_attention_api
from runtime.models.kv_cache import AttentionMetadata
from runtime.quant.cpu import NativeKernels

log = logging.getLogger("runtime.worker")

SOURCE = Path(__file__).parent / "cpu_attention.cc"
FLOAT_TARGET = ("jaxserve_ragged_attention", "JaxserveRaggedAttention")  # float32 / bfloat16 pages
QUANTIZED_TARGET = ("jaxserve_ragged_attention_q8", "JaxserveRaggedAttentionQuantized")  # 8-bit codes + scales
ROPE_WRITE_TARGET = ("jaxserve_rope_write_attention", "JaxserveRopeWriteAttention")  # RoPE + KV write + attention

_KERNELS = NativeKernels(
    SOURCE,
    (FLOAT_TARGET, QUANTIZED_TARGET, ROPE_WRITE_TARGET),
    isa_symbol="jaxserve_attention_isa",
    log=log,
    what="cpu attention",
    fallback="attention_backend 'cpu' and 'auto' use the XLA path (ragged_paged_attention_xla), slower",
)


def kernel_available() -> bool:
    """Build, load and register the kernel once per process; False (one warning) if that fails."""
    return _KERNELS.available()


def kernel_isa() -> str | None:
    """The instruction-set path the kernel was compiled for ("avx512", "avx2", "portable"), or None."""
    return _KERNELS.isa()


@paged_attention_api
def ragged_paged_attention_cpu(call: PagedCall):
    """The C++ kernel (one XLA FFI custom call), or the XLA path when it cannot be built.

    Same contract as ``ragged_paged_attention_xla`` (shapes, dtypes, result). No knobs: the kernel walks
    each valid row's own keys (its sliding window and causal limit), the q heads of one kv head together,
    32 keys per online-softmax block, on the calling thread.
    """
    if not kernel_available():
        arrays = (call.q, call.k_pages, call.v_pages, call.kv_lens, call.page_indices, call.cu_q_lens, call.num_seqs)
        static = dict(sm_scale=call.sm_scale, sliding_window=call.sliding_window, soft_cap=call.soft_cap)
        return ragged_paged_attention_xla(*arrays, k_scales=call.k_scales, v_scales=call.v_scales, **static)
    T, H, D = call.dims.max_num_tokens, call.dims.num_q_heads, call.dims.head_dim
    attrs = dict(
        sm_scale=np.float32(call.sm_scale),
        sliding_window=np.int64(call.sliding_window or 0),
        soft_cap=np.float32(call.soft_cap or 0.0),
    )
    pages = (call.k_pages, call.v_pages)
    if call.quantized:
        name, pages = QUANTIZED_TARGET[0], (*pages, call.k_scales, call.v_scales)
    else:
        name = FLOAT_TARGET[0]
    out = jax.ffi.ffi_call(name, jax.ShapeDtypeStruct((T, H, D), jnp.float32))(
        call.q.astype(jnp.float32), *pages, call.kv_lens, call.page_indices, call.cu_q_lens, call.num_seqs, **attrs
    )
    return out.astype(call.q.dtype)


def rope_write_attention_cpu(
    qkv: jax.Array,
    cos: jax.Array,
    sin: jax.Array,
    k_pages,
    v_pages,
    md: AttentionMetadata,
    *,
    num_heads: int,
    sm_scale: float,
    sliding_window: int | None = None,
    soft_cap: float | None = None,
) -> tuple[jax.Array, tuple[jax.Array, jax.Array]] | None:
    """A layer's RoPE, KV write and attention as one kernel call (``JaxserveRopeWriteAttention``), or None where
    the kernel does not take it (no kernel, activations or cache not float32, an 8-bit cache): the model then
    runs ``apply_rope``, ``write_kv`` and ``attend`` (``runtime.models.common.Attention``, the definition).

    qkv [T, (H + 2 KVH) * D] float32: q, k and v side by side, before RoPE (the stacked q/k/v projection);
    cos, sin [T, D / 2] float32 (``rope_cos_sin``); k_pages, v_pages [P, page, KVH, D] float32, donated: the
    rows at ``md.slot_mapping`` are set in place. Returns (out [T, H, D] float32, (k_pages, v_pages)). The
    rotation is two roundings an element (an fma), as XLA:CPU's scalar loops compile ``apply_rope``; where
    jax 0.12 vectorizes it, XLA rounds each product, so an element may differ by a rounding (the .cc file
    says where). The attention is ``ragged_paged_attention_cpu``'s."""
    if not (isinstance(k_pages, jax.Array) and isinstance(v_pages, jax.Array)):
        return None  # QuantizedPages: the module path quantizes (runtime.quant.kv)
    if qkv.ndim != 2 or k_pages.ndim != 4 or k_pages.shape != v_pages.shape:
        return None
    T, KVH, D = qkv.shape[0], k_pages.shape[2], k_pages.shape[3]
    if qkv.shape[1] != (num_heads + 2 * KVH) * D or num_heads % KVH or cos.shape != (T, D // 2):
        return None
    if any(a.dtype != jnp.float32 for a in (qkv, cos, sin, k_pages, v_pages)) or not kernel_available():
        return None
    f32 = jnp.float32
    call = jax.ffi.ffi_call(
        ROPE_WRITE_TARGET[0],
        (
            jax.ShapeDtypeStruct((T, num_heads, D), f32),
            jax.ShapeDtypeStruct(k_pages.shape, f32),
            jax.ShapeDtypeStruct(v_pages.shape, f32),
        ),
        input_output_aliases={3: 1, 4: 2},
    )
    out, k_pages, v_pages = call(
        qkv,
        cos,
        sin,
        k_pages,
        v_pages,
        md.slot_mapping,
        md.kv_lens,
        md.page_indices,
        md.cu_q_lens,
        md.num_seqs,
        sm_scale=np.float32(sm_scale),
        sliding_window=np.int64(sliding_window or 0),
        soft_cap=np.float32(soft_cap or 0.0),
        num_heads=np.int64(num_heads),
    )
    return out, (k_pages, v_pages)
