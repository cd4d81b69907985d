"""``python -m runtime.kv_calc``: the KV-cache size calculator's command line (the arithmetic is
``runtime/core/kv_sizing.py``, the engine's own)::

    python -m runtime.kv_calc --model smollm2-135m --context 32768 --concurrency 64 --kv-dtype bfloat16
    python -m runtime.kv_calc --model smollm2-135m --context 4096 --budget-gib 1 --kv-dtype int8
    python -m runtime.kv_calc --model smollm2-135m --context 8192 --device
    python -m runtime.kv_calc --model gemma3-270m --context 32768 --device-memory-gib 141 --memory-fraction 0.9
"""

from __future__ import annotations

import argparse
import json
import sys

from runtime.api import DEFAULT_MEMORY_FRACTION
from runtime.core.kv_sizing import (
    DEFAULT_KV_CACHE_BYTES,
    DTYPE_BYTES,
    SCALE_BYTES,
    KVShape,
    check_memory_fraction,
    format_bytes,
    kv_budget_from_memory,
    summary,
)


def _config_for_model(model: str, gguf: str | None):
    from runtime.loading.gguf import read_gguf_config
    from runtime.loading.presets import resolve_gguf

    # The header's config as load_gguf builds it (an untied LM head counts in weight_bytes).
    return read_gguf_config(gguf or resolve_gguf(model))


def weight_bytes(config, dtype: str) -> int:
    """Device bytes of the model's parameters served in ``dtype`` (norm scales stay float32), from the
    parameter shapes alone (``runtime.worker.model_runner.abstract_params``; nothing is loaded or allocated)."""
    import jax
    import numpy as np

    from runtime.dtypes import DTYPES
    from runtime.worker.model_runner import abstract_params

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
            return {
                "device": platform,
                "dtype": dtype,
                "budget_bytes": DEFAULT_KV_CACHE_BYTES,
                "budget_source": f"the engine's fixed default on {platform}, which reports no device memory",
            }
        limit, in_use_now = stats["bytes_limit"], stats["bytes_in_use"]
    else:
        platform, dtype = "hypothetical", resolve_dtype(args.dtype, "gpu")  # an accelerator: bfloat16 by default
        limit, in_use_now = int(args.device_memory_gib * 2**30), 0
    weights = int(args.weights_gib * 2**30) if args.weights_gib is not None else weight_bytes(config, dtype)
    budget = kv_budget_from_memory(limit, in_use_now + weights, args.memory_fraction)
    return {
        "device": platform,
        "dtype": dtype,
        "device_memory_bytes": limit,
        "weights_bytes": weights,
        "in_use_bytes": in_use_now + weights,
        "memory_fraction": args.memory_fraction,
        "budget_bytes": budget,
        "budget_source": f"kv_cache_memory_fraction {args.memory_fraction} x {format_bytes(limit)} - "
        f"{format_bytes(in_use_now + weights)} in use after the weights load",
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m runtime.kv_calc", description="KV-cache size calculator")
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--gguf", help="read the shape from this GGUF file instead of a preset")
    p.add_argument("--context", type=int, required=True, help="tokens per request")
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument(
        "--kv-dtype",
        default="bfloat16",
        choices=sorted(DTYPE_BYTES),
        help="KV storage: float32, bfloat16 (float16), or int8 / fp8 (e4m3) with one bfloat16 scale "
        "per token and kv head",
    )
    p.add_argument("--block-size", type=int, default=16)
    p.add_argument("--budget-gib", type=float, help="also report the blocks and requests this KV budget holds")
    dev = p.add_mutually_exclusive_group()
    dev.add_argument(
        "--device",
        action="store_true",
        help="size the KV budget as the engine would on this machine's first device "
        "(kv_cache_memory_fraction of its memory after the weights; CPU: the fixed default)",
    )
    dev.add_argument(
        "--device-memory-gib",
        type=float,
        help="size the KV budget for a device with this much memory (e.g. 141 for an H200)",
    )
    p.add_argument(
        "--weights-gib",
        type=float,
        help="with --device / --device-memory-gib: memory the weights take (default: estimated from the "
        "model's parameter shapes at --dtype)",
    )
    p.add_argument(
        "--memory-fraction",
        type=float,
        default=DEFAULT_MEMORY_FRACTION,
        help="kv_cache_memory_fraction: share of the device's memory the engine may use in all",
    )
    p.add_argument(
        "--tpu",
        action="store_true",
        help="count the TPU cache's layout: each token's row of kv_heads x head_dim padded to whole 128-lane "
        "vregs (runtime.quant.kv.LanePages; implied by --device on a TPU)",
    )
    p.add_argument(
        "--dtype",
        default="auto",
        choices=["auto", "float32", "bfloat16"],
        help="weights dtype for the estimate (auto: bfloat16 on an accelerator, float32 on CPU)",
    )
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
        device = device_budget(config, args) if on_device else None
        tpu = args.tpu or (device is not None and device["device"] == "tpu")
        shape = KVShape.of(config, lane_groups=1 if tpu else 0)
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
    per_head = (
        f"({shape.head_dim} dims x {DTYPE_BYTES[args.kv_dtype]} B + {scale} B scale)"
        if scale
        else f"{shape.head_dim} dims x {DTYPE_BYTES[args.kv_dtype]} B"
    )
    row = f"{shape.num_kv_heads} kv heads x {per_head}"
    if shape.lane_groups:  # the TPU layout: rows (and a page's scales) padded to whole vregs
        scales = shape.scale_lanes(args.block_size)
        row = f"({shape.lanes} lanes x {DTYPE_BYTES[args.kv_dtype]} B" + (
            f" + {scales} x {scale} B scales a page of {args.block_size})" if scale else ")"
        )
    print(
        f"{args.model}: 2 x {shape.num_layers} layers x {row} x "
        f"{args.context} tokens x {args.concurrency} requests = {s['kv_gib']} GiB",
        file=sys.stderr,
    )
    if device is not None:
        print(
            f"{device['device']} device: KV budget {format_bytes(budget)} ({device['budget_source']}) holds "
            f"{s['blocks_in_budget']} blocks of {args.block_size} tokens: {s['max_concurrency_in_budget']} "
            f"sequences of {args.context} tokens at once",
            file=sys.stderr,
        )
    elif budget is not None:
        print(
            f"a {args.budget_gib} GiB budget holds {s['blocks_in_budget']} blocks of {args.block_size} tokens: "
            f"{s['max_concurrency_in_budget']} requests of {args.context} tokens at once",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
