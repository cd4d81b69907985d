"""KV-cache sizing: how many bytes a context length and a concurrency need, and what a budget holds.

    KV bytes = 2 (K and V) x layers x kv_heads x (head_dim x bytes per element + scale bytes)
               x tokens x concurrency

Scale bytes are 0 for a float cache (float32, bfloat16) and 2 for an 8-bit one (int8, fp8: one
bfloat16 scale per token and kv head, ``runtime/kv_quant.py``). The engine allocates its cache with
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

import argparse
import json
import math
import sys
from dataclasses import dataclass

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "int8": 1, "fp8": 1}
SCALE_BYTES = {"int8": 2, "fp8": 2}  # per token and kv head (a bfloat16 scale); float caches have none

DEFAULT_KV_CACHE_BYTES = 256 * 2**20  # the engine's budget where the device reports no memory (CPU)
DEFAULT_MEMORY_FRACTION = 0.9  # of the device's memory, weights + KV cache + working memory together


@dataclass(frozen=True)
class KVShape:
    num_layers: int
    num_kv_heads: int
    head_dim: int

    @classmethod
    def of(cls, config) -> "KVShape":
        return cls(config.num_layers, config.num_kv_heads, config.head_dim)


def kv_bytes_per_token(shape: KVShape, dtype: str) -> int:
    per_head = shape.head_dim * DTYPE_BYTES[dtype] + SCALE_BYTES.get(dtype, 0)
    return 2 * shape.num_layers * shape.num_kv_heads * per_head


def kv_bytes(shape: KVShape, dtype: str, tokens: int, concurrency: int = 1) -> int:
    return kv_bytes_per_token(shape, dtype) * tokens * concurrency


def kv_bytes_per_block(shape: KVShape, dtype: str, block_size: int) -> int:
    return kv_bytes_per_token(shape, dtype) * block_size


def blocks_for_budget(shape: KVShape, dtype: str, block_size: int, budget_bytes: int) -> int:
    """Blocks that fit the budget, the null block (id 0) included."""
    return budget_bytes // kv_bytes_per_block(shape, dtype, block_size)


def max_concurrent_requests(shape: KVShape, dtype: str, block_size: int, budget_bytes: int, context: int) -> int:
    """Requests of ``context`` tokens whose blocks all fit the budget at once (the null block aside)."""
    return max(blocks_for_budget(shape, dtype, block_size, budget_bytes) - 1, 0) // math.ceil(context / block_size)


def check_memory_fraction(fraction: float) -> None:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise ValueError(f"kv_cache_memory_fraction must be in (0, 1] (the share of the device's memory the engine "
                         f"may use in all); got {fraction!r}")


def kv_budget_from_memory(bytes_limit: int, bytes_in_use: int, fraction: float) -> int:
    """KV bytes the engine may allocate on a device: ``fraction x bytes_limit - bytes_in_use``, read after
    the weights loaded. The rest of the fraction is what the weights (and anything else resident) take;
    ``1 - fraction`` is left for the step's working memory. ValueError if nothing is left."""
    check_memory_fraction(fraction)
    allowed = int(fraction * bytes_limit)
    budget = allowed - int(bytes_in_use)
    if budget <= 0:
        raise ValueError(
            f"no room for the KV cache: {format_bytes(bytes_in_use)} is in use after the weights loaded, and "
            f"kv_cache_memory_fraction {fraction} allows {format_bytes(allowed)} of the device's "
            f"{format_bytes(bytes_limit)}; "
            f"raise kv_cache_memory_fraction, serve smaller weights (dtype bfloat16, weight_quant), or set "
            f"kv_cache_bytes")
    return budget


def format_bytes(n: int) -> str:
    """``"6.00 GiB"``, ``"2.0 MiB"``: GiB from 1 GiB up, MiB below."""
    return f"{n / 2**30:.2f} GiB" if abs(n) >= 2**30 else f"{n / 2**20:.1f} MiB"


def summary(shape: KVShape, dtype: str, context: int, concurrency: int, block_size: int = 16,
            budget_bytes: int | None = None) -> dict:
    per_token = kv_bytes_per_token(shape, dtype)
    total = kv_bytes(shape, dtype, context, concurrency)
    blocks_per_request = math.ceil(context / block_size)
    out = {
        "num_layers": shape.num_layers,
        "num_kv_heads": shape.num_kv_heads,
        "head_dim": shape.head_dim,
        "kv_dtype": dtype,
        "scale_bytes_per_token": 2 * shape.num_layers * shape.num_kv_heads * SCALE_BYTES.get(dtype, 0),
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


def _config_for_model(model: str, gguf: str | None):
    from runtime.gguf_loader import read_gguf_config
    from runtime.presets import resolve_gguf

    # The header's config as load_gguf builds it (an untied LM head counts in weight_bytes).
    return read_gguf_config(gguf or resolve_gguf(model))


def _shape_for_model(model: str, gguf: str | None) -> KVShape:
    return KVShape.of(_config_for_model(model, gguf))


def weight_bytes(config, dtype: str) -> int:
    """Device bytes of the model's parameters served in ``dtype`` (norm scales stay float32), from the
    parameter shapes alone (``runtime.model_runner.abstract_params``; nothing is loaded or allocated)."""
    import jax
    import numpy as np

    from runtime.model_runner import DTYPES, abstract_params

    leaves = jax.tree.leaves(abstract_params(config, DTYPES[dtype]))
    return sum(int(np.prod(x.shape)) * x.dtype.itemsize for x in leaves)


def device_budget(config, args) -> dict:
    """The KV budget ``--device`` / ``--device-memory-gib`` describe, as the engine would compute it."""
    from runtime.platform import current_platform, device_memory_stats, is_accelerator, resolve_dtype

    if args.device:
        platform = current_platform()
        dtype = resolve_dtype(args.dtype, platform)
        stats = device_memory_stats() if is_accelerator(platform) else None
        if stats is None:  # what the engine does there too
            return {"device": platform, "dtype": dtype, "budget_bytes": DEFAULT_KV_CACHE_BYTES,
                    "budget_source": f"the engine's fixed default on {platform}, which reports no device memory"}
        limit, in_use_now = stats["bytes_limit"], stats["bytes_in_use"]
    else:
        platform, dtype = "hypothetical", resolve_dtype(args.dtype, "gpu")  # an accelerator: bfloat16 by default
        limit, in_use_now = int(args.device_memory_gib * 2**30), 0
    weights = int(args.weights_gib * 2**30) if args.weights_gib is not None else weight_bytes(config, dtype)
    budget = kv_budget_from_memory(limit, in_use_now + weights, args.memory_fraction)
    return {"device": platform, "dtype": dtype, "device_memory_bytes": limit, "weights_bytes": weights,
            "in_use_bytes": in_use_now + weights, "memory_fraction": args.memory_fraction, "budget_bytes": budget,
            "budget_source": f"kv_cache_memory_fraction {args.memory_fraction} x {format_bytes(limit)} - "
                             f"{format_bytes(in_use_now + weights)} in use after the weights load"}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m runtime.kv_calc", description="KV-cache size calculator")
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--gguf", help="read the shape from this GGUF file instead of a preset")
    p.add_argument("--context", type=int, required=True, help="tokens per request")
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--kv-dtype", default="bfloat16", choices=sorted(DTYPE_BYTES),
                   help="KV storage: float32, bfloat16 (float16), or int8 / fp8 (e4m3) with one bfloat16 scale "
                        "per token and kv head")
    p.add_argument("--block-size", type=int, default=16)
    p.add_argument("--budget-gib", type=float, help="also report the blocks and requests this KV budget holds")
    dev = p.add_mutually_exclusive_group()
    dev.add_argument("--device", action="store_true",
                     help="size the KV budget as the engine would on this machine's first device "
                          "(kv_cache_memory_fraction of its memory after the weights; CPU: the fixed default)")
    dev.add_argument("--device-memory-gib", type=float,
                     help="size the KV budget for a device with this much memory (e.g. 141 for an H200)")
    p.add_argument("--weights-gib", type=float,
                   help="with --device / --device-memory-gib: memory the weights take (default: estimated from the "
                        "model's parameter shapes at --dtype)")
    p.add_argument("--memory-fraction", type=float, default=DEFAULT_MEMORY_FRACTION,
                   help="kv_cache_memory_fraction: share of the device's memory the engine may use in all")
    p.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16"],
                   help="weights dtype for the estimate (auto: bfloat16 on an accelerator, float32 on CPU)")
    args = p.parse_args(argv)
    try:
        if args.context < 1 or args.concurrency < 1 or args.block_size < 1:
            raise ValueError("--context, --concurrency and --block-size must be positive")
        if args.budget_gib is not None and args.budget_gib <= 0:
            raise ValueError("--budget-gib must be positive")
        on_device = args.device or args.device_memory_gib is not None
        if on_device and args.budget_gib is not None:
            raise ValueError("--budget-gib is a KV budget already: give it or --device / --device-memory-gib, not both")
        if args.device_memory_gib is not None and args.device_memory_gib <= 0:
            raise ValueError("--device-memory-gib must be positive")
        if args.weights_gib is not None and (args.weights_gib < 0 or not on_device):
            raise ValueError("--weights-gib must be >= 0, with --device or --device-memory-gib")
        check_memory_fraction(args.memory_fraction)
        config = _config_for_model(args.model, args.gguf)
        shape = KVShape.of(config)
        device = device_budget(config, args) if on_device else None
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    budget = None if args.budget_gib is None else int(args.budget_gib * 2**30)
    if device is not None:
        budget = device["budget_bytes"]
    s = summary(shape, args.kv_dtype, args.context, args.concurrency, args.block_size, budget)
    if device is not None:
        s["device"] = device
    print(json.dumps(s))
    scale = SCALE_BYTES.get(args.kv_dtype, 0)
    per_head = (f"({shape.head_dim} dims x {DTYPE_BYTES[args.kv_dtype]} B + {scale} B scale)" if scale
                else f"{shape.head_dim} dims x {DTYPE_BYTES[args.kv_dtype]} B")
    print(f"{args.model}: 2 x {shape.num_layers} layers x {shape.num_kv_heads} kv heads x {per_head} x "
          f"{args.context} tokens x {args.concurrency} requests = {s['kv_gib']} GiB", file=sys.stderr)
    if device is not None:
        print(f"{device['device']} device: KV budget {format_bytes(budget)} ({device['budget_source']}) holds "
              f"{s['blocks_in_budget']} blocks of {args.block_size} tokens: {s['max_concurrency_in_budget']} "
              f"sequences of {args.context} tokens at once", file=sys.stderr)
    elif budget is not None:
        print(f"a {args.budget_gib} GiB budget holds {s['blocks_in_budget']} blocks of {args.block_size} tokens: "
              f"{s['max_concurrency_in_budget']} requests of {args.context} tokens at once", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
