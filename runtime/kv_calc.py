"""KV-cache sizing: how many bytes a context length and a concurrency need, and what a budget holds.

    KV bytes = 2 (K and V) x layers x kv_heads x head_dim x tokens x concurrency x bytes per element

The engine allocates its cache with ``blocks_for_budget`` and ``kv_bytes_per_block`` from here, so
the CLI's figures are exactly what the engine allocates (a test checks it).

    python -m runtime.kv_calc --model smollm2-135m --context 32768 --concurrency 64 --kv-dtype bfloat16
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


@dataclass(frozen=True)
class KVShape:
    num_layers: int
    num_kv_heads: int
    head_dim: int

    @classmethod
    def of(cls, config) -> "KVShape":
        return cls(config.num_layers, config.num_kv_heads, config.head_dim)


def kv_bytes_per_token(shape: KVShape, dtype: str) -> int:
    return 2 * shape.num_layers * shape.num_kv_heads * shape.head_dim * DTYPE_BYTES[dtype]


def kv_bytes(shape: KVShape, dtype: str, tokens: int, concurrency: int = 1) -> int:
    return kv_bytes_per_token(shape, dtype) * tokens * concurrency


def kv_bytes_per_block(shape: KVShape, dtype: str, block_size: int) -> int:
    return kv_bytes_per_token(shape, dtype) * block_size


def blocks_for_budget(shape: KVShape, dtype: str, block_size: int, budget_bytes: int) -> int:
    """Blocks that fit the budget, the null block (id 0) included."""
    return budget_bytes // kv_bytes_per_block(shape, dtype, block_size)


def summary(shape: KVShape, dtype: str, context: int, concurrency: int, block_size: int = 16) -> dict:
    per_token = kv_bytes_per_token(shape, dtype)
    total = kv_bytes(shape, dtype, context, concurrency)
    blocks_per_request = math.ceil(context / block_size)
    return {
        "num_layers": shape.num_layers,
        "num_kv_heads": shape.num_kv_heads,
        "head_dim": shape.head_dim,
        "kv_dtype": dtype,
        "bytes_per_token": per_token,
        "context": context,
        "concurrency": concurrency,
        "kv_bytes": total,
        "kv_gib": round(total / 2**30, 3),
        "block_size": block_size,
        "blocks_needed": blocks_per_request * concurrency + 1,  # + the null block
    }


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
    p.add_argument("--kv-dtype", default="bfloat16", choices=sorted(DTYPE_BYTES))
    p.add_argument("--block-size", type=int, default=16)
    args = p.parse_args(argv)
    try:
        if args.context < 1 or args.concurrency < 1 or args.block_size < 1:
            raise ValueError("--context, --concurrency and --block-size must be positive")
        shape = _shape_for_model(args.model, args.gguf)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    s = summary(shape, args.kv_dtype, args.context, args.concurrency, args.block_size)
    print(json.dumps(s))
    print(
        f"{args.model}: 2 x {shape.num_layers} layers x {shape.num_kv_heads} kv heads x {shape.head_dim} dims x "
        f"{args.context} tokens x {args.concurrency} requests x {DTYPE_BYTES[args.kv_dtype]} B = {s['kv_gib']} GiB",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
