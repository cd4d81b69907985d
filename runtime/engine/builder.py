"""What an ``LLMEngine`` is built from: the model loaded, its weights on the device, the KV cache sized, the
scheduler and the model runner made. ``build`` does it in that order (the weights first: on an
accelerator the KV cache gets what they leave of the device's memory) and checks every setting that
needs the model or the device before anything large is allocated. The sizing arithmetic itself is
``runtime.core.kv_sizing``'s (the one place for it); this module decides which budget applies.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from runtime.api import EngineConfig
from runtime.core.kv_sizing import (
    DEFAULT_KV_CACHE_BYTES,
    KVShape,
    blocks_for_budget,
    format_bytes,
    kv_budget_from_memory,
    kv_bytes_per_block,
)
from runtime.core.scheduler import Scheduler, SchedulerConfig
from runtime.core.speculative import SpeculativeConfig
from runtime.distributed import multihost
from runtime.distributed.sharding import TensorParallel
from runtime.dtypes import DTYPES
from runtime.loading.gguf import LoadedGGUF, load_gguf, native_params
from runtime.loading.presets import resolve_gguf
from runtime.loading.tokenizer import Tokenizer
from runtime.models.config import ModelConfig
from runtime.platform import (
    configure_xla,
    current_platform,
    device_memory_stats,
    is_accelerator,
    platform_family,
    resolve_dtype,
)
from runtime.quant.kv import KV_DTYPES, kv_dtype_support_error
from runtime.quant.weights import dense_params, fuse_linears, quantize_params
from runtime.worker.attention import kv_lane_groups, resolve_backend
from runtime.worker.model_runner import (
    ModelRunner,
    enable_compilation_cache,
    largest_bucket,
    params_to_device,
    step_working_bytes,
)

log = logging.getLogger("runtime.engine")

MemoryStats = Callable[[], "dict[str, int] | None"]  # -> {"bytes_limit", "bytes_in_use"}, or None (CPU)
WEIGHT_BITS = {"int8": 8, "int4": 4, "gguf": 0}  # weight_quant -> bits a weight (gguf: the file's mix, 0)


@dataclass(frozen=True)
class KVCachePlan:
    """How big the KV cache is and why (logged at start; ``LLMEngine.kv_cache_plan``)."""

    num_blocks: int
    budget_bytes: int | None  # None: num_blocks was given
    source: str
    step_bytes: int = 0  # the compiled step's working memory a device, left free (budget from memory only)


def plan_kv_cache(
    config: EngineConfig,
    shape: KVShape,
    kv_dtype: str,
    *,
    platform: str,
    memory_stats: MemoryStats,
    num_devices: int = 1,
    step_bytes: Callable[[], int] | None = None,
) -> KVCachePlan:
    """The block count: ``num_blocks``, else ``kv_cache_bytes``, else on an accelerator
    ``kv_cache_memory_fraction x bytes_limit - bytes_in_use - step working memory`` (``memory_stats()``, read
    after the weights loaded; ``step_bytes()``, the compiled step's temporaries at its largest bucket, asked
    only here; per device, times ``num_devices`` for a cache split over them), else (CPU, or a device that
    reports no memory) the fixed default. Raises ValueError when the budget holds fewer than 2 blocks."""
    step = 0
    if config.num_blocks:
        return KVCachePlan(config.num_blocks, None, "num_blocks")
    if config.kv_cache_bytes:
        budget, source = config.kv_cache_bytes, "kv_cache_bytes"
    else:
        stats = memory_stats() if is_accelerator(platform) else None
        if stats is None:
            if is_accelerator(platform):
                log.warning("the %s device reports no memory stats: KV budget is the fixed default", platform)
            budget, source = DEFAULT_KV_CACHE_BYTES, f"the fixed default on {platform}"
        else:
            limit, in_use, f = stats["bytes_limit"], stats["bytes_in_use"], config.kv_cache_memory_fraction
            step = step_bytes() if step_bytes is not None else 0
            budget = kv_budget_from_memory(limit, in_use, f, step) * num_devices
            source = (
                f"kv_cache_memory_fraction {f} x {format_bytes(limit)} - {format_bytes(in_use)} in use after "
                f"the weights loaded - {format_bytes(step)} for the compiled step's working memory"
                + (f", per device x {num_devices} devices" if num_devices > 1 else "")
            )
    num_blocks = blocks_for_budget(shape, kv_dtype, config.block_size, budget)
    if num_blocks < 2:
        raise ValueError(
            f"the KV budget of {budget} bytes ({source}) holds {num_blocks} blocks of "
            f"{kv_bytes_per_block(shape, kv_dtype, config.block_size)} bytes; need at least 2"
        )
    return KVCachePlan(num_blocks, budget, source, step)


def kv_fingerprint(config: EngineConfig, dtype: str, kv_dtype: str) -> str:
    """Everything that changes the KV values: salts the prefix cache, and a KV import must match it."""
    return f"{config.model}|{config.gguf_path}|{dtype}|{kv_dtype}|{config.weight_quant}{config.weight_quant_group}"


@dataclass(frozen=True)
class EngineParts:
    """What ``build`` made; ``LLMEngine`` keeps each as an attribute of the same name."""

    platform: str
    attention_backend: str  # resolved for the platform (runtime.worker.attention.resolve_backend)
    dtype: str
    kv_dtype: str
    model_config: ModelConfig
    tokenizer: Tokenizer
    max_model_len: int
    tensor_parallel: TensorParallel | None
    kv_cache_plan: KVCachePlan
    scheduler: Scheduler
    runner: ModelRunner
    weight_bits: int  # 0: the file's own blocks, a mix

    @property
    def num_blocks(self) -> int:
        return self.kv_cache_plan.num_blocks


def build(
    config: EngineConfig,
    *,
    loaded: LoadedGGUF | None = None,
    platform: str | None = None,
    memory_stats: MemoryStats | None = None,
) -> EngineParts:
    """``platform`` (a JAX platform name) and ``memory_stats`` stand in for the device's in tests: defaults are
    ``jax.default_backend()`` and ``runtime.platform.device_memory_stats``. Raises ValueError for a setting
    this model or platform cannot run, before the weights or the cache are allocated."""
    configure_xla()
    platform = platform or current_platform()
    # Checked before anything loads: a backend this platform cannot run fails at once, naming the option.
    attention_backend = resolve_backend(config.attention_backend, platform)
    dtype = resolve_dtype(config.dtype, platform)
    if config.compilation_cache:
        enable_compilation_cache()
    loaded = loaded or load_gguf(config.gguf_path or resolve_gguf(config.model))
    max_model_len = min(config.max_model_len, loaded.config.max_position_embeddings)
    kv_dtype = config.kv_dtype or dtype
    # Needs the device (is float8 there?), so checked here, after configure_xla, not in the config.
    unsupported = kv_dtype_support_error(kv_dtype, attention_backend, platform_family(platform))
    if unsupported:
        raise ValueError(unsupported)
    # Needs the model's head counts and the devices, so checked here too; None for 1 device.
    tp = TensorParallel.plan(loaded.config, config.tensor_parallel, weight_quant=config.weight_quant)
    served = tp.config if tp else loaded.config  # kv heads repeated when fewer than devices
    params = _weights_on_device(config, loaded, tp, platform, dtype)
    if memory_stats is None:
        devices = list(tp.mesh.devices.flat) if tp else None

        def memory_stats():
            jax.block_until_ready(params)  # bytes_in_use counts them once they are on the device
            return device_memory_stats(devices)

    # On TPU the cache is stored in the kernel's lanes layout, padded per device: the bytes counted are those.
    kv_shape = KVShape.of(served, kv_lane_groups(attention_backend, platform, tp.size if tp else 1))

    def step_bytes() -> int:  # the largest bucket's working memory, compiled before the cache is sized
        t, s = largest_bucket(config.max_num_batched_tokens, config.max_num_seqs)
        return step_working_bytes(
            served,
            params,
            attention_backend=attention_backend,
            platform=platform,
            dtype=dtype,
            kv_dtype=kv_dtype,
            tensor_parallel=tp,
            num_tokens=t,
            num_seqs=s,
            page_size=config.block_size,
            pages_per_seq=-(-max_model_len // config.block_size),
        )

    plan = plan_kv_cache(
        config,
        kv_shape,
        kv_dtype,
        platform=platform,
        memory_stats=memory_stats,
        num_devices=tp.size if tp else 1,
        step_bytes=step_bytes,
    )
    if jax.process_count() > 1:  # one cache over every process's devices: the same block count in each
        agreed = multihost.agree_num_blocks(plan.num_blocks)
        if agreed != plan.num_blocks:
            plan = KVCachePlan(
                agreed, plan.budget_bytes, f"{plan.source}; the smallest of {jax.process_count()} processes"
            )
    log.info(
        "KV cache: %d blocks of %d tokens, %s of %s (budget: %s); %s on %s, attention %s",
        plan.num_blocks,
        config.block_size,
        format_bytes(plan.num_blocks * kv_bytes_per_block(kv_shape, kv_dtype, config.block_size)),
        kv_dtype,
        plan.source,
        dtype,
        platform,
        attention_backend,
    )
    scheduler = Scheduler(
        SchedulerConfig(
            max_num_batched_tokens=config.max_num_batched_tokens,
            max_num_seqs=config.max_num_seqs,
            max_model_len=max_model_len,
            block_size=config.block_size,
            num_blocks=plan.num_blocks,
            enable_chunked_prefill=config.enable_chunked_prefill,
            enable_prefix_caching=config.enable_prefix_caching,
            prefix_cache_salt=kv_fingerprint(config, dtype, kv_dtype),
            speculative=(
                SpeculativeConfig(config.num_speculative_tokens, config.prompt_lookup_min, config.prompt_lookup_max)
                if config.speculative == "ngram"
                else None
            ),
        )
    )
    runner = ModelRunner(
        served,
        params,
        num_blocks=plan.num_blocks,
        block_size=config.block_size,
        max_num_seqs=config.max_num_seqs,
        max_num_batched_tokens=config.max_num_batched_tokens,
        max_model_len=max_model_len,
        dtype=DTYPES[dtype],
        kv_dtype=KV_DTYPES[kv_dtype],
        attention_backend=attention_backend,
        tensor_parallel=tp,
        platform=platform,
    )
    return EngineParts(
        platform=platform,
        attention_backend=attention_backend,
        dtype=dtype,
        kv_dtype=kv_dtype,
        model_config=loaded.config,
        tokenizer=Tokenizer.from_gguf_metadata(loaded.metadata),
        max_model_len=max_model_len,
        tensor_parallel=tp,
        kv_cache_plan=plan,
        scheduler=scheduler,
        runner=runner,
        weight_bits=WEIGHT_BITS.get(config.weight_quant, np.dtype(DTYPES[dtype]).itemsize * 8),
    )


def _weights_on_device(config: EngineConfig, loaded: LoadedGGUF, tp, platform: str, dtype: str) -> Any:
    """The parameter tree on the device: sharded over the mesh, or in the weight format ``weight_quant`` asks for."""
    if tp:
        return tp.shard_params(tp.replicate_kv_heads(loaded.params), DTYPES[dtype])
    if config.weight_quant == "gguf":
        host = native_params(loaded.path)  # the file's own Q8_0 / Q4_1 blocks
    elif config.weight_quant == "none" and config.dense_kernel and platform == "cpu" and dtype == "float32":
        host = dense_params(loaded.params)  # row-major for the CPU kernel (same float32 weights)
    else:
        host = quantize_params(loaded.params, config.weight_quant, config.weight_quant_group)
    if platform_family(platform) == "cpu":
        host = fuse_linears(host)  # q/k/v and gate/up as one kernel call each where the weights allow
    return params_to_device(host, DTYPES[dtype])
