"""The jitted step: (params, KV cache, one step's flattened batch) -> (sampled tokens, KV cache).

In: ``StepInputs`` (host-built arrays padded to a bucket). Out: one sampled token per sequence row and
the updated cache. The KV cache argument is donated, so XLA updates it in place and the host only ever
holds block ids. Model forward and sampling are one XLA program: nothing but the sampled ids crosses
back to the host each step.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from runtime.attention import AttentionMetadata, make_attend_fn
from runtime.config import ModelConfig
from runtime.models import get_family
from runtime.sampling import SamplingArrays, sample

DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16}


class StepInputs(NamedTuple):
    tokens: jax.Array  # int32[T]
    positions: jax.Array  # int32[T]
    metadata: AttentionMetadata
    logits_indices: jax.Array  # int32[S] row of each sequence's last scheduled token
    sampling: SamplingArrays


def enable_compilation_cache(directory: str | None = None) -> None:
    """Persist compiled programs across restarts (the first start compiles, later ones load)."""
    directory = directory or os.environ.get("JAXSERVE_COMPILATION_CACHE", os.path.expanduser("~/.cache/jaxserve/xla"))
    jax.config.update("jax_compilation_cache_dir", directory)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


def allocate_kv_cache(config: ModelConfig, num_pages: int, page_size: int, dtype) -> list[tuple[jax.Array, jax.Array]]:
    """One (K, V) pair of [num_pages, page_size, kv_heads, head_dim] per layer; page 0 is the null page."""
    shape = (num_pages, page_size, config.num_kv_heads, config.head_dim)
    return [(jnp.zeros(shape, dtype), jnp.zeros(shape, dtype)) for _ in range(config.num_layers)]


def make_step_fn(config: ModelConfig, *, attention_backend: str = "auto", dtype=jnp.float32):
    """Build ``step(params, kv_caches, inputs) -> (tokens int32[S], kv_caches)``, jitted, cache donated."""
    attend = make_attend_fn(attention_backend, sm_scale=config.head_dim ** -0.5)
    model = get_family(config.architecture).build(config, attend, dtype)

    def step(params, kv_caches, inputs: StepInputs):
        logits, kv_caches = model.apply(
            {"params": params}, inputs.tokens, inputs.positions, kv_caches, inputs.metadata, inputs.logits_indices
        )
        return sample(logits, inputs.sampling), kv_caches

    def logits_fn(params, kv_caches, inputs: StepInputs):
        return model.apply(
            {"params": params}, inputs.tokens, inputs.positions, kv_caches, inputs.metadata, inputs.logits_indices
        )

    return jax.jit(step, donate_argnums=(1,)), jax.jit(logits_fn, donate_argnums=(1,))


def params_to_device(params: dict[str, Any], dtype) -> dict[str, Any]:
    """Host float32 weights -> device arrays in the serving dtype (norm scales stay float32)."""
    def convert(path, x):
        keep32 = any(getattr(k, "key", None) == "scale" for k in path)
        return jnp.asarray(x, jnp.float32 if keep32 else dtype)

    return jax.tree_util.tree_map_with_path(convert, params)


def next_power_of_two(n: int, minimum: int = 1) -> int:
    n = max(n, minimum)
    return 1 << (n - 1).bit_length()
