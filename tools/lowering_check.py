"""Lowering check: every kernel, and the whole engine step, lowered for GPUs and TPUs from any machine.

A tool above the two layers it checks (the kernels of ``pallas_kernels`` and the engine step of ``runtime``):
``tools/`` sits beside the gateway in the import contracts, so neither layer below imports it.

    python -m tools.lowering_check                       # the default matrix, all targets
    python -m tools.lowering_check --platform tpu-v6e --kernels ragged_paged_attention
    python -m tools.lowering_check --head-dim 128 --num-heads 40 --num-kv-heads 5 --page-size 32

What it proves (step 2 of the design notes' "Proving accelerator code on a CPU machine"): each case
is ``jax.jit(f).trace(*abstract_args).lower(lowering_platforms=...)`` with ``jax.ShapeDtypeStruct``
arguments, so a serving-size KV cache (>= 4 GiB a layer) costs no memory. Lowering runs the Pallas
backends' own checks: for ``cuda`` the Pallas GPU lowering under the pinned JAX's default flags
(Mosaic GPU unless a kernel selects Triton through its compiler params) with the limits JAX assumes
when no GPU is attached (sm_90, 227 KiB of shared memory a block: Hopper); for TPUs the Mosaic TPU
lowering for an ``AbstractDevice`` of that kind (block shapes, layouts, memory spaces), plus the
kernels' own VMEM/SMEM budgets for that chip. The kernels' block-size tables are asked for the
target's device kind (a CPU process has no device to ask). Lowering does not prove numerics (the
interpret-mode tests do) or speed (scripts/bench_accelerator.sh on a device does), and the device
compilers (Triton to PTX, Mosaic's passes in libtpu) may still find limits it does not check
(registers, vector layouts): ``python -m tools.compile_check`` runs them on the same cases.

Output: one JSON line per case on stdout::

    {"kernel": ..., "platform": "cuda" | "tpu", "target": "cuda" | "tpu-v5e" | "tpu-v6e",
     "device_kind": ..., "shape": {...}, "ok": true | false, "error": null | "...", "seconds": ...,
     "custom_calls": [...]}

then one summary line ``{"summary": true, "total": N, "ok": n, "failed": f, "seconds": s}``. Exit
status 1 when any case failed, 2 on bad arguments. A case is ok when it lowers *and* the lowered
module contains the target's Pallas custom call (``tpu_custom_call``; ``__gpu$xla.gpu.triton`` or
``mosaic_gpu_v2``), so a kernel that silently fell back to XLA is a failure, not a pass.

The default matrix is a covering set, not the cross product: per target every head dim (64, 128,
256), GQA group (1, 3, 4, 8), page size (16, 32, 64) and KV dtype (bfloat16, int8, fp8) appears at
least once, at 2,048-token steps over 256 sequences of up to 4,096 tokens (``--max-model-len``)
with a KV cache of >= 4 GiB a layer (K and V, scales included); the quantized matmul in int8 and
int4 at prefill and decode row counts; and the jitted engine step (model + attention kernel +
sampling, bfloat16, the backend ``auto`` picks on the target) of SmolLM2-135M and Gemma 3 270M, their
configs read from the installed GGUF files' header (no weights are loaded).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pallas_kernels.api import UnsupportedSetting

GiB = 2**30
KV_BYTES_PER_LAYER = 4 * GiB  # the least a serving cache holds per layer (K + V, scales included)
KV_DTYPES = ("bfloat16", "int8", "fp8")
KV_DTYPE_ALIASES = {"bf16": "bfloat16", "float8_e4m3fn": "fp8"}


# ---------------------------------------------------------------- targets


@dataclasses.dataclass(frozen=True)
class Target:
    """A platform to lower for. ``device_kind`` is JAX's string (what a real device reports)."""

    name: str  # the --platform value
    platform: str  # lowering_platforms
    device_kind: str
    kernel_calls: tuple[str, ...]  # custom-call targets a Pallas kernel lowers to here


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        # With no GPU attached, Triton lowers for compute capability 9.0 and Mosaic GPU allows 227 KiB of
        # shared memory a block: Hopper. The kernels' tables are asked for the H100's entries (the H200's
        # are the same family); left to themselves in a CPU process they would take their fallback rows.
        Target("cuda", "cuda", "NVIDIA H100 80GB HBM3", ("__gpu$xla.gpu.triton", "mosaic_gpu_v2")),
        Target("tpu-v5e", "tpu", "TPU v5 lite", ("tpu_custom_call",)),
        Target("tpu-v6e", "tpu", "TPU v6 lite", ("tpu_custom_call",)),
    )
}


def lower(fn: Callable, args: Sequence, target: Target) -> str:
    """StableHLO text of ``fn`` (jitted or not) lowered for ``target`` with abstract ``args``, through
    ``pallas_kernels.lowering``: the kernels' own lowering tests and this check lower the same way."""
    from pallas_kernels.lowering import lower_for_cuda, lower_for_tpu

    if target.platform == "cuda":
        return lower_for_cuda(fn, *args, device_kind=target.device_kind)
    return lower_for_tpu(fn, *args, device_kind=target.device_kind)


def custom_calls(text: str) -> list[str]:
    """Distinct custom-call targets in a lowered module's text, in order of first appearance."""
    return list(dict.fromkeys(re.findall(r"stablehlo\.custom_call @([\w$.\-]+)", text)))


# ---------------------------------------------------------------- shapes


def _code_dtype(kv_dtype: str):
    from runtime.worker.model_runner import KV_DTYPES  # the engine's names: bfloat16, int8, fp8 -> dtypes

    return KV_DTYPES[kv_dtype]


def kv_bytes_per_page(page_size: int, num_kv_heads: int, head_dim: int, kv_dtype: str, lane_groups: int = 0) -> int:
    """K and V of one page of one layer, scales included for an 8-bit cache (the engine's arithmetic);
    ``lane_groups`` >= 1: in the TPU kernel's lanes layout (each row padded to whole vregs)."""
    from runtime.core.kv_sizing import KVShape, kv_bytes_per_block

    return kv_bytes_per_block(KVShape(1, num_kv_heads, head_dim, lane_groups), kv_dtype, page_size)


def pages_for(bytes_per_layer: int, page_size: int, num_kv_heads: int, head_dim: int, kv_dtype: str) -> int:
    return -(-bytes_per_layer // kv_bytes_per_page(page_size, num_kv_heads, head_dim, kv_dtype))


@dataclasses.dataclass(frozen=True)
class AttentionShape:
    """One step of ragged paged attention: ``tokens`` query rows over ``max_seqs`` sequences."""

    head_dim: int
    num_heads: int
    num_kv_heads: int
    page_size: int
    kv_dtype: str = "bfloat16"
    tokens: int = 2048
    max_seqs: int = 256
    max_model_len: int = 4096
    num_pages: int | None = None  # None: enough pages for KV_BYTES_PER_LAYER
    sliding_window: int | None = None
    soft_cap: float | None = None
    like: str = ""  # the model family this shape stands for (a label)

    @property
    def pages(self) -> int:
        if self.num_pages is not None:
            return self.num_pages
        return pages_for(KV_BYTES_PER_LAYER, self.page_size, self.num_kv_heads, self.head_dim, self.kv_dtype)

    @property
    def pages_per_seq(self) -> int:
        return -(-self.max_model_len // self.page_size)

    def dims(self):
        """The kernels' ``Dims`` of this step (what ``validate_inputs`` reads off its arrays)."""
        from pallas_kernels.ragged_paged_attention import Dims

        return Dims(
            self.tokens,
            self.num_heads,
            self.head_dim,
            self.num_kv_heads,
            self.max_seqs,
            self.page_size,
            self.pages_per_seq,
        )

    def describe(self) -> dict[str, Any]:
        kv_bytes = self.pages * kv_bytes_per_page(self.page_size, self.num_kv_heads, self.head_dim, self.kv_dtype)
        d = {
            "tokens": self.tokens,
            "num_heads": self.num_heads,
            "num_kv_heads": self.num_kv_heads,
            "group": self.num_heads // self.num_kv_heads,
            "head_dim": self.head_dim,
            "dtype": "bfloat16",
            "kv_dtype": self.kv_dtype,
            "page_size": self.page_size,
            "num_pages": self.pages,
            "max_seqs": self.max_seqs,
            "pages_per_seq": self.pages_per_seq,
            "kv_gib_per_layer": round(kv_bytes / GiB, 3),
        }
        if self.sliding_window is not None:
            d["sliding_window"] = self.sliding_window
        if self.soft_cap is not None:
            d["soft_cap"] = self.soft_cap
        if self.like:
            d["like"] = self.like
        return d

    def abstract_args(self) -> tuple[tuple, dict]:
        """(q, k_pages, v_pages, kv_lens, page_indices, cu_q_lens, num_seqs), {k_scales, v_scales}."""
        import jax
        import jax.numpy as jnp

        S, i32 = jax.ShapeDtypeStruct, jnp.int32
        pages = (self.pages, self.page_size, self.num_kv_heads, self.head_dim)
        args = (
            S((self.tokens, self.num_heads, self.head_dim), jnp.bfloat16),
            S(pages, _code_dtype(self.kv_dtype)),
            S(pages, _code_dtype(self.kv_dtype)),
            S((self.max_seqs,), i32),
            S((self.max_seqs, self.pages_per_seq), i32),
            S((self.max_seqs + 1,), i32),
            S((1,), i32),
        )
        scales = {}
        if self.kv_dtype != "bfloat16":
            scales = {"k_scales": S(pages[:3], jnp.bfloat16), "v_scales": S(pages[:3], jnp.bfloat16)}
        return args, scales


@dataclasses.dataclass(frozen=True)
class MatmulShape:
    """``x [m, k] . dequant(W [n, k])^T``, W int8 per output channel or int4 in groups of ``group``."""

    m: int
    k: int
    n: int
    bits: int
    group: int = 0
    like: str = ""

    def describe(self) -> dict[str, Any]:
        d = {"m": self.m, "k": self.k, "n": self.n, "bits": self.bits, "x_dtype": "bfloat16"}
        if self.bits == 4:
            d["group"] = self.group
        if self.like:
            d["like"] = self.like
        return d

    def abstract_args(self) -> tuple:
        import jax
        import jax.numpy as jnp

        from pallas_kernels.quant_matmul import padded_in_features

        S = jax.ShapeDtypeStruct
        x = S((self.m, self.k), jnp.bfloat16)
        if self.bits == 8:
            return x, S((self.n, self.k), jnp.int8), S((self.n,), jnp.float32)
        kp = padded_in_features(self.k, 4, self.group)
        return x, S((self.n, kp // 2), jnp.uint8), S((self.n, kp // self.group), jnp.float32)


@dataclasses.dataclass(frozen=True)
class EngineShape:
    """The jitted engine step of a model preset at one bucket, bfloat16 weights and activations."""

    model: str  # a runtime.loading.presets name
    tokens: int = 2048
    max_seqs: int = 256
    page_size: int = 16
    kv_dtype: str = "bfloat16"
    max_model_len: int = 4096
    num_pages: int | None = None  # None: enough pages for KV_BYTES_PER_LAYER (per layer)

    def describe(self) -> dict[str, Any]:
        d = {
            "model": self.model,
            "tokens": self.tokens,
            "max_seqs": self.max_seqs,
            "page_size": self.page_size,
            "dtype": "bfloat16",
            "kv_dtype": self.kv_dtype,
            "max_model_len": self.max_model_len,
        }
        if self.num_pages is not None:
            d["num_pages"] = self.num_pages
        return d


# The covering set, per target. Every value of each axis appears at least once:
#   head_dim 64 (1, 7), 128 (2, 4, 5), 256 (3, 6); group 1 (5, 6), 3 (1), 4 (2, 3), 8 (4, 7);
#   page 16 (1, 4), 32 (2, 6, 7), 64 (3, 5); KV bfloat16 (1-3), int8 (4, 6), fp8 (5, 7);
#   sliding window and soft cap (3; window alone: 6).
DEFAULT_ATTENTION_SHAPES = (
    AttentionShape(64, 9, 3, 16, "bfloat16", like="SmolLM2-135M"),
    AttentionShape(128, 32, 8, 32, "bfloat16", like="Llama 3 8B"),
    AttentionShape(256, 4, 1, 64, "bfloat16", sliding_window=512, soft_cap=50.0, like="Gemma 3 270M (+ soft cap)"),
    AttentionShape(128, 64, 8, 16, "int8", like="Llama 3 70B, int8 KV"),
    AttentionShape(128, 16, 16, 64, "fp8", like="multi-head (no GQA), fp8 KV"),
    AttentionShape(256, 8, 8, 32, "int8", sliding_window=1024, like="Gemma 7B-like, int8 KV, window"),
    AttentionShape(64, 32, 4, 32, "fp8", like="head_dim 64, group 8, fp8 KV"),
)

DEFAULT_MATMUL_SHAPES = (
    MatmulShape(2048, 4096, 14336, 8, like="Llama 3 8B up/gate, prefill"),
    MatmulShape(256, 14336, 4096, 8, like="Llama 3 8B down, 256 decodes"),
    MatmulShape(256, 4096, 14336, 4, 128, like="Llama 3 8B up/gate, 256 decodes"),
    MatmulShape(2048, 576, 1536, 4, 64, like="SmolLM2-135M up/gate, prefill"),
    MatmulShape(1, 2048, 8192, 4, 32, like="batch-1 decode"),
)

DEFAULT_ENGINE_SHAPES = (EngineShape("smollm2-135m"), EngineShape("gemma3-270m"))


# ---------------------------------------------------------------- kernels


@dataclasses.dataclass(frozen=True)
class Kernel:
    """A thing to lower. ``build(shape, target) -> (fn, abstract args[, extra record fields])``, where
    the extra fields' ``"shape"`` entry adds to the record's shape; raising is a failed case."""

    name: str
    platforms: tuple[str, ...]  # lowering platforms it is meant for ("cuda", "tpu")
    shapes: str  # "attention" | "matmul" | "engine": which shape list it runs over
    build: Callable[[Any, Target], tuple]
    expect_kernel_call: bool = True  # the lowered module must hold one of target.kernel_calls
    min_capability: tuple[int, int] | None = None  # GPU kernels: the oldest compute capability they compile for


def _attention_kw(shape: AttentionShape) -> dict[str, Any]:
    return dict(sm_scale=1.0 / math.sqrt(shape.head_dim), sliding_window=shape.sliding_window, soft_cap=shape.soft_cap)


def _attention(impl: Callable, shape: AttentionShape, lanes: int = 0, **tuning: Any) -> tuple[Callable, tuple]:
    """``impl`` over the shape's abstract arguments; ``lanes``: in the TPU kernel's layout instead, K and V as
    ``[P, page, lanes]`` and 8-bit scales as ``[P, 1, scale lanes]`` (``runtime.quant.kv.LanePages``)."""
    args, scales = shape.abstract_args()
    if lanes:
        import jax

        from runtime.core.kv_sizing import lane_width
        from runtime.quant.kv import LANE_SCALE_DTYPE

        k = jax.ShapeDtypeStruct((*args[1].shape[:2], lanes), args[1].dtype)
        args = (args[0], k, k, *args[3:])
        rows = (shape.pages, 1, lane_width(shape.num_kv_heads, shape.page_size))
        scales = {name: jax.ShapeDtypeStruct(rows, LANE_SCALE_DTYPE) for name in scales}
    kw = {**_attention_kw(shape), **tuning}
    if scales:
        fn = lambda q, k, v, kl, pi, cu, ns, ks, vs: impl(q, k, v, kl, pi, cu, ns, k_scales=ks, v_scales=vs, **kw)  # noqa: E731
        return fn, args + (scales["k_scales"], scales["v_scales"])
    return (lambda *a: impl(*a, **kw)), args


def build_attention_gpu(shape: AttentionShape, target: Target) -> tuple[Callable, tuple, dict]:
    """The compiled GPU kernel with the block sizes its table gives ``target.device_kind``."""
    import jax.numpy as jnp

    from pallas_kernels.ragged_paged_attention.kernel import ragged_paged_attention, table_block_sizes

    block_sizes = table_block_sizes(shape.dims(), jnp.bfloat16, _code_dtype(shape.kv_dtype), target.device_kind)
    fn, args = _attention(ragged_paged_attention, shape, block_sizes=block_sizes)
    return fn, args, {"block_sizes": repr(block_sizes)}


def build_attention_tpu(shape: AttentionShape, target: Target) -> tuple[Callable, tuple, dict]:
    """The compiled TPU kernel, told the target's device kind (a CPU process has no TPU to ask): its
    block-size table and its VMEM/SMEM budgets are that chip's."""
    import jax.numpy as jnp

    from pallas_kernels.ragged_paged_attention.tpu import ragged_paged_attention_tpu_lanes, tpu_block_sizes
    from runtime.core.kv_sizing import lane_width

    scale_dtype = None if shape.kv_dtype == "bfloat16" else jnp.bfloat16
    kv_dtype = _code_dtype(shape.kv_dtype)
    block_sizes = tpu_block_sizes(target.device_kind, shape.dims(), jnp.bfloat16, kv_dtype, scale_dtype)
    # The cache as the engine stores it on a TPU (runtime.quant.kv.LanePages): [P, page, lanes], each row padded
    # to whole vregs, what the kernel DMAs as it is (the [P, page, KVH, D] entry would relay it out first).
    lanes = lane_width(shape.num_kv_heads, shape.head_dim)
    kw = {"num_kv_heads": shape.num_kv_heads, "device_kind": target.device_kind}
    fn, args = _attention(ragged_paged_attention_tpu_lanes, shape, lanes=lanes, **kw)
    kv_bytes = shape.pages * kv_bytes_per_page(shape.page_size, shape.num_kv_heads, shape.head_dim, shape.kv_dtype, 1)
    return fn, args, {"block_sizes": repr(block_sizes), "kv_cache_bytes": kv_bytes, "shape": {"lanes": lanes}}


def build_attention_mosaic_gpu(shape: AttentionShape, target: Target) -> tuple[Callable, tuple, dict]:
    """The Mosaic GPU kernel (sm_90+) with its rule's block sizes; an 8-bit KV shape is refused when traced."""
    from pallas_kernels.ragged_paged_attention.mosaic_gpu import (
        mosaic_gpu_block_sizes,
        ragged_paged_attention_mosaic_gpu,
    )

    block_sizes = mosaic_gpu_block_sizes(shape.dims())
    fn, args = _attention(ragged_paged_attention_mosaic_gpu, shape, block_sizes=block_sizes)
    return fn, args, {"block_sizes": repr(block_sizes)}


def _matmul(impl: Callable, shape: MatmulShape) -> tuple[Callable, tuple]:
    kw = dict(bits=shape.bits, group=shape.group, in_features=shape.k)
    return (lambda x, q, s: impl(x, q, s, **kw)), shape.abstract_args()


def build_matmul_gpu(shape: MatmulShape, target: Target) -> tuple[Callable, tuple]:
    from pallas_kernels.quant_matmul import quant_matmul

    return _matmul(quant_matmul, shape)


def build_matmul_tpu(shape: MatmulShape, target: Target) -> tuple[Callable, tuple]:
    from pallas_kernels.quant_matmul.tpu import quant_matmul_tpu

    return _matmul(quant_matmul_tpu, shape)


@functools.cache
def model_config(preset: str):
    """A preset's ``ModelConfig`` from its GGUF file's header (no tensor data is read)."""
    from runtime.loading.gguf import read_gguf_config
    from runtime.loading.presets import resolve_gguf

    return read_gguf_config(resolve_gguf(preset))


def engine_backend(target: Target) -> str:
    """The attention backend the engine's ``auto`` picks on ``target``'s platform."""
    from runtime.worker.attention import resolve_backend

    return resolve_backend("auto", target.platform)


def build_engine_step(shape: EngineShape, target: Target) -> tuple[Callable, tuple, dict]:
    """The engine's jitted step (``runtime.worker.model_runner.abstract_step``) with ``auto`` attention
    resolved for the target's platform, and its abstract (params, kv_caches, sampler_state, inputs)."""
    from runtime.worker.attention import kv_lane_groups
    from runtime.worker.model_runner import abstract_step

    config = model_config(shape.model)
    num_pages = shape.num_pages or pages_for(
        KV_BYTES_PER_LAYER, shape.page_size, config.num_kv_heads, config.head_dim, shape.kv_dtype
    )
    step, args = abstract_step(
        config,
        attention_backend="auto",
        platform=target.platform,
        dtype="bfloat16",
        kv_dtype=shape.kv_dtype,
        num_tokens=shape.tokens,
        num_seqs=shape.max_seqs,
        num_pages=num_pages,
        page_size=shape.page_size,
        pages_per_seq=-(-shape.max_model_len // shape.page_size),
    )
    groups = kv_lane_groups("auto", target.platform)  # the TPU cache in the kernel's lanes layout
    kv_bytes = num_pages * kv_bytes_per_page(
        shape.page_size, config.num_kv_heads, config.head_dim, shape.kv_dtype, groups
    )
    return (
        step,
        args,
        {
            "attention_backend": engine_backend(target),
            "shape": {
                "num_layers": config.num_layers,
                "num_heads": config.num_heads,
                "num_kv_heads": config.num_kv_heads,
                "head_dim": config.head_dim,
                "num_pages": num_pages,
                "kv_gib_per_layer": round(kv_bytes / GiB, 3),
            },
        },
    )


KERNELS: dict[str, Kernel] = {
    k.name: k
    for k in (
        Kernel("ragged_paged_attention_gpu", ("cuda",), "attention", build_attention_gpu),
        Kernel("ragged_paged_attention_mosaic_gpu", ("cuda",), "attention", build_attention_mosaic_gpu, True, (9, 0)),
        Kernel("ragged_paged_attention_tpu", ("tpu",), "attention", build_attention_tpu),
        Kernel("quant_matmul_gpu", ("cuda",), "matmul", build_matmul_gpu),
        Kernel("quant_matmul_tpu", ("tpu",), "matmul", build_matmul_tpu),
        Kernel("engine_step", ("cuda", "tpu"), "engine", build_engine_step),
    )
}


# ---------------------------------------------------------------- running


@dataclasses.dataclass(frozen=True)
class Case:
    kernel: Kernel
    target: Target
    shape: Any  # AttentionShape | MatmulShape | EngineShape (anything with describe())


def _error_text(exc: BaseException, limit: int = 1200) -> str:
    text = " | ".join(line.strip() for line in str(exc).strip().splitlines() if line.strip())
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def new_record(case: Case, shape: Any = None, error: str | None = None) -> dict[str, Any]:
    """A case's JSON record before its outcome (the compile check's records start the same way)."""
    return {
        "kernel": case.kernel.name,
        "platform": case.target.platform,
        "target": case.target.name,
        "device_kind": case.target.device_kind,
        "shape": (shape or case.shape).describe(),
        "ok": False,
        "error": error,
    }


def check(case: Case) -> dict[str, Any]:
    """Lower one case; the JSON record of its outcome (never raises for the case's own errors)."""
    record = new_record(case)
    start = time.perf_counter()
    try:
        fn, args, *info = case.kernel.build(case.shape, case.target)
        for extra in info:  # what the builder worked out: merged into the record (and its shape)
            record["shape"].update(extra.get("shape", {}))
            record.update({k: v for k, v in extra.items() if k != "shape"})
        calls = custom_calls(lower(fn, args, case.target))
        record["custom_calls"] = calls
        if case.kernel.expect_kernel_call and not set(calls) & set(case.target.kernel_calls):
            record["error"] = (
                f"lowered, but without a Pallas kernel for {case.target.name} (expected a custom call "
                f"to one of {', '.join(case.target.kernel_calls)}; found {calls or 'none'})"
            )
        else:
            record["ok"] = True
    except UnsupportedSetting as exc:  # refused up front by design (the dispatcher routes it elsewhere)
        record.update(ok=True, refused=_error_text(exc))
    except Exception as exc:  # noqa: BLE001 - any failure to lower is the finding, reported and counted
        record["error"] = _error_text(exc)
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record


def run(cases: Iterable[Case], out=None) -> tuple[int, int, float]:
    """Check every case, one JSON line each on ``out`` (stdout), then a summary line.
    Returns (total, failed, seconds)."""
    out = out or sys.stdout
    start = time.perf_counter()
    total = failed = refused = 0
    for case in cases:
        record = check(case)
        total += 1
        failed += not record["ok"]
        refused += bool(record.get("refused"))
        print(json.dumps(record), file=out, flush=True)
    seconds = round(time.perf_counter() - start, 2)
    summary = {"summary": True, "total": total, "ok": total - failed, "refused": refused, "failed": failed}
    print(json.dumps({**summary, "seconds": seconds}), file=out, flush=True)
    return total, failed, seconds


def build_cases(
    targets: Sequence[Target], kernels: Sequence[Kernel], shapes: Mapping[str, Sequence[Any]]
) -> list[Case]:
    """Every (target, kernel, shape) with the kernel meant for the target's platform, target-major."""
    return [
        Case(k, t, s) for t in targets for k in kernels if t.platform in k.platforms for s in shapes.get(k.shapes, ())
    ]


# ---------------------------------------------------------------- command line

SHAPE_OPTIONS = ("head_dim", "num_heads", "num_kv_heads", "page_size", "num_pages", "max_seqs", "tokens", "kv_dtype")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _kv_dtype(text: str) -> str:
    name = KV_DTYPE_ALIASES.get(text, text)
    if name not in KV_DTYPES:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(KV_DTYPES)}, got {text!r}")
    return name


def parser(
    kernel_names: Sequence[str],
    *,
    targets: Mapping[str, Any] = TARGETS,
    prog: str = "python -m tools.lowering_check",
    description: str = "Lower every Pallas kernel and the engine step for cuda and TPU v5e/v6e with abstract "
    "arrays; one JSON line per case, exit 1 on any failure.",
) -> argparse.ArgumentParser:
    """The command line; ``tools.compile_check`` reuses it with its own targets."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    shape = p.add_argument_group(
        "your shape",
        "any of these replaces the default matrix by this one shape (the others default to "
        "head_dim 128, 32 heads, 8 kv heads, page 16, bfloat16 KV, 2048 tokens, 256 sequences, pages for "
        "4 GiB of KV a layer), checked for every kernel and target; the quantized matmul takes "
        "K = heads * head_dim and N = (heads + 2 * kv_heads) * head_dim (a fused QKV projection)",
    )
    shape.add_argument("--head-dim", type=_positive)
    shape.add_argument("--num-heads", type=_positive, help="query heads")
    shape.add_argument("--num-kv-heads", type=_positive)
    shape.add_argument("--page-size", type=_positive, help="tokens per KV page")
    shape.add_argument("--num-pages", type=_positive, help="pages in the cache (per layer)")
    shape.add_argument("--max-seqs", type=_positive, help="sequences per step")
    shape.add_argument("--tokens", type=_positive, help="query tokens per step")
    shape.add_argument("--kv-dtype", type=_kv_dtype, help="bfloat16 | int8 | fp8")
    p.add_argument(
        "--max-model-len", type=_positive, default=4096, help="page-table width = ceil(this / page size) (default 4096)"
    )
    p.add_argument(
        "--platform",
        action="append",
        choices=list(targets),
        metavar="{" + ",".join(targets) + "}",
        help="only this target (repeatable; default: all)",
    )
    p.add_argument("--kernels", help="comma-separated names or prefixes of: " + ", ".join(kernel_names))
    p.add_argument(
        "--engine",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="lower the engine step of SmolLM2-135M and Gemma 3 270M (default: on with the default "
        "matrix, off with a shape of your own; with one, its page size, pages, tokens, "
        "sequences and KV dtype are used)",
    )
    return p


def _select_kernels(spec: str | None, registry: Mapping[str, Kernel], p: argparse.ArgumentParser) -> list[Kernel]:
    if not spec:
        return list(registry.values())
    chosen: list[Kernel] = []
    for word in (w.strip() for w in spec.split(",") if w.strip()):
        hits = [k for name, k in registry.items() if name == word or name.startswith(word)]
        if not hits:
            p.error(f"--kernels: unknown kernel {word!r} (known: {', '.join(registry)})")
        chosen += [k for k in hits if k not in chosen]
    return chosen


def user_shapes(args: argparse.Namespace) -> dict[str, list[Any]]:
    """The one shape of the command line, as an attention, a matmul (int8 and int4) and engine shapes."""
    head_dim = args.head_dim or 128
    num_heads = args.num_heads or 32
    num_kv_heads = args.num_kv_heads or math.gcd(num_heads, 8)
    kv_dtype = args.kv_dtype or "bfloat16"
    tokens, max_seqs, page_size = args.tokens or 2048, args.max_seqs or 256, args.page_size or 16
    attention = AttentionShape(
        head_dim,
        num_heads,
        num_kv_heads,
        page_size,
        kv_dtype,
        tokens=tokens,
        max_seqs=max_seqs,
        max_model_len=args.max_model_len,
        num_pages=args.num_pages,
        like="command line",
    )
    k = num_heads * head_dim
    n = (num_heads + 2 * num_kv_heads) * head_dim
    group = next((g for g in (128, 64, 32) if k % g == 0), 32)
    matmul = [
        MatmulShape(tokens, k, n, 8, like="command line: QKV projection"),
        MatmulShape(tokens, k, n, 4, group, like="command line: QKV projection"),
    ]
    engine = [
        dataclasses.replace(
            s,
            tokens=tokens,
            max_seqs=max_seqs,
            page_size=page_size,
            kv_dtype=kv_dtype,
            max_model_len=args.max_model_len,
            num_pages=args.num_pages,
        )
        for s in DEFAULT_ENGINE_SHAPES
    ]
    return {"attention": [attention], "matmul": matmul, "engine": engine}


def selected_shapes(args: argparse.Namespace, p: argparse.ArgumentParser) -> dict[str, list[Any]]:
    """The shapes the parsed command line asks for: its one shape, or the default matrix."""
    if args.num_heads and args.num_kv_heads and args.num_heads % args.num_kv_heads:
        p.error(f"--num-heads ({args.num_heads}) must be a multiple of --num-kv-heads ({args.num_kv_heads})")
    custom = any(getattr(args, name) is not None for name in SHAPE_OPTIONS)
    if custom:
        shapes = user_shapes(args)
    else:
        shapes = {
            "attention": [dataclasses.replace(s, max_model_len=args.max_model_len) for s in DEFAULT_ATTENTION_SHAPES],
            "matmul": list(DEFAULT_MATMUL_SHAPES),
            "engine": [dataclasses.replace(s, max_model_len=args.max_model_len) for s in DEFAULT_ENGINE_SHAPES],
        }
    engine = (not custom) if args.engine is None else args.engine
    if not engine:
        shapes["engine"] = []
    return shapes


def main(argv: Sequence[str] | None = None, *, kernels: Mapping[str, Kernel] | None = None, out=None) -> int:
    """The CLI. ``kernels`` replaces the registry (tests inject a failing kernel through it)."""
    registry = dict(KERNELS if kernels is None else kernels)
    p = parser(list(registry))
    args = p.parse_args(argv)
    shapes = selected_shapes(args, p)
    targets = [TARGETS[name] for name in dict.fromkeys(args.platform or TARGETS)]
    cases = build_cases(targets, _select_kernels(args.kernels, registry, p), shapes)
    total, failed, seconds = run(cases, out)
    print(f"lowering check: {total - failed}/{total} ok, {failed} failed, {seconds:.1f} s", file=sys.stderr)
    return 1 if failed or not total else 0


if __name__ == "__main__":
    sys.exit(main())
