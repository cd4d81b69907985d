"""Batch-1 decode speed: this runtime vs llama.cpp and Hugging Face transformers ``generate()``, same
prompts (the same token ids), one run.

Prints one JSON line: tokens/s of each (median over prompts), the ratios, and the fraction of the
memory-bandwidth roofline each reaches (batch-1 decode reads every weight once per token). Bandwidth is
measured in the same run the way decode uses it: a streaming read (XLA's float32 matrix-vector product
over 256 MiB, ``read_bandwidth_gbs``; the roofline figures use it); the older copy figure (read + write)
is kept as ``copy_bandwidth_gbs``.

llama.cpp (``llama-cpp-python``, the ``bench`` extra: ``pip install -e '.[bench]'``, a 6-minute build
from source here) runs the same GGUF file, as it is (SmolLM2: Q4_1 + Q8_0), with ``--llama-threads``
threads; its decode rate comes from llama.cpp's own counters (``llama_perf_context``: tokens and time of
single-token evals), prompt by prompt between our modes, so machine load hits both alike.

Weight-only quantization (``--weight-quant``, default ``none,int8,int4``): one Generator per mode,
loaded side by side and run on the same prompts, interleaved prompt by prompt so a change in machine
load hits every mode alike. ``weight_quant`` in the JSON has, per mode, decode tok/s, the ratio to
float32 (``none``), the weight bytes a decode token reads and the fraction of bandwidth reached. The
top-level ``ours_*`` figures are the ``none`` (unquantized) run; HF runs float32 (skip it: ``--no-hf``).

    python scripts/bench_generate.py [--model smollm2-135m] [--tokens 64] [--dtype float32]
                                     [--weight-quant none,int8,int4,gguf] [--weight-quant-group 64]
                                     [--no-hf] [--no-llama-cpp] [--llama-threads 2]
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


def measure_read_bandwidth_gbs() -> float:
    """Streaming read: a jitted float32 [65536, 1024] . [1024] product (XLA's threads), best of 7: the
    access pattern of a batch-1 decode step, which reads each weight once and writes almost nothing."""
    import jax
    import jax.numpy as jnp

    m = jnp.ones((64 * 1024, 1024), jnp.float32)
    v = jnp.ones((1024,), jnp.float32)
    f = jax.jit(lambda m, v: m @ v)
    f(m, v).block_until_ready()
    best = float("inf")
    for _ in range(7):
        t = time.perf_counter()
        f(m, v).block_until_ready()
        best = min(best, time.perf_counter() - t)
    return m.nbytes / best / 1e9


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


def bench_ours(
    model: str,
    dtype: str,
    n_tokens: int,
    prompts: list[str],
    modes: list[str] = ("none",),
    group: int = 64,
    peers: dict | None = None,
) -> dict[str, dict]:
    """Per weight-quant mode: median decode tok/s and TTFT over the prompts, weight bytes, the greedy
    tokens of each prompt; prompt ids. ``peers``: {name: make(prompt ids of the warm-up) -> run(prompt ids,
    n_tokens) -> (tok/s, greedy token ids)}, run prompt by prompt after our modes; their medians and
    tokens come back under ``peers``."""
    from runtime.api import SamplingParams
    from runtime.engine.offline import Generator
    from runtime.worker.model_runner import enable_compilation_cache

    enable_compilation_cache()
    gens = {mode: Generator(model, dtype=dtype, weight_quant=mode, weight_quant_group=group) for mode in modes}
    sp = SamplingParams(max_tokens=n_tokens, ignore_eos=True)
    ids = [gens[modes[0]].encode_prompt(p, chat=True) for p in prompts]
    for gen in gens.values():
        gen.generate(ids[0], sp)  # warm-up: compiles the prefill and decode programs (and builds the kernel)
    runners = {name: make() for name, make in (peers or {}).items()}
    for run in runners.values():
        run(ids[0], 4)  # warm-up
    rates = {mode: [] for mode in modes}
    ttfts = {mode: [] for mode in modes}
    tokens = {mode: [] for mode in modes}
    peer_rates = {name: [] for name in runners}
    peer_tokens = {name: [] for name in runners}
    for prompt_ids in ids:  # interleaved: every mode and peer sees the same machine load
        for mode, gen in gens.items():
            _, stats = gen.generate(prompt_ids, sp)
            rates[mode].append(stats.decode_tokens_per_s)
            ttfts[mode].append(stats.ttft_s)
            tokens[mode].append(list(stats.token_ids))
        for name, run in runners.items():
            rate, toks = run(prompt_ids, n_tokens)
            peer_rates[name].append(rate)
            peer_tokens[name].append(toks)
    out = {}
    for mode, gen in gens.items():
        out[mode] = {
            "tok_s": statistics.median(rates[mode]),
            "ttft_s": statistics.median(ttfts[mode]),
            "weight_bytes": sum(int(x.size) * x.dtype.itemsize for x in _leaves(gen.params)),
            "weight_bytes_per_token": _bytes_per_decode_token(gen),
            "tokens": tokens[mode],
        }
    n_params = sum(int(np.prod(x.shape)) for x in _leaves(gens["none"].params)) if "none" in gens else None
    peers_out = {
        name: {"tok_s": statistics.median(r), "tok_s_runs": [round(x, 1) for x in r], "tokens": peer_tokens[name]}
        for name, r in peer_rates.items()
    }
    return {"modes": out, "params": n_params, "prompt_ids": ids, "peers": peers_out}


def llama_cpp_runner(model: str, threads: int):
    """``make()`` for bench_ours' peers: llama.cpp on the same GGUF file. ``run(ids, n)`` evaluates the
    prompt, then n - 1 greedy single-token evals, and returns llama.cpp's own decode rate
    (``n_eval / t_eval``; the prompt's eval is counted apart, as ``n_p_eval``)."""

    def make():
        import llama_cpp

        from runtime.loading.presets import resolve_gguf

        llm = llama_cpp.Llama(
            model_path=str(resolve_gguf(model)), n_threads=threads, n_ctx=1024, n_batch=512, verbose=False
        )

        def run(ids, n):
            llm.reset()
            llama_cpp.llama_perf_context_reset(llm._ctx.ctx)
            llm.eval(list(ids))
            out = []
            for _ in range(n - 1):
                out.append(int(llm.sample(temp=0.0)))
                llm.eval([out[-1]])
            out.append(int(llm.sample(temp=0.0)))
            perf = llama_cpp.llama_perf_context(llm._ctx.ctx)
            return (1000.0 * perf.n_eval / perf.t_eval_ms if perf.t_eval_ms else 0.0), out

        return run

    return make


def _bytes_per_decode_token(gen) -> int:
    """Weight bytes one decode step reads: everything, except that an untied embedding table is only
    looked up (one row); a tied one is also the LM head, read whole."""
    total = sum(int(x.size) * x.dtype.itemsize for x in _leaves(gen.params))
    if gen.config.tie_word_embeddings:
        return total
    embed = _leaves(gen.params["embed"])
    return (
        total
        - sum(int(x.size) * x.dtype.itemsize for x in embed)
        + sum(int(x[0].size) * x.dtype.itemsize for x in embed)
    )


def _leaves(tree):
    import jax

    return jax.tree_util.tree_leaves(tree)


def bench_hf(model: str, n_tokens: int, prompt_ids: list[list[int]]) -> dict:
    import torch
    from transformers import AutoModelForCausalLM

    from runtime.loading.presets import resolve_gguf

    path = resolve_gguf(model)
    hf = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    hf.eval()

    def run(ids, n):
        x = torch.tensor([ids])
        t = time.perf_counter()
        with torch.no_grad():
            hf.generate(
                x,
                attention_mask=torch.ones_like(x),
                max_new_tokens=n,
                min_new_tokens=n,
                do_sample=False,
                pad_token_id=0,
            )
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
    p.add_argument(
        "--weight-quant",
        default="none,int8,int4,gguf",
        help="comma-separated weight-only quantization modes to compare (none = float weights)",
    )
    p.add_argument("--weight-quant-group", type=int, default=64, help="int4 group size (32, 64 or 128)")
    p.add_argument("--no-hf", action="store_true", help="skip the Hugging Face transformers baseline")
    p.add_argument("--no-llama-cpp", action="store_true", help="skip the llama.cpp peer")
    p.add_argument("--llama-threads", type=int, default=2, help="llama.cpp threads (this machine has 2 cores)")
    args = p.parse_args(argv)
    modes = [m.strip() for m in args.weight_quant.split(",") if m.strip()]
    from runtime.api import WEIGHT_QUANT_MODES

    bad = [m for m in modes if m not in WEIGHT_QUANT_MODES]
    if not modes or bad:
        p.error(f"--weight-quant takes modes from {', '.join(WEIGHT_QUANT_MODES)}; got {args.weight_quant!r}")
    from runtime.platform import configure_xla, cpu_info

    configure_xla()
    import jax

    prompts = PROMPTS[: args.prompts]
    copy_bandwidth = measure_bandwidth_gbs()
    bandwidth = measure_read_bandwidth_gbs()
    peers, llama_note = {}, None
    if not args.no_llama_cpp:
        try:
            import llama_cpp  # noqa: F401

            peers[f"llama_cpp_{args.llama_threads}t"] = llama_cpp_runner(args.model, args.llama_threads)
        except ImportError:
            llama_note = "llama-cpp-python is not installed (pip install -e '.[bench]')"
            print(f"llama.cpp peer skipped: {llama_note}", file=sys.stderr)
    print(
        f"streaming read ~{bandwidth:.1f} GB/s (copy {copy_bandwidth:.1f}); benchmarking {args.model} "
        f"({', '.join(modes + list(peers))}) ...",
        file=sys.stderr,
    )
    ours = bench_ours(args.model, args.dtype, args.tokens, prompts, modes, args.weight_quant_group, peers)
    per_mode = ours["modes"]
    base = per_mode.get("none")
    quant = {}
    for mode, r in per_mode.items():
        quant[mode] = {
            "tok_s": round(r["tok_s"], 2),
            "ratio_vs_float": round(r["tok_s"] / base["tok_s"], 3) if base else None,
            "ttft_ms": round(r["ttft_s"] * 1000, 1),
            "weight_bytes_per_token": r["weight_bytes_per_token"],
            "fraction_of_bandwidth": round(r["tok_s"] * r["weight_bytes_per_token"] / (bandwidth * 1e9), 3),
            "roofline_tok_s": round(bandwidth * 1e9 / r["weight_bytes_per_token"], 1),
        }
        print(f"{mode}: {r['tok_s']:.1f} tok/s", file=sys.stderr)
    result = {
        "benchmark": "batch1_decode",
        "cpu": cpu_info(),
        "model": args.model,
        "device": jax.default_backend(),
        "dtype": args.dtype,
        "new_tokens": args.tokens,
        "prompts": len(prompts),
        "read_bandwidth_gbs": round(bandwidth, 2),
        "copy_bandwidth_gbs": round(copy_bandwidth, 2),
    }
    if base:
        result |= {
            "ours_tok_s": round(base["tok_s"], 2),
            "ours_ttft_ms": round(base["ttft_s"] * 1000, 1),
            "weight_bytes": base["weight_bytes"],
            "roofline_tok_s": round(bandwidth * 1e9 / base["weight_bytes_per_token"], 1),
            "ours_fraction_of_bandwidth": quant["none"]["fraction_of_bandwidth"],
        }
    if not args.no_hf and base:
        print("now HF transformers ...", file=sys.stderr)
        hf = bench_hf(args.model, args.tokens, ours["prompt_ids"])
        hf_weight_bytes = ours["params"] * 4  # HF runs float32
        result |= {
            "hf_tok_s": round(hf["tok_s"], 2),
            "ratio_ours_over_hf": round(base["tok_s"] / hf["tok_s"], 3),
            "hf_fraction_of_bandwidth": round(hf["tok_s"] * hf_weight_bytes / (bandwidth * 1e9), 3),
        }
    if peers or llama_note:
        llama = next(iter(ours["peers"].values()), None)
        result["llama_cpp"] = (
            {"skipped": llama_note}
            if llama is None
            else {
                "threads": args.llama_threads,
                "file": "the same GGUF, its own blocks",
                "tok_s": round(llama["tok_s"], 2),
                "tok_s_runs": llama["tok_s_runs"],
            }
        )
        if llama is not None:
            for mode in quant:
                quant[mode]["ratio_vs_llama_cpp"] = round(quant[mode]["tok_s"] / llama["tok_s"], 3)
                # Greedy agreement with llama.cpp, prompt by prompt: the whole answer equal, and the first
                # token where it parts (n_tokens if never). A mode that computes what llama.cpp computes
                # (gguf: the same blocks, int8 activations on AVX2) should agree on most prompts.
                ours_t, peer_t = per_mode[mode]["tokens"], llama["tokens"]
                parts = [
                    next((i for i, (a, b) in enumerate(zip(o, q)) if a != b), len(o)) for o, q in zip(ours_t, peer_t)
                ]
                quant[mode]["greedy_equal_llama_cpp"] = sum(o == q for o, q in zip(ours_t, peer_t))
                quant[mode]["greedy_first_difference"] = parts
    if modes != ["none"]:
        from runtime.quant import cpu as quant_cpu

        result["weight_quant_group"] = args.weight_quant_group
        result["cpu_quant_kernel"] = quant_cpu.kernel_available() if jax.default_backend() == "cpu" else None
        result["cpu_quant_kernel_isa"] = quant_cpu.kernel_isa() if jax.default_backend() == "cpu" else None
        result["weight_quant"] = quant
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
