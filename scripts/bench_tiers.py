"""Cost and latency of four ways to serve one mixed workload: all-large, all-small, auto, auto + cache.

Starts the large tier (Gemma 3 270M) as a runtime server process and a gateway process with the small
tier (SmolLM2 135M) in-process and the shipped tier prices (configs/tiers.yaml), then sends the same
seeded workload four times through the real HTTP API:

    all-large    model "large", cache bypassed      (Cache-Control: no-cache, no-store)
    all-small    model "small", cache bypassed
    auto         model "auto",  cache bypassed      (the router picks per request)
    auto+cache   model "auto",  semantic cache on (starts empty)

The workload mixes short questions, code, maths, long prompts and deep conversations, and repeats or
paraphrases a share of earlier questions (as real traffic does: that is what the cache is for).
Every request stops at its answer's first blank line (``stop: ["\n\n"]``), so most answers finish
on their own, which is what the cache stores.
Cost comes from the gateway's own accounting (x-cost-usd on each answer: usage x tier prices).

Before the four runs, every prompt is prefilled once on each tier (one token): each mode then finds the
same warm prefix caches and compiled step programs (without it, a later mode found the prompts an
earlier one had prefilled: auto ran 2.5x faster than all-small on the same tier).

Answer quality, scored automatically (``score``), two figures per mode:

    correct      of the requests with one checkable answer (a product a * b, a linear equation's x, a
                 country's capital): the share whose answer contains it (the number as digits, the city
                 by name). A loose check (an answer that lists several numbers passes), the same for
                 every mode; no thresholds here were tuned on this workload.
    degenerate   of all requests: answers that are empty, echo the prompt (they contain its last 8
                 words in order) or loop (over half of their word 3-grams are repeats): what a model
                 that cannot chat does with a chat prompt.

Prints one JSON object and writes it (and a PNG) under out/.

    python scripts/bench_tiers.py [--requests 120] [--concurrency 8] [--max-tokens 32] [--seed 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

# (phrasing A, phrasing B) with {slots}: a repeat of an earlier request uses the same slots and
# either the same phrasing (an exact repeat) or the other one (a paraphrase).
SHORT = [
    ("What is a good name for a {pet}?", "Can you suggest a name for my {pet}?"),
    ("Tell me a fun fact about {animal}.", "What is an interesting fact about {animal}?"),
    ("How do I make {drink}?", "What is the recipe for {drink}?"),
    ("What is the capital of {country}?", "Which city is the capital of {country}?"),
    ("Give me a tip for {activity}.", "What is one piece of advice for {activity}?"),
]
CODE = [
    ("Write a python function that {task}.", "Write a Python function to {task2}."),
    ("Why does my javascript code print undefined when I {js}?", "My JavaScript prints undefined when I {js}. Why?"),
]
MATH = [
    ("What is {a} * {b}?", "Compute {a} * {b}."),
    ("Solve the equation {a}x + {b} = {c}.", "Find x if {a}x + {b} = {c}."),
]
SLOTS = {
    "pet": ["cat", "dog", "parrot", "hamster", "goldfish", "rabbit"],
    "animal": ["octopuses", "elephants", "owls", "bees", "dolphins", "penguins"],
    "drink": ["lemonade", "iced tea", "hot chocolate", "a smoothie", "cold brew coffee"],
    "country": ["France", "Japan", "Canada", "Brazil", "Egypt", "Norway", "Kenya"],
    "activity": ["running a marathon", "learning guitar", "public speaking", "gardening", "studying"],
    "task": ["reverses a string", "checks if a number is prime", "sums a list", "counts vowels in a word"],
    "js": ["call a function without return", "read a missing object key", "log an unset variable"],
    "a": [str(i) for i in range(3, 30)],
    "b": [str(i) for i in range(2, 40)],
    "c": [str(i) for i in range(40, 99)],
}
PASSAGE = (
    "The history of the bicycle is a story of many small improvements. Early designs in the 1810s "
    "had no pedals: riders pushed along the ground with their feet. Pedals attached to the front "
    "wheel came in the 1860s, and the high-wheel bicycle followed, fast but dangerous. The safety "
    "bicycle of the 1880s, with two wheels of equal size and a chain drive to the rear wheel, made "
    "cycling practical for nearly everyone. Pneumatic tyres, invented soon after, made the ride "
    "comfortable. In the twentieth century came derailleur gears, lighter frames of aluminium and "
    "later carbon fibre, and in recent years electric assistance. Each change answered a problem "
    "riders had: speed, safety, comfort, hills, distance. "
)
FOLLOW_UPS = [
    "Tell me more.",
    "Why is that?",
    "Can you give an example?",
    "And what about the next step?",
    "How would you summarize it?",
    "Is there anything else?",
]


CAPITALS = {
    "France": "Paris",
    "Japan": "Tokyo",
    "Canada": "Ottawa",
    "Brazil": "Brasília",
    "Egypt": "Cairo",
    "Norway": "Oslo",
    "Kenya": "Nairobi",
}


def reference(item: dict) -> str | None:
    """The one checkable answer of a templated request (None when it has none)."""
    t, s = item["template"], item["slots"]
    if t in MATH:
        a, b = int(s["a"]), int(s["b"])
        if "x" not in t[0]:
            return str(a * b)
        x = (int(s["c"]) - b) / a
        return str(int(x)) if x == int(x) else f"{x:.2f}".rstrip("0")
    if "capital" in t[0]:
        return CAPITALS[s["country"]]
    return None


def correct(answer: str, ref: str) -> bool:
    text = answer.replace(",", "")
    if ref[0].isdigit() or ref[0] == "-":
        return re.search(rf"(?<![\d.]){re.escape(ref)}(?![\d])", text) is not None
    return ref.lower() in text.lower() or (ref == "Brasília" and "brasilia" in text.lower())


def degenerate(answer: str, prompt: str) -> bool:
    """Empty, an echo of the prompt, or a loop."""
    words = answer.lower().split()
    if not words:
        return True
    asked = prompt.lower().split()
    if len(asked) >= 4 and " ".join(asked[-min(len(asked), 8) :]) in " ".join(words):
        return True
    grams = [tuple(words[i : i + 3]) for i in range(len(words) - 2)]
    return len(grams) >= 6 and len(set(grams)) < len(grams) / 2


def _fill(template: tuple[str, str], rng: random.Random) -> dict:
    slots = {k: rng.choice(v) for k, v in SLOTS.items()}
    slots["task2"] = (
        slots["task"]
        .replace("reverses", "reverse")
        .replace("checks", "check")
        .replace("sums", "sum")
        .replace("counts", "count")
    )
    return {"template": template, "slots": slots}


def workload(n: int, seed: int, repeat_share: float = 0.25) -> list[dict]:
    """Seeded requests: {"kind", "messages"}. ``repeat_share`` of them revisit an earlier question."""
    rng = random.Random(seed)
    out: list[dict] = []
    asked: list[dict] = []  # fresh single-question requests, which a later one may repeat
    for _ in range(n):
        if asked and rng.random() < repeat_share:
            base = rng.choice(asked)
            same = rng.random() < 0.5
            text = base["template"][0 if same else 1].format(**base["slots"])
            out.append(
                {
                    "kind": "repeat" if same else "paraphrase",
                    "messages": [{"role": "user", "content": text}],
                    "reference": reference(base),
                }
            )
            continue
        r = rng.random()
        if r < 0.45:
            kind, pool = "short", SHORT
        elif r < 0.62:
            kind, pool = "code", CODE
        elif r < 0.79:
            kind, pool = "math", MATH
        elif r < 0.9:
            kind, pool = "long", None
        else:
            kind, pool = "deep", None
        if pool is not None:
            item = _fill(rng.choice(pool), rng)
            asked.append(item)
            out.append(
                {
                    "kind": kind,
                    "messages": [{"role": "user", "content": item["template"][0].format(**item["slots"])}],
                    "reference": reference(item),
                }
            )
        elif kind == "long":
            out.append(
                {
                    "kind": kind,
                    "messages": [
                        {
                            "role": "user",
                            "content": PASSAGE * 3 + "\nSummarize the text "
                            f"above in one sentence about {rng.choice(['safety', 'speed', 'comfort'])}.",
                        }
                    ],
                }
            )
        else:
            first = _fill(rng.choice(SHORT), rng)
            msgs = [{"role": "user", "content": first["template"][0].format(**first["slots"])}]
            for i in range(6):
                msgs.append({"role": "assistant", "content": "Here is what I know about that."})
                msgs.append({"role": "user", "content": FOLLOW_UPS[i]})
            out.append({"kind": kind, "messages": msgs})
    return out


# Each request asks for its answer's first paragraph, as a chat UI with short answers would: most
# answers then end on their own ("stop"), and only finished answers are kept by the cache.
STOP = ["\n\n"]

MODES = {
    "all-large": ("large", False),
    "all-small": ("small", False),
    "auto": ("auto", False),
    "auto+cache": ("auto", True),
}


async def run_mode(
    url: str, requests: list[dict], model: str, cache: bool, concurrency: int, max_tokens: int, label: str
) -> dict:
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    results: list[dict] = []
    done = 0

    async def one(session, i, req):
        nonlocal done
        headers = {"Authorization": "Bearer bench-tiers"}
        if not cache:
            headers["Cache-Control"] = "no-cache, no-store"
        body = {"model": model, "messages": req["messages"], "temperature": 0, "max_tokens": max_tokens, "stop": STOP}
        async with sem:
            t = time.perf_counter()
            async with session.post(url + "/v1/chat/completions", json=body, headers=headers) as r:
                payload = await r.json()
                elapsed = time.perf_counter() - t
                answer = payload["choices"][0]["message"]["content"] if r.status == 200 else ""
                ref = req.get("reference")
                results.append(
                    {
                        "i": i,
                        "kind": req["kind"],
                        "status": r.status,
                        "latency": elapsed,
                        "cost": float(r.headers.get("x-cost-usd", "0") or 0),
                        "saved": float(r.headers.get("x-cost-saved-usd", "0") or 0),
                        "tier": r.headers.get("x-served-by"),
                        "cache": r.headers.get("x-cache"),
                        "fallback": r.headers.get("x-fallback"),
                        "tokens": (payload.get("usage") or {}).get("completion_tokens", 0),
                        "checked": ref is not None,
                        "correct": ref is not None and correct(answer, ref),
                        "degenerate": degenerate(answer, req["messages"][-1]["content"]),
                    }
                )
        done += 1
        print(f"\r{label:>10}: {done}/{len(requests)}", end="", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as session:
        await asyncio.gather(*(one(session, i, r) for i, r in enumerate(requests)))
    wall = time.perf_counter() - t0
    print(file=sys.stderr)
    ok = [r for r in results if r["status"] == 200]
    lat = np.array([r["latency"] for r in ok]) * 1000
    by_tier: dict[str, int] = {}
    for r in ok:
        key = "cache" if r["cache"] == "hit" else r["tier"]
        by_tier[key] = by_tier.get(key, 0) + 1
    cost = sum(r["cost"] for r in ok)
    return {
        "mode": label,
        "model": model,
        "cache": cache,
        "requests": len(results),
        "failed": len(results) - len(ok),
        "cost_usd": cost,
        "cost_per_1k_requests_usd": cost / max(1, len(ok)) * 1000,
        "saved_usd": sum(r["saved"] for r in ok),
        "latency_ms": {
            "p50": float(np.percentile(lat, 50)),
            "p90": float(np.percentile(lat, 90)),
            "p99": float(np.percentile(lat, 99)),
            "mean": float(lat.mean()),
        },
        "answered_by": by_tier,
        "fallbacks": sum(1 for r in ok if r["fallback"]),
        "cache_hit_rate": sum(1 for r in ok if r["cache"] == "hit") / max(1, len(ok)),
        "completion_tokens": sum(r["tokens"] for r in ok),
        "quality": {
            "checked": sum(r["checked"] for r in ok),
            "correct": sum(r["correct"] for r in ok) / max(1, sum(r["checked"] for r in ok)),
            "degenerate": sum(r["degenerate"] for r in ok) / max(1, len(ok)),
        },
        "wall_s": wall,
        "requests_per_s": len(ok) / wall,
    }


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["mode"] for r in results]
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 4))
    a.bar(names, [r["cost_per_1k_requests_usd"] for r in results], color=["#c44", "#48c", "#4a4", "#a4a"])
    a.set_ylabel("USD per 1,000 requests")
    a.set_title("Cost (tier prices x usage)")
    x = np.arange(len(names))
    b.bar(x - 0.2, [r["latency_ms"]["p50"] for r in results], 0.4, label="p50")
    b.bar(x + 0.2, [r["latency_ms"]["p99"] for r in results], 0.4, label="p99")
    b.set_xticks(x, names)
    b.set_ylabel("ms")
    b.set_title("End-to-end latency")
    b.legend()
    c.bar(x - 0.2, [r["quality"]["correct"] for r in results], 0.4, label="correct (checkable)")
    c.bar(x + 0.2, [r["quality"]["degenerate"] for r in results], 0.4, label="degenerate (all)")
    c.set_xticks(x, names)
    c.set_ylim(0, 1)
    c.set_title("Answer quality (automatic)")
    c.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--requests", type=int, default=120)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="out/bench_tiers.json")
    args = p.parse_args(argv)

    import yaml

    from tests.support.processes import ServerProcess

    reqs = workload(args.requests, args.seed)
    kinds = {k: sum(r["kind"] == k for r in reqs) for k in sorted({r["kind"] for r in reqs})}
    print(f"workload: {len(reqs)} requests {kinds}", file=sys.stderr)
    tmp = Path(tempfile.mkdtemp(prefix="bench-tiers-"))
    engine = [
        "--max-num-seqs",
        "16",
        "--max-num-batched-tokens",
        "256",
        "--max-model-len",
        "2048",
        "--kv-cache-mb",
        "256",
    ]
    print("starting the large tier (gemma3-270m runtime server; compiling)...", file=sys.stderr)
    with ServerProcess(["-m", "runtime.server", "--model", "gemma3-270m", *engine], name="large") as large:
        tiers = yaml.safe_load((ROOT / "configs/tiers.yaml").read_text())
        tiers["tiers"][0]["url"] = large.url
        (tmp / "tiers.yaml").write_text(yaml.safe_dump(tiers))
        gw = yaml.safe_load((ROOT / "configs/gateway.yaml").read_text())
        gw["cache"]["path"] = str(tmp / "cache.jsonl")
        gw["models"][0]["engine"].update({"max_num_seqs": 16, "kv_cache_mb": 256})
        (tmp / "gateway.yaml").write_text(yaml.safe_dump(gw))
        print("starting the gateway (smollm2-135m in-process; compiling)...", file=sys.stderr)
        with ServerProcess(["-m", "gateway", "--config", str(tmp / "gateway.yaml")], name="gateway") as gateway:
            # Like with like: every prompt prefilled once on each tier first (1 token, cache bypassed), so no
            # mode finds a prefix cache (or a step program) that an earlier mode warmed for it alone.
            for model in ("large", "small"):
                asyncio.run(run_mode(gateway.url, reqs, model, False, args.concurrency, 1, f"warm {model}"))
            results = [
                asyncio.run(run_mode(gateway.url, reqs, model, cache, args.concurrency, args.max_tokens, name))
                for name, (model, cache) in MODES.items()
            ]
    base = results[0]
    for r in results:
        r["cost_vs_all_large"] = r["cost_per_1k_requests_usd"] / base["cost_per_1k_requests_usd"]
        r["p50_vs_all_large"] = r["latency_ms"]["p50"] / base["latency_ms"]["p50"]
    from runtime.platform import cpu_info

    report = {
        "bench": "tiers",
        "cpu": cpu_info(),
        "workload": {
            "requests": len(reqs),
            "kinds": kinds,
            "seed": args.seed,
            "concurrency": args.concurrency,
            "max_tokens": args.max_tokens,
        },
        "prices": {t["name"]: t["price"] for t in tiers["tiers"]},
        "modes": results,
    }
    out = ROOT / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    plot(results, out.with_suffix(".png"))
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
