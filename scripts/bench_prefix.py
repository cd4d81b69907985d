"""Prefix caching: TTFT of chats behind one shared long system prompt, cache off vs on, one run.

Two engines on the same weights (SmolLM2 135M), identical but for ``enable_prefix_caching``. Each
answers the same chats, one at a time, all sharing a ~1,024-token system prompt (a bakery's house
rules) and differing in the question. With caching, the first chat computes the system prompt's
blocks and every later one reuses them, so its prefill is only the question. TTFT is the engine's
own (arrival to first token). Greedy tokens must be identical with and without caching.

    python scripts/bench_prefix.py [--chats 12] [--system-tokens 1024] [--out out/bench_prefix.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RULES = [
    "Opening hours are 7am to 6pm on weekdays and 8am to 2pm on Saturdays; we are closed on Sundays.",
    "Every loaf is baked the same morning; day-old bread is sold at half price after 4pm.",
    "Custom cakes need 48 hours' notice and a deposit of twenty percent.",
    "Our gluten-free range is baked in a separate oven, but flour is present in the kitchen.",
    "Deliveries within five kilometres cost three euros and arrive within the hour.",
    "Nuts are used in the almond croissants, the walnut bread and the praline cake.",
    "Vegan options include the sourdough, the baguette and the dark chocolate cookie.",
    "Gift cards are sold in the shop and online, in amounts from ten to one hundred euros.",
    "Large orders for offices get a ten percent discount above fifty euros.",
    "Staff should never promise a delivery time during the morning rush between 7am and 9am.",
]
QUESTIONS = [
    "When do you open on Saturday?",
    "Do you sell gluten-free bread?",
    "Can I order a birthday cake?",
    "Are you open on Sunday?",
    "How much is delivery?",
    "Which pastries contain nuts?",
    "Do you have vegan cookies?",
    "Can I buy a gift card?",
    "Is there an office discount?",
    "Is day-old bread cheaper?",
    "How early should I order a cake?",
    "What time do you close?",
]


def system_prompt(tokenizer, n_tokens: int) -> str:
    """House rules repeated (numbered, so no two lines are equal) to about ``n_tokens`` tokens."""
    lines, i = ["You are the assistant of a small bakery. Follow the house rules below."], 0
    while len(tokenizer.encode("\n".join(lines))) < n_tokens:
        lines.append(f"Rule {i + 1}: {RULES[i % len(RULES)]}")
        i += 1
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--chats", type=int, default=12)
    p.add_argument("--system-tokens", type=int, default=1024)
    p.add_argument("--max-tokens", type=int, default=8)
    p.add_argument("--out", default="out/bench_prefix.json")
    args = p.parse_args(argv)

    from runtime.platform import configure_xla, cpu_info

    configure_xla()
    from runtime.api import EngineConfig, SamplingParams
    from runtime.engine.llm_engine import LLMEngine
    from runtime.loading.gguf import load_gguf
    from runtime.loading.presets import resolve_gguf

    loaded = load_gguf(resolve_gguf("smollm2-135m"))
    engines = {}
    for caching in (False, True):
        eng = LLMEngine(
            EngineConfig(
                max_num_seqs=4,
                max_num_batched_tokens=256,
                max_model_len=2048,
                kv_cache_bytes=256 << 20,
                enable_prefix_caching=caching,
            ),
            loaded=loaded,
        )
        t = time.perf_counter()
        eng.warmup()
        print(
            f"engine (prefix caching {'on' if caching else 'off'}) warmed up in {time.perf_counter() - t:.0f} s",
            file=sys.stderr,
        )
        engines[caching] = eng
    system = system_prompt(engines[True].tokenizer, args.system_tokens)
    chats = [
        [{"role": "system", "content": system}, {"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}]
        for i in range(args.chats)
    ]
    params = SamplingParams(max_tokens=args.max_tokens, ignore_eos=True)
    results, tokens = {}, {}
    for caching, eng in engines.items():
        ttfts, outs = [], []
        for chat in chats:  # one at a time: TTFT is prefill alone, no queueing behind other chats
            out = eng.generate([chat], params)[0]
            ttfts.append(out.metrics.ttft_s * 1000)
            outs.append(out.token_ids)
        label = "on" if caching else "off"
        measured = ttfts[1:]  # the first chat is the one that fills the cache (and pays like "off")
        results[label] = {
            "ttft_ms_first": ttfts[0],
            "ttft_ms_p50": statistics.median(measured),
            "ttft_ms_mean": statistics.fmean(measured),
            "ttft_ms_all": ttfts,
            "prefix_cache_hit_tokens": eng.stats().prefix_cache_hits,
            "prefix_cache_query_tokens": eng.stats().prefix_cache_queries,
        }
        tokens[label] = outs
        print(f"prefix caching {label}: TTFT p50 {results[label]['ttft_ms_p50']:.0f} ms", file=sys.stderr)
    prompt_tokens = len(engines[True].encode(chats[0]))
    report = {
        "bench": "prefix_caching",
        "cpu": cpu_info(),
        "model": "smollm2-135m",
        "chats": args.chats,
        "system_prompt_tokens": len(engines[True].tokenizer.encode(system)),
        "prompt_tokens": prompt_tokens,
        "off": results["off"],
        "on": results["on"],
        "ttft_ratio_off_over_on": results["off"]["ttft_ms_p50"] / results["on"]["ttft_ms_p50"],
        "identical_greedy_tokens": tokens["on"] == tokens["off"],
        "target_ratio": 5.0,
    }
    out = ROOT / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report))
    return 0 if report["identical_greedy_tokens"] else 1


if __name__ == "__main__":
    sys.exit(main())
