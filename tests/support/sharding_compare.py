"""Run one model through the real LLMEngine on one device and tensor-parallel on N; print JSON.

    python tests/support/sharding_compare.py --gguf tiny.gguf --tp 2 4 [--kv-dtype int8] [--backend xla]
    python tests/support/sharding_compare.py --model smollm2-135m --tp 3

Run as its own process because the number of (emulated) CPU devices is fixed when JAX starts: this
script sets ``XLA_FLAGS=--xla_force_host_platform_device_count=max(tp)`` before importing JAX (a
pytest worker has already started JAX with one device). Each engine serves the same prompts with
continuous batching (several requests, small token budget so prompts are chunked and decodes share
steps with prefills), greedy; then ``LLMEngine.score`` gives teacher-forced logits of one prompt plus
its answer through the same engine (model, paged KV cache, attention). The JSON holds, per
configuration: the tokens of every request, the logits, and for sharded engines how the parameters
and the KV cache are laid out (sharding specs and per-device shard shapes), so the test can check
that the sharded run really was sharded.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

PROMPTS = [
    "The quick brown fox jumps over the lazy dog because",
    "hello there",
    "in the beginning was",
    "a b c d e f g h i j k l m n o p q r s t u v w x y z and then the alphabet starts again with",
    "What is the capital of France?",
]
MAX_TOKENS = [12, 7, 16, 5, 10]


def set_device_count(n: int) -> None:
    flags = os.environ.get("XLA_FLAGS", "")
    flags = " ".join(f for f in flags.split() if not f.startswith("--xla_force_host_platform_device_count"))
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()


def layout(engine) -> dict:
    """Specs and per-device shard shapes of a few parameters and of layer 0's KV cache."""
    import jax

    params = engine.runner.params
    k_pages = engine.runner.kv_caches[0][0]
    leaves = {
        "layers_0/attn/q/kernel": params["layers_0"]["attn"]["q"]["kernel"],
        "layers_0/attn/k/kernel": params["layers_0"]["attn"]["k"]["kernel"],
        "layers_0/attn/o/kernel": params["layers_0"]["attn"]["o"]["kernel"],
        "layers_0/mlp/up/kernel": params["layers_0"]["mlp"]["up"]["kernel"],
        "layers_0/mlp/down/kernel": params["layers_0"]["mlp"]["down"]["kernel"],
        "layers_0/attn_norm/scale": params["layers_0"]["attn_norm"]["scale"],
        "embed": params["embed"],
    }
    for name, x in jax.tree_util.tree_leaves_with_path(k_pages):
        leaves["kv/layer0/k" + "".join(str(p) for p in name)] = x

    def describe(x):
        return {
            "shape": list(x.shape),
            "spec": [None if s is None else str(s) for s in x.sharding.spec],
            "devices": len(x.sharding.device_set),
            "shard_shapes": sorted({tuple(s.data.shape) for s in x.addressable_shards}),
        }

    return {name: describe(x) for name, x in leaves.items()}


def run(args, tp: int, loaded, *, kv_dtype: str | None = None, score_only: list[int] | None = None) -> dict:
    """One engine's outputs: ``kv_dtype`` overrides ``--kv-dtype``; with ``score_only`` (token ids) it serves
    nothing and only scores those ids."""
    from runtime.api import EngineConfig, SamplingParams
    from runtime.engine.llm_engine import LLMEngine

    cfg = EngineConfig(
        model=args.model,
        gguf_path=args.gguf,
        tensor_parallel=tp,
        attention_backend=args.backend,
        dtype=args.dtype,
        kv_dtype=kv_dtype or args.kv_dtype,
        num_blocks=48,
        block_size=8,
        max_num_seqs=args.max_num_seqs,
        max_num_batched_tokens=16,
        max_model_len=128,
        compilation_cache=args.compilation_cache,
        enable_prefix_caching=False,
    )
    t0 = time.perf_counter()
    engine = LLMEngine(cfg, loaded=loaded)  # the same host weights for every engine (loaded once)
    if score_only is not None:
        return {"logits": engine.score(score_only, chunk=16).tolist()}
    params = [SamplingParams(max_tokens=n, temperature=0.0, ignore_eos=True) for n in MAX_TOKENS]
    outs = engine.generate(PROMPTS[: args.prompts], params[: args.prompts])
    tokens = [o.token_ids for o in outs]
    scored = engine.encode(PROMPTS[0]) + tokens[0]
    logits = engine.score(scored, chunk=16)
    result = {
        "scored": scored,
        "tokens": tokens,
        "logits": logits.tolist(),
        "steps": engine.num_steps,
        "seconds": round(time.perf_counter() - t0, 2),
    }
    if tp > 1:
        result["layout"] = layout(engine)
        result["plan"] = engine.tensor_parallel.describe()
        result["attention_shapes"] = attention_shapes(engine)
        if args.collectives:
            result["collectives"] = collectives(engine)
    return result


def attention_shapes(engine) -> list[dict]:
    """The shapes an attention function wrapped by ``shard_attention`` is traced with (per device)."""
    import jax
    import jax.numpy as jnp

    tp, seen = engine.tensor_parallel, []

    def spy_factory(*, sm_scale, sliding_window=None, soft_cap=None):
        def attend(q, k_pages, v_pages, md):
            seen.append({"q": list(q.shape), "k_pages": list(jax.tree.leaves(k_pages)[0].shape)})
            return q

        return attend

    c, pages = tp.config, engine.runner.kv_caches[0][0]
    q = jnp.arange(16 * c.num_heads * c.head_dim, dtype=jnp.float32).reshape(16, c.num_heads, c.head_dim)
    out = jax.jit(tp.shard_attention(spy_factory)(sm_scale=1.0))(
        q, pages, pages, engine.runner._dummy_inputs(16, 2).metadata
    )
    assert (out == q).all(), "the heads did not come back in order"
    return seen


COLLECTIVES = ("all-reduce", "all-gather", "all-to-all", "collective-permute", "reduce-scatter")


def collectives(engine) -> dict:
    """Cross-device ops in the compiled step programs of one bucket (the model's and the sampler's, as the
    runner runs them): a count per kind, and the result shape of every op that moves data between devices
    other than an all-reduce (what was gathered)."""
    import jax

    runner = engine.runner
    T, S = runner.token_buckets[0], runner.seq_buckets[-1]
    inputs = runner._dummy_inputs(T, S)
    model = runner._logits.lower(runner.params, runner.kv_caches, inputs).compile()
    out = runner._logits.eval_shape(runner.params, runner.kv_caches, inputs)[0]
    logits = jax.ShapeDtypeStruct(out.shape, out.dtype, sharding=model.output_shardings[0])  # as the runner does
    sampler = runner._sample.lower(logits, inputs.sampling, runner.sampler_state)
    hlo = model.as_text() + sampler.compile().as_text()
    counts = {k: len(re.findall(rf"\b{k}(?:-start)?\(", hlo)) for k in COLLECTIVES}
    moved = [
        [int(d) for d in dims.split(",") if d]
        for dims in re.findall(r"= \w+\[([\d,]*)\]\S* (?:all-gather|all-to-all|collective-permute)(?:-start)?\(", hlo)
    ]
    return {"counts": counts, "moved_shapes": moved, "bucket": [T, S]}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--gguf")
    p.add_argument("--tp", type=int, nargs="+", required=True)
    p.add_argument("--dtype", default="float32")
    p.add_argument("--kv-dtype")
    p.add_argument("--backend", default="xla")
    p.add_argument("--compilation-cache", action="store_true")
    p.add_argument("--max-num-seqs", type=int, default=2)
    p.add_argument("--prompts", type=int, default=4, help="serve the first N prompts")
    p.add_argument("--collectives", action="store_true", help="count the cross-device ops of the sharded step")
    p.add_argument(
        "--float-cache-reference",
        action="store_true",
        help="also score the single-device engine's sequence with an unquantized (--dtype) KV cache",
    )
    args = p.parse_args()
    set_device_count(max(args.tp))
    from runtime.platform import configure_xla

    configure_xla()
    import jax

    from runtime.loading.gguf import load_gguf
    from runtime.loading.presets import resolve_gguf

    loaded = load_gguf(args.gguf or resolve_gguf(args.model))
    out = {"devices": len(jax.devices()), "single": run(args, 1, loaded)}
    if args.float_cache_reference:
        out["single_float_cache"] = run(args, 1, loaded, kv_dtype=args.dtype, score_only=out["single"]["scored"])
    for tp in args.tp:
        out[f"tp{tp}"] = run(args, tp, loaded)
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
