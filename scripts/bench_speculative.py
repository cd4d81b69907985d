"""Speculative decoding (n-gram prompt lookup) against plain decoding: same engine settings, same prompts,
one run, prompt by prompt in turn (plain, then speculative, the order alternating), so load on this shared
machine hits both alike.

Two workloads from ``data/speculative/prompts.jsonl`` (each prompt's split was fixed by a hash before any
tuning; ``--split test``, the default, is the one to quote): ``quote`` (answers that copy or edit a given
text: code edits, extraction, reformatting; where drafts from the prompt should be right) and ``chat``
(open questions; where they should not). Every request is greedy (or seeded with ``--temperature``) and
sent alone (batch 1, the latency case); TPOT is the engine's own per-request figure (first token to
last). The script compares every answer's tokens with plain decoding's and prints ``identical: true``
only when all of them matched.

Prints one JSON line: per workload, TPOT p50/p99 of both, their ratio (plain / speculative: above 1 is
faster), the acceptance rate (kept drafts / drafts verified) and tokens per step.

    python scripts/bench_speculative.py [--quick] [--split test|dev|all] [--tokens 128] [-k 3]
        [--weight-quant none] [--model smollm2-135m] [--out docs/results/bench_speculative.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROMPTS = ROOT / "data" / "speculative" / "prompts.jsonl"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def load_prompts(split: str, limit: int | None) -> dict[str, list[str]]:
    rows = [json.loads(line) for line in PROMPTS.read_text().splitlines() if line.strip()]
    out: dict[str, list[str]] = {"quote": [], "chat": []}
    for row in rows:
        if split == "all" or row["split"] == split:
            out[row["kind"]].append(row["prompt"])
    return {k: v[:limit] if limit else v for k, v in out.items()}


def run_one(engine, prompt, params) -> dict:
    from runtime.api import SamplingParams

    assert isinstance(params, SamplingParams)
    s0 = engine.stats()
    steps0 = engine.num_steps
    (out,) = engine.generate([[{"role": "user", "content": prompt}]], params)
    s1 = engine.stats()
    return {
        "tokens": list(out.token_ids),
        "tpot_s": out.metrics.tpot_s,
        "steps": engine.num_steps - steps0,
        "drafts": s1.spec_draft_tokens - s0.spec_draft_tokens,
        "accepted": s1.spec_accepted_tokens - s0.spec_accepted_tokens,
    }


def summarize(rows_plain: list[dict], rows_spec: list[dict]) -> dict:
    tp = [r["tpot_s"] * 1e3 for r in rows_plain if r["tpot_s"]]
    ts = [r["tpot_s"] * 1e3 for r in rows_spec if r["tpot_s"]]
    drafts = sum(r["drafts"] for r in rows_spec)
    accepted = sum(r["accepted"] for r in rows_spec)
    tokens = sum(len(r["tokens"]) for r in rows_spec)
    p50_plain, p50_spec = statistics.median(tp), statistics.median(ts)
    return {
        "prompts": len(rows_plain),
        "identical": all(a["tokens"] == b["tokens"] for a, b in zip(rows_plain, rows_spec)),
        "mismatched_prompts": [i for i, (a, b) in enumerate(zip(rows_plain, rows_spec)) if a["tokens"] != b["tokens"]],
        "tpot_ms_plain": {"p50": round(p50_plain, 2), "p99": round(percentile(tp, 99), 2)},
        "tpot_ms_speculative": {"p50": round(p50_spec, 2), "p99": round(percentile(ts, 99), 2)},
        "tpot_speedup_p50": round(p50_plain / p50_spec, 3),
        "tpot_speedup_p99": round(percentile(tp, 99) / percentile(ts, 99), 3),
        # per prompt, so one long answer does not decide it
        "tpot_speedup_median_of_prompts": round(
            statistics.median(
                a["tpot_s"] / b["tpot_s"] for a, b in zip(rows_plain, rows_spec) if a["tpot_s"] and b["tpot_s"]
            ),
            3,
        ),
        "acceptance_rate": round(accepted / drafts, 3) if drafts else None,
        "draft_tokens": drafts,
        "accepted_tokens": accepted,
        "tokens_per_step_plain": round(
            sum(len(r["tokens"]) for r in rows_plain) / sum(r["steps"] for r in rows_plain), 3
        ),
        "tokens_per_step_speculative": round(tokens / sum(r["steps"] for r in rows_spec), 3),
        "completion_tokens": tokens,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--split", default="test", choices=("test", "dev", "all"))
    p.add_argument("--tokens", type=int, default=128, help="max_tokens of each answer")
    p.add_argument("-k", "--num-speculative-tokens", type=int, default=3)
    p.add_argument("--prompt-lookup-min", type=int, default=2)
    p.add_argument("--prompt-lookup-max", type=int, default=4)
    p.add_argument("--weight-quant", default="none")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--temperature", type=float, default=0.0, help="> 0: seeded sampling (seed = prompt index)")
    p.add_argument("--quick", action="store_true", help="3 prompts of each kind, 64 tokens: a few minutes")
    p.add_argument("--out", type=Path, help="also write the JSON here")
    args = p.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from runtime.api import EngineConfig, SamplingParams
    from runtime.engine.llm_engine import LLMEngine
    from runtime.loading.gguf import load_gguf
    from runtime.loading.presets import resolve_gguf
    from runtime.platform import configure_xla, cpu_info

    configure_xla()
    limit, tokens = (3, 64) if args.quick else (None, args.tokens)
    prompts = load_prompts(args.split, limit)
    loaded = load_gguf(resolve_gguf(args.model))
    base = dict(
        model=args.model,
        dtype=args.dtype,
        weight_quant=args.weight_quant,
        max_num_seqs=8,
        max_num_batched_tokens=64,
        max_model_len=1024,
        kv_cache_bytes=64 << 20,
        attention_backend="xla",
    )
    plain = LLMEngine(EngineConfig(**base), loaded=loaded)
    spec = LLMEngine(
        EngineConfig(
            **base,
            speculative="ngram",
            num_speculative_tokens=args.num_speculative_tokens,
            prompt_lookup_min=args.prompt_lookup_min,
            prompt_lookup_max=args.prompt_lookup_max,
        ),
        loaded=loaded,
    )
    t0 = time.perf_counter()
    plain.warmup()
    spec.warmup()
    print(f"warm-up {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    result: dict = {
        "cpu": cpu_info(),
        "model": args.model,
        "weight_quant": args.weight_quant,
        "dtype": args.dtype,
        "split": args.split,
        "max_tokens": tokens,
        "num_speculative_tokens": args.num_speculative_tokens,
        "prompt_lookup": [args.prompt_lookup_min, args.prompt_lookup_max],
        "temperature": args.temperature,
        "batch": 1,
    }
    for kind, items in prompts.items():
        rows_plain, rows_spec = [], []
        for i, prompt in enumerate(items):
            params = SamplingParams(max_tokens=tokens, temperature=args.temperature, seed=i)
            order = [(plain, rows_plain), (spec, rows_spec)]
            for engine, rows in order if i % 2 == 0 else order[::-1]:
                rows.append(run_one(engine, prompt, params))
            print(
                f"{kind} {i + 1}/{len(items)}: plain {rows_plain[-1]['tpot_s'] * 1e3:.1f} ms, "
                f"speculative {rows_spec[-1]['tpot_s'] * 1e3:.1f} ms/token, "
                f"{rows_spec[-1]['accepted']}/{rows_spec[-1]['drafts']} drafts kept",
                file=sys.stderr,
            )
        result[kind] = summarize(rows_plain, rows_spec)
    result["identical"] = all(result[k]["identical"] for k in prompts)
    line = json.dumps(result)
    print(line)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
