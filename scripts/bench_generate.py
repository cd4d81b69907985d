"""Batch-1 decode speed: this runtime vs Hugging Face transformers ``generate()``, same prompts, one run.

Prints one JSON line: tokens/s of each (median over prompts), the ratio, and the fraction of the
memory-bandwidth roofline each reaches (batch-1 decode reads every weight once per token). The
bandwidth is measured in the same run with a large array copy, so the figure fits this machine.

    python scripts/bench_generate.py [--model smollm2-135m] [--tokens 64] [--dtype float32]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

PROMPTS = [
    "Write a short story about a lighthouse keeper.",
    "Explain how a bicycle stays upright.",
    "List some tips for learning a new language.",
    "Describe the water cycle to a child.",
    "What makes a good cup of coffee?",
]


def measure_bandwidth_gbs() -> float:
    """Host memory bandwidth from a 256 MiB NumPy copy (read + write), best of 5."""
    src = np.ones(64 * 1024 * 1024, np.float32)
    dst = np.empty_like(src)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t)
    return 2 * src.nbytes / best / 1e9


def bench_ours(model: str, dtype: str, n_tokens: int, prompts: list[str]) -> dict:
    from runtime.generate import Generator
    from runtime.model_runner import enable_compilation_cache
    from runtime.request import SamplingParams

    enable_compilation_cache()
    gen = Generator(model, dtype=dtype)
    sp = SamplingParams(max_tokens=n_tokens, ignore_eos=True)
    ids = [gen.encode_prompt(p, chat=True) for p in prompts]
    gen.generate(ids[0], sp)  # warm-up: compiles the prefill and decode programs
    rates, ttfts = [], []
    for prompt_ids in ids:
        _, stats = gen.generate(prompt_ids, sp)
        rates.append(stats.decode_tokens_per_s)
        ttfts.append(stats.ttft_s)
    n_params = sum(int(np.prod(x.shape)) for x in _leaves(gen.params))
    weight_bytes = sum(int(x.size) * x.dtype.itemsize for x in _leaves(gen.params))
    return {"tok_s": statistics.median(rates), "ttft_s": statistics.median(ttfts), "params": n_params,
            "weight_bytes": weight_bytes, "prompt_ids": ids}


def _leaves(tree):
    import jax

    return jax.tree_util.tree_leaves(tree)


def bench_hf(model: str, n_tokens: int, prompt_ids: list[list[int]]) -> dict:
    import torch
    from transformers import AutoModelForCausalLM

    from runtime.presets import resolve_gguf

    path = resolve_gguf(model)
    hf = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    hf.eval()

    def run(ids, n):
        x = torch.tensor([ids])
        t = time.perf_counter()
        with torch.no_grad():
            hf.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n, min_new_tokens=n, do_sample=False,
                        pad_token_id=0)
        return time.perf_counter() - t

    run(prompt_ids[0], 4)  # warm-up
    rates = []
    for ids in prompt_ids:
        first = run(ids, 1)  # prefill + one token
        total = run(ids, n_tokens)
        rates.append((n_tokens - 1) / max(total - first, 1e-9))
    return {"tok_s": statistics.median(rates), "torch_threads": torch.get_num_threads()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--prompts", type=int, default=len(PROMPTS))
    args = p.parse_args(argv)
    from runtime.platform import configure_xla

    configure_xla()
    import jax

    prompts = PROMPTS[: args.prompts]
    bandwidth = measure_bandwidth_gbs()
    print(f"memory bandwidth ~{bandwidth:.1f} GB/s; benchmarking {args.model} ...", file=sys.stderr)
    ours = bench_ours(args.model, args.dtype, args.tokens, prompts)
    print(f"ours: {ours['tok_s']:.1f} tok/s; now HF transformers ...", file=sys.stderr)
    hf = bench_hf(args.model, args.tokens, ours.pop("prompt_ids"))
    roofline = bandwidth * 1e9 / ours["weight_bytes"]  # tokens/s if each step only streamed the weights
    hf_weight_bytes = ours["params"] * 4  # HF runs float32
    result = {
        "benchmark": "batch1_decode",
        "model": args.model,
        "device": jax.default_backend(),
        "dtype": args.dtype,
        "new_tokens": args.tokens,
        "prompts": len(prompts),
        "ours_tok_s": round(ours["tok_s"], 2),
        "hf_tok_s": round(hf["tok_s"], 2),
        "ratio_ours_over_hf": round(ours["tok_s"] / hf["tok_s"], 3),
        "ours_ttft_ms": round(ours["ttft_s"] * 1000, 1),
        "memory_bandwidth_gbs": round(bandwidth, 2),
        "weight_bytes": ours["weight_bytes"],
        "roofline_tok_s": round(roofline, 1),
        "ours_fraction_of_bandwidth": round(ours["tok_s"] * ours["weight_bytes"] / (bandwidth * 1e9), 3),
        "hf_fraction_of_bandwidth": round(hf["tok_s"] * hf_weight_bytes / (bandwidth * 1e9), 3),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
