"""KV-cache sizing: how many bytes a context length and a concurrency need, and what a budget holds.

    KV bytes = 2 (K and V) x layers x kv_heads x (head_dim x bytes per element + scale bytes)
               x tokens x concurrency

Scale bytes are 0 for a float cache (float32, bfloat16) and 2 for an 8-bit one (int8, fp8: one
bfloat16 scale per token and kv head, ``runtime/kv_quant.py``). The engine allocates its cache with
``blocks_for_budget`` and ``kv_bytes_per_block`` from here, so the CLI's figures are exactly what the
engine allocates, scales included (a test checks it).

    python -m runtime.kv_calc --model smollm2-135m --context 32768 --concurrency 64 --kv-dtype bfloat16
    python -m runtime.kv_calc --model smollm2-135m --context 4096 --budget-gib 1 --kv-dtype int8
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "int8": 1, "fp8": 1}
SCALE_BYTES = {"int8": 2, "fp8": 2}  # per token and kv head (a bfloat16 scale); float caches have none


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


def _shape_for_model(model: str, gguf: str | None) -> KVShape:
    from runtime.config import ModelConfig
    from runtime.gguf_loader import read_gguf_metadata
    from runtime.presets import resolve_gguf

    path = gguf or resolve_gguf(model)
    return KVShape.of(ModelConfig.from_gguf_metadata(read_gguf_metadata(path), source=str(path)))


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
    args = p.parse_args(argv)
    try:
        if args.context < 1 or args.concurrency < 1 or args.block_size < 1:
            raise ValueError("--context, --concurrency and --block-size must be positive")
        if args.budget_gib is not None and args.budget_gib <= 0:
            raise ValueError("--budget-gib must be positive")
        shape = _shape_for_model(args.model, args.gguf)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    budget = None if args.budget_gib is None else int(args.budget_gib * 2**30)
    s = summary(shape, args.kv_dtype, args.context, args.concurrency, args.block_size, budget)
    print(json.dumps(s))
    scale = SCALE_BYTES.get(args.kv_dtype, 0)
    per_head = (f"({shape.head_dim} dims x {DTYPE_BYTES[args.kv_dtype]} B + {scale} B scale)" if scale
                else f"{shape.head_dim} dims x {DTYPE_BYTES[args.kv_dtype]} B")
    print(f"{args.model}: 2 x {shape.num_layers} layers x {shape.num_kv_heads} kv heads x {per_head} x "
          f"{args.context} tokens x {args.concurrency} requests = {s['kv_gib']} GiB", file=sys.stderr)
    if budget is not None:
        print(f"a {args.budget_gib} GiB budget holds {s['blocks_in_budget']} blocks of {args.block_size} tokens: "
              f"{s['max_concurrency_in_budget']} requests of {args.context} tokens at once", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
