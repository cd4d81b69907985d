"""KV-cache sizing: how many bytes a context length and a concurrency need, and what a budget holds.

    KV bytes = 2 (K and V) x layers x kv_heads x (head_dim x bytes per element + scale bytes)
               x tokens x concurrency

On a TPU the cache is stored in the kernel's lanes layout (``runtime.quant.kv.LanePages``): each token's K (or V)
row of ``kv_heads x head_dim`` is padded to whole 128-lane vregs, per device under tensor parallelism
(``lane_width``), and an 8-bit cache's scales are one float32 row a page, ``kv_heads x page`` padded the same
way; the bytes counted are the padded ones (``KVShape.lane_groups``)::

    KV bytes a block = 2 x layers x (page x lanes x bytes per element + scale lanes x 4)

Scale bytes are 0 for a float cache (float32, bfloat16) and 2 for an 8-bit one (int8, fp8: one
bfloat16 scale per token and kv head, ``runtime/quant/kv.py``). The engine allocates its cache with
``blocks_for_budget`` and ``kv_bytes_per_block`` from here, so the CLI's figures are exactly what the
engine allocates, scales included (a test checks it).

On an accelerator the engine's budget comes from the device's memory after the weights load
(``kv_budget_from_memory``, as vLLM's ``gpu_memory_utilization``)::

    KV budget = kv_cache_memory_fraction x device memory (bytes_limit) - bytes in use after the weights load

and the CLI answers "how many sequences of length L fit on this device" with the same arithmetic:
``--device`` reads this machine's first device (the weights are estimated from the model's shapes at
``--dtype``; on CPU, which reports no memory, the engine's fixed default budget), ``--device-memory-gib``
asks about a device you do not have (``--weights-gib`` overrides the estimate of what the weights take)::

    python -m runtime.kv_calc --model smollm2-135m --context 32768 --concurrency 64 --kv-dtype bfloat16
    python -m runtime.kv_calc --model smollm2-135m --context 4096 --budget-gib 1 --kv-dtype int8
    python -m runtime.kv_calc --model smollm2-135m --context 8192 --device
    python -m runtime.kv_calc --model gemma3-270m --context 32768 --device-memory-gib 141 --memory-fraction 0.9
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from runtime.api import check_memory_fraction

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "int8": 1, "fp8": 1}
SCALE_BYTES = {"int8": 2, "fp8": 2}  # per token and kv head (a bfloat16 scale); float caches have none
LANE_SCALE_BYTES = 4  # the lanes layout's scale rows are float32 (runtime.quant.kv.LaneScales says why)

DEFAULT_KV_CACHE_BYTES = 256 * 2**20  # the engine's budget where the device reports no memory (CPU)


LANE = 128  # a TPU vreg's lanes: the lanes layout pads each group's row to a multiple of this


def lane_width(num_kv_heads: int, head_dim: int, groups: int = 1) -> int:
    """Lanes of a row of the TPU cache: ``groups`` groups (devices) of ``num_kv_heads / groups`` heads, each
    group's ``heads x head_dim`` rounded up to a multiple of 128."""
    if num_kv_heads % groups:
        raise ValueError(f"{num_kv_heads} kv heads do not split into {groups} groups")
    return groups * (-(-(num_kv_heads // groups) * head_dim // LANE) * LANE)


@dataclass(frozen=True)
class KVShape:
    num_layers: int
    num_kv_heads: int
    head_dim: int
    lane_groups: int = 0  # >= 1: the TPU lanes layout of that many groups (devices); 0: [P, page, KVH, D]

    @classmethod
    def of(cls, config, lane_groups: int = 0) -> KVShape:
        return cls(config.num_layers, config.num_kv_heads, config.head_dim, lane_groups)

    @property
    def lanes(self) -> int:
        """Elements of a token's K (or V) row: padded in the lanes layout."""
        if self.lane_groups:
            return lane_width(self.num_kv_heads, self.head_dim, self.lane_groups)
        return self.num_kv_heads * self.head_dim

    def scale_lanes(self, block_size: int) -> int:
        """Scales a block holds for K (or V) of one layer: one a token and kv head, in the lanes layout a row a
        page padded to whole vregs (``lane_width`` of kv heads x block_size)."""
        if self.lane_groups:
            return lane_width(self.num_kv_heads, block_size, self.lane_groups)
        return self.num_kv_heads * block_size


def kv_bytes_per_block(shape: KVShape, dtype: str, block_size: int) -> int:
    each = LANE_SCALE_BYTES if shape.lane_groups and dtype in SCALE_BYTES else SCALE_BYTES.get(dtype, 0)
    scales = shape.scale_lanes(block_size) * each
    return 2 * shape.num_layers * (block_size * shape.lanes * DTYPE_BYTES[dtype] + scales)


def kv_bytes_per_token(shape: KVShape, dtype: str, block_size: int = 16) -> int:
    """A block's bytes over its tokens (``block_size`` matters only for the lanes layout's scale rows; rounded
    up where they do not divide)."""
    return -(-kv_bytes_per_block(shape, dtype, block_size) // block_size)


def kv_bytes(shape: KVShape, dtype: str, tokens: int, concurrency: int = 1, block_size: int = 16) -> int:
    return kv_bytes_per_token(shape, dtype, block_size) * tokens * concurrency


def blocks_for_budget(shape: KVShape, dtype: str, block_size: int, budget_bytes: int) -> int:
    """Blocks that fit the budget, the null block (id 0) included."""
    return budget_bytes // kv_bytes_per_block(shape, dtype, block_size)


def max_concurrent_requests(shape: KVShape, dtype: str, block_size: int, budget_bytes: int, context: int) -> int:
    """Requests of ``context`` tokens whose blocks all fit the budget at once (the null block aside)."""
    return max(blocks_for_budget(shape, dtype, block_size, budget_bytes) - 1, 0) // math.ceil(context / block_size)


def kv_budget_from_memory(bytes_limit: int, bytes_in_use: int, fraction: float, step_bytes: int = 0) -> int:
    """KV bytes the engine may allocate on a device: ``fraction x bytes_limit - bytes_in_use - step_bytes``,
    read after the weights loaded, ``step_bytes`` being the compiled step's working memory at its largest
    bucket (``runtime.worker.model_runner.step_working_bytes``). ValueError, with the figures, if nothing is left."""
    check_memory_fraction(fraction)
    allowed = int(fraction * bytes_limit)
    budget = allowed - int(bytes_in_use) - int(step_bytes)
    if budget <= 0:
        step = (
            f" and the step's working memory at its largest bucket takes {format_bytes(step_bytes)}"
            if step_bytes
            else ""
        )
        raise ValueError(
            f"no room for the KV cache: {format_bytes(bytes_in_use)} is in use after the weights loaded{step}, "
            f"and kv_cache_memory_fraction {fraction} allows {format_bytes(allowed)} of the device's "
            f"{format_bytes(bytes_limit)}; raise kv_cache_memory_fraction, serve smaller weights (dtype bfloat16, "
            f"weight_quant), "
            + ("lower max_num_seqs or max_num_batched_tokens (the largest bucket), " if step_bytes else "")
            + "or set kv_cache_bytes"
        )
    return budget


def format_bytes(n: int) -> str:
    """``"6.00 GiB"``, ``"2.0 MiB"``: GiB from 1 GiB up, MiB below."""
    return f"{n / 2**30:.2f} GiB" if abs(n) >= 2**30 else f"{n / 2**20:.1f} MiB"


def summary(
    shape: KVShape, dtype: str, context: int, concurrency: int, block_size: int = 16, budget_bytes: int | None = None
) -> dict:
    per_token = kv_bytes_per_token(shape, dtype, block_size)
    total = kv_bytes(shape, dtype, context, concurrency, block_size)
    blocks_per_request = math.ceil(context / block_size)
    out = {
        "num_layers": shape.num_layers,
        "num_kv_heads": shape.num_kv_heads,
        "head_dim": shape.head_dim,
        **({"lanes": shape.lanes} if shape.lane_groups else {}),  # the TPU layout's padded row
        "kv_dtype": dtype,
        "scale_bytes_per_token": kv_bytes_per_block(shape, dtype, block_size) // block_size
        - 2 * shape.num_layers * shape.lanes * DTYPE_BYTES[dtype],
        "bytes_per_token": per_token,
        "context": context,
        "concurrency": concurrency,
        "kv_bytes": total,
        "kv_gib": round(total / 2**30, 3),
        "block_size": block_size,
        "blocks_needed": blocks_per_request * concurrency + 1,  # + the null block
    }
    if budget_bytes is not None:
        out["budget_bytes"] = budget_bytes
        out["blocks_in_budget"] = blocks_for_budget(shape, dtype, block_size, budget_bytes)
        out["max_concurrency_in_budget"] = max_concurrent_requests(shape, dtype, block_size, budget_bytes, context)
    return out
