"""KV-cache quantization: concurrent requests in one KV byte budget, decode speed and quality, per KV dtype.

For SmolLM2-135M and one KV byte budget, each KV dtype (float32, the CPU engine's default; bfloat16;
int8 and fp8, 8-bit codes with one bfloat16 scale per token and kv head) gets one engine on the same
weights, and:

1. capacity: the blocks the engine really allocated for the budget (``LLMEngine.num_blocks``, the
   device arrays' bytes checked against the budget) and the most requests of ``prompt + output``
   tokens whose blocks all fit at once; then a real run of that many requests (distinct random
   prompts, prefix caching off) with ``max_num_seqs`` = that figure, showing they all run at once
   (peak ``num_running``) with no preemption, and its decode throughput;
2. decode at equal batch: the same run at the float32 figure's batch, so the per-step cost of each
   format is compared like for like;
3. quality against the float32 cache, teacher-forced through each engine's own paged cache
   (``LLMEngine.score``: later chunks read earlier ones back from the quantized pages) on a few
   real texts: greedy next-token agreement (argmax per position) and max / mean |logit difference|;
   and free-running greedy continuations: tokens until the first divergence from float32.

Decode steps also report the bytes they stream (weights + the KV they read) as a fraction of this
machine's measured copy bandwidth. One JSON object (stdout and ``--out``).

    python scripts/bench_kv_quant.py [--budget-mib 48] [--prompt-len 64] [--output-len 64] \
        [--kv-dtypes float32,bfloat16,int8,fp8] [--out out/bench_kv_quant.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TEXTS = [
    "The history of tea begins in southwest China, where the leaves were first used as a medicine. "
    "Over centuries it became an everyday drink, carried along trade routes to Tibet, Central Asia and "
    "eventually Europe, where the Dutch and then the British built vast businesses around it. Today tea is "
    "grown on several continents, and each region has its own way of picking, drying and brewing the leaves.",
    "def merge_sort(items):\n    if len(items) <= 1:\n        return items\n    mid = len(items) // 2\n"
    "    left = merge_sort(items[:mid])\n    right = merge_sort(items[mid:])\n    out = []\n"
    "    i = j = 0\n    while i < len(left) and j < len(right):\n        if left[i] <= right[j]:\n"
    "            out.append(left[i]); i += 1\n        else:\n            out.append(right[j]); j += 1\n",
    "Honeybees live in colonies of tens of thousands of workers, a few hundred drones and a single queen. "
    "Workers forage for nectar and pollen, build wax comb, feed the larvae and guard the entrance. They "
    "tell each other where flowers are with a waggle dance whose angle points at the sun and whose length "
    "says how far away the food is.",
]
CHATS = [
    "Give me three tips for better sleep.",
    "Explain how a bridge carries its load.",
    "Write a short poem about autumn leaves.",
    "What is the boiling point of water in Fahrenheit?",
]


def emit(record: dict) -> None:
    print(json.dumps(record), file=sys.stderr, flush=True)


def quality_ids(engine, n_tokens: int) -> list[list[int]]:
    """Each text, repeated if short, cut to exactly ``n_tokens`` (one score chunk: one compile)."""
    out = []
    for text in TEXTS:
        ids = engine.encode(text)
        while len(ids) < n_tokens:
            ids = ids + engine.encode(" " + text)
        out.append(ids[:n_tokens])
    return out


def run_batch(engine, n: int, prompt_len: int, output_len: int, seed: int) -> dict:
    """``n`` requests of distinct random prompts at once; peak concurrency and decode throughput.

    Decode speed is the median over full-batch decode steps (all ``n`` running, one token each):
    the median drops the step that compiles the decode bucket on its first use.
    """
    from runtime.api import SamplingParams

    rng = np.random.default_rng(seed)
    vocab = engine.model_config.vocab_size
    ids = [
        engine.add_request(
            rng.integers(100, vocab, prompt_len).tolist(), SamplingParams(max_tokens=output_len, ignore_eos=True)
        )
        for _ in range(n)
    ]
    got = {i: 0 for i in ids}
    peak, preempt0, steps, decode_s = 0, engine.stats().num_preemptions_total, 0, []
    t0 = time.perf_counter()
    while engine.has_unfinished_requests():
        all_started = all(v > 0 for v in got.values())
        t = time.perf_counter()
        outs = engine.step()
        dt = time.perf_counter() - t
        steps += 1
        for o in outs:
            got[o.request_id] += len(o.token_ids)
        if all_started and len(outs) == n and all(len(o.token_ids) == 1 for o in outs):
            decode_s.append(dt)
        peak = max(peak, engine.stats().num_running)
    elapsed = time.perf_counter() - t0
    assert all(v == output_len for v in got.values()), got
    step = float(np.median(decode_s)) if decode_s else None
    return {
        "requests": n,
        "peak_running": peak,
        "preemptions": engine.stats().num_preemptions_total - preempt0,
        "steps": steps,
        "elapsed_s": round(elapsed, 2),
        "full_batch_decode_steps": len(decode_s),
        "decode_ms_per_step": round(1000 * step, 1) if step else None,
        "decode_tok_s": round(n / step, 1) if step else None,
    }


def stream_fraction(
    run: dict, weight_bytes: int, kv_bytes_per_token: int, context_mean: float, bandwidth: float
) -> float | None:
    """(weights + the KV every running request reads) per decode step / step time, over the bandwidth."""
    if not run["decode_ms_per_step"]:
        return None
    per_step = weight_bytes + run["requests"] * context_mean * kv_bytes_per_token
    return round(per_step / (run["decode_ms_per_step"] / 1000) / bandwidth, 3)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--budget-mib", type=float, default=48.0, help="KV byte budget (MiB), the same for every dtype")
    p.add_argument("--prompt-len", type=int, default=64)
    p.add_argument("--output-len", type=int, default=64)
    p.add_argument("--block-size", type=int, default=16)
    p.add_argument("--kv-dtypes", default="float32,bfloat16,int8,fp8")
    p.add_argument("--quality-tokens", type=int, default=128)
    p.add_argument("--greedy-tokens", type=int, default=32)
    p.add_argument("--out", default="out/bench_kv_quant.json")
    args = p.parse_args(argv)

    from runtime.platform import configure_xla, cpu_info

    configure_xla()
    import jax

    from runtime.api import EngineConfig, SamplingParams
    from runtime.core.kv_sizing import KVShape, blocks_for_budget, kv_bytes_per_token, max_concurrent_requests
    from runtime.engine.llm_engine import LLMEngine
    from runtime.loading.gguf import load_gguf
    from runtime.loading.presets import resolve_gguf
    from runtime.quant.kv import kv_dtype_support_error
    from scripts.bench_engine import measure_limits

    limits = measure_limits()
    bandwidth = limits["bandwidth_gbs"] * 1e9
    loaded = load_gguf(resolve_gguf("smollm2-135m"))
    shape = KVShape.of(loaded.config)
    budget = int(args.budget_mib * 2**20)
    length = args.prompt_len + args.output_len
    blocks_per_request = math.ceil(length / args.block_size)
    dtypes = args.kv_dtypes.split(",")
    result: dict = {
        "bench": "kv_quant",
        "cpu": cpu_info(),
        "model": "smollm2-135m",
        "device": jax.default_backend(),
        "kv_budget_bytes": budget,
        "request_tokens": length,
        "prompt_len": args.prompt_len,
        "output_len": args.output_len,
        "block_size": args.block_size,
        "blocks_per_request": blocks_per_request,
        "baseline": "float32 (the engine's default KV dtype on CPU: kv_dtype follows dtype)",
        "limits": {k: round(v, 2) for k, v in limits.items()},
        "kv_dtypes": {},
    }
    skipped = {}
    for d in dtypes:
        why = kv_dtype_support_error(d, "xla") if d in ("int8", "fp8") else None
        if why:
            skipped[d] = why
    dtypes = [d for d in dtypes if d not in skipped]
    result["skipped"] = skipped
    same_batch = max_concurrent_requests(shape, "float32", args.block_size, budget, length)
    quality_ref = greedy_ref = None

    for d in dtypes:
        figure = max_concurrent_requests(shape, d, args.block_size, budget, length)
        engine = LLMEngine(
            EngineConfig(
                kv_dtype=d,
                kv_cache_bytes=budget,
                block_size=args.block_size,
                max_num_seqs=max(figure, same_batch),
                max_num_batched_tokens=256,
                max_model_len=max(length, args.quality_tokens + args.greedy_tokens),
                enable_prefix_caching=False,
            ),
            loaded=loaded,
        )
        allocated = engine.runner.kv_cache_bytes()
        assert engine.num_blocks == blocks_for_budget(shape, d, args.block_size, budget)
        assert allocated <= budget, (allocated, budget)
        assert (engine.num_blocks - 1) // blocks_per_request == figure
        rec = {
            "kv_bytes_per_token": kv_bytes_per_token(shape, d),
            "num_blocks": engine.num_blocks,
            "kv_bytes_allocated": allocated,
            "max_concurrent_requests": figure,
        }
        t = time.perf_counter()

        # Quality first (score needs an idle engine), through this engine's own cache.
        qids = quality_ids(engine, args.quality_tokens)
        logits = [engine.score(ids, chunk=args.quality_tokens) for ids in qids]
        prompts = [[{"role": "user", "content": c}] for c in CHATS]
        greedy = [o.token_ids for o in engine.generate(prompts, SamplingParams(max_tokens=args.greedy_tokens))]
        if quality_ref is None:
            quality_ref, greedy_ref = logits, greedy
        diffs = [np.abs(a - b) for a, b in zip(logits, quality_ref)]
        agree = [float((a.argmax(-1) == b.argmax(-1)).mean()) for a, b in zip(logits, quality_ref)]
        first_div = []
        for g, r in zip(greedy, greedy_ref):
            n = next((i for i, (x, y) in enumerate(zip(g, r)) if x != y), min(len(g), len(r)))
            first_div.append(n if (n < min(len(g), len(r)) or len(g) != len(r)) else None)
        rec["quality_vs_float32"] = {
            "teacher_forced_positions": sum(len(x) for x in qids),
            "greedy_next_token_agreement": round(float(np.mean(agree)), 4),
            "greedy_next_token_agreement_per_text": [round(a, 4) for a in agree],
            "max_abs_logit_diff": round(float(max(x.max() for x in diffs)), 4),
            "mean_abs_logit_diff": round(float(np.mean([x.mean() for x in diffs])), 5),
            "greedy_continuations_identical": sum(x is None for x in first_div),
            "greedy_continuations": len(first_div),
            "first_divergence_token": first_div,
        }
        emit({"kv_dtype": d, "phase": "quality", **rec["quality_vs_float32"]})

        # Equal batch (the float32 figure), then this dtype's own maximum.
        rec["decode_at_float32_batch"] = run_batch(engine, same_batch, args.prompt_len, args.output_len, seed=1)
        emit({"kv_dtype": d, "phase": "same_batch", **rec["decode_at_float32_batch"]})
        rec["max_concurrency_run"] = run = run_batch(engine, figure, args.prompt_len, args.output_len, seed=2)
        emit({"kv_dtype": d, "phase": "max_concurrency", **run})
        assert run["peak_running"] == figure and run["preemptions"] == 0, run
        weight_bytes = sum(int(x.nbytes) for x in jax.tree_util.tree_leaves(engine.runner.params))
        context_mean = args.prompt_len + args.output_len / 2
        for key in ("decode_at_float32_batch", "max_concurrency_run"):
            rec[key]["stream_fraction_of_bandwidth"] = stream_fraction(
                rec[key], weight_bytes, rec["kv_bytes_per_token"], context_mean, bandwidth
            )
        rec["seconds"] = round(time.perf_counter() - t, 1)
        result["kv_dtypes"][d] = rec
        del engine
        gc.collect()

    base = result["kv_dtypes"].get("float32", {}).get("max_concurrent_requests")
    bf16 = result["kv_dtypes"].get("bfloat16", {}).get("max_concurrent_requests")
    result["concurrency_ratio_vs_float32"] = (
        {d: round(r["max_concurrent_requests"] / base, 2) for d, r in result["kv_dtypes"].items()} if base else None
    )
    result["concurrency_ratio_vs_bfloat16"] = (
        {d: round(r["max_concurrent_requests"] / bf16, 2) for d, r in result["kv_dtypes"].items()} if bf16 else None
    )
    result["bytes_per_token_ratio_vs_float32"] = {
        d: round(kv_bytes_per_token(shape, "float32") / kv_bytes_per_token(shape, d), 3) for d in dtypes
    }
    result["bytes_per_token_ratio_vs_bfloat16"] = {
        d: round(kv_bytes_per_token(shape, "bfloat16") / kv_bytes_per_token(shape, d), 3) for d in dtypes
    }
    result["target"] = {"int8_concurrency_vs_float32_at_least": 1.9}
    text = json.dumps(result, indent=1)
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
