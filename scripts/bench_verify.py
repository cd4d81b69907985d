"""Live cache verification on the real model: a load run with wrong hits forced in.

    python scripts/bench_verify.py [--questions 24] [--rounds 10] [--out docs/results/bench_verify.json]

SmolLM2-135M in-process behind the gateway, the semantic cache over a test-only store that plants wrong
answers (``tests/support/planting_store.py``): every entry stored under a *look-alike* question (the
asked question with a greeting, a thank-you or a lead-in around it, which the embedding and the checker
find close) serves a wrong answer. The operator has set loose thresholds by hand (cosine 0.5, checker
0.0) and a bound of 1% on single questions; every hit is verified (``verify_share: 1``).

1. Seed: each look-alike is asked once (a miss: stored; from then on it serves the planted answer).
2. Rounds: every base question is asked, ``--rounds`` times. A semantic hit on a look-alike serves a
   wrong answer; a miss makes the model answer and stores the base question, which later hits exactly.
   The true share of wrong hits is counted from the answers the clients received.
3. What must hold: the live estimate's 95% interval covers the true share; the scope's thresholds move
   up the calibration table while its window is over the bound, and the last window's estimate is
   under the bound while look-alikes are still stored (``lookalikes_left_unserved``: the thresholds,
   not the evictions, keep them out).
4. Hit latency with verification on and off, on the same gateway, interleaved (share 1 / share 0 in
   alternating blocks of exact hits): verification runs after the answer is sent, so the request path
   does no more work; a difference is CPU contention with the background answers (2 cores here).

Prints JSON and writes it to ``--out``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Base questions, written for this script (general knowledge; no evaluation pair).
QUESTIONS = [
    "What is the tallest mountain in the world?",
    "How many days are there in a leap year?",
    "What gas do plants absorb from the air?",
    "Who invented the telephone?",
    "What is the freezing point of water in Fahrenheit?",
    "How many sides does a hexagon have?",
    "What is the chemical symbol for gold?",
    "Which planet is known as the red planet?",
    "What language is spoken in Brazil?",
    "How many minutes are in a day?",
    "What is the longest river in Africa?",
    "Who wrote the novel Pride and Prejudice?",
    "What is the main ingredient of guacamole?",
    "How many strings does a standard guitar have?",
    "What is the square root of 144?",
    "Which organ pumps blood around the body?",
    "What is the capital city of Canada?",
    "How many players are on a soccer team on the field?",
    "What metal is liquid at room temperature?",
    "Which ocean lies between Africa and Australia?",
    "What do bees collect from flowers?",
    "How many bones does an adult human have?",
    "What is the hardest natural substance?",
    "Which country has the largest population?",
    "What year did the first person walk on the moon?",
    "What is the largest mammal on Earth?",
    "How many hours does the Earth take to spin once?",
    "What is the currency of Japan?",
    "Which vitamin does sunlight help the body make?",
    "What is the smallest prime number?",
]
LOOKALIKES = [
    "Hi! {q}",
    "Quick question: {q}",
    "{q} Thanks!",
    "Could you tell me: {q}",
    "Hello, {q}",
    "{q} Please answer briefly.",
    "I was wondering: {q}",
    "Hey there. {q}",
]
MODEL = "smollm2-135m"


def pct(values, q):
    if not values:
        return None
    s = sorted(values)
    return round(1000 * s[min(len(s) - 1, int(q * len(s)))], 2)


async def ask(session, url, question, max_tokens, headers=None):
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": question}],
        "temperature": 0,
        "max_tokens": max_tokens,
    }
    t = time.perf_counter()
    async with session.post(url, json=body, headers=headers or {}) as r:
        data = await r.json()
        dt = time.perf_counter() - t
        assert r.status == 200, data
        return dt, r.headers.get("x-cache"), r.headers.get("x-cache-lookup"), data["choices"][0]["message"]["content"]


async def verification(session, base):
    async with session.get(base + "/dashboard/verification") as r:
        return await r.json()


async def wait_drained(session, base, timeout=900):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = await verification(session, base)
        if v["pending"] == 0:
            await asyncio.sleep(0.5)  # a job taken but not recorded yet
            v2 = await verification(session, base)
            if v2["pending"] == 0 and sum(e["verified"] for e in v2["estimates"]) == sum(
                e["verified"] for e in v["estimates"]
            ):
                return v2
        await asyncio.sleep(0.5)
    raise SystemExit("verifications did not finish")


async def run(args, server, cache, store) -> dict:
    import aiohttp

    base = server.url
    url = base + "/v1/chat/completions"
    qs = QUESTIONS[: args.questions]
    out: dict = {"questions": len(qs), "lookalikes_per_question": len(LOOKALIKES)}
    async with aiohttp.ClientSession() as s:
        t0 = time.perf_counter()
        for q in qs:  # seed the look-alikes (no lookup, stored; from then on served planted)
            for tpl in LOOKALIKES:
                _, hit, _, _ = await ask(s, url, tpl.format(q=q), args.max_tokens, {"Cache-Control": "no-cache"})
                assert hit == "miss"
        out["seed_s"] = round(time.perf_counter() - t0, 1)
        served = {"hits": 0, "wrong": 0, "misses": 0}
        rounds = []
        for r in range(args.rounds):
            rh = rw = 0
            for q in qs:
                _, hit, lookup, text = await ask(s, url, q, args.max_tokens)
                if hit == "hit":
                    rh += 1
                    rw += text == store.wrong
                else:
                    served["misses"] += 1
            served["hits"] += rh
            served["wrong"] += rw
            v = await wait_drained(s, base)
            tight = v["tightened"][0] if v["tightened"] else None
            rounds.append(
                {
                    "round": r + 1,
                    "hits": rh,
                    "wrong_hits_served": rw,
                    "thresholds": tight["thresholds"] if tight else None,
                    "moves": len(tight["moves"]) if tight else 0,
                    "window": tight["window"] if tight else None,
                }
            )
            print(json.dumps(rounds[-1]), file=sys.stderr, flush=True)
        v = await wait_drained(s, base)

        async def planted_left():  # look-alikes still stored: the thresholds, not an eviction, keep them out
            return sum(m.question in store.questions for m in list(cache._local.meta.values()))

        left = server.call(planted_left)
        (est,) = v["estimates"]
        truth = served["wrong"] / served["hits"] if served["hits"] else None
        lo, hi = est["ci95"]
        tight = v["tightened"][0] if v["tightened"] else None
        win = tight["window"] if tight else None
        out.update(
            served=served,
            true_wrong_share=truth,
            estimate={k: est[k] for k in ("verified", "wrong", "rate", "ci95", "bound")},
            interval_covers_truth=bool(truth is not None and lo <= truth <= hi),
            store_counts=dict(store.served),
            lookalikes_planted=len(store.questions),
            lookalikes_evicted_after_a_wrong_hit=len(store.questions) - left,
            lookalikes_left_unserved=left,
            moves=tight["moves"] if tight else [],
            final_thresholds=tight["thresholds"] if tight else None,
            last_window=win,
            last_window_under_bound=bool(win and win["verified"] and win["wrong"] / win["verified"] <= est["bound"]),
            rounds=rounds,
            verify_failed=v["failed"],
            verify_dropped=v["dropped"],
        )

        # Hit latency, verification on vs off, interleaved blocks of exact hits on the same gateway.
        verifier = cache.verifier
        lat = {"on": [], "off": []}
        for block in range(args.latency_blocks):
            mode = "on" if block % 2 == 0 else "off"
            verifier.config = dataclasses.replace(verifier.config, verify_share=1.0 if mode == "on" else 0.0)
            for q in qs:
                dt, hit, _, _ = await ask(s, url, q, args.max_tokens)
                if hit == "hit":
                    lat[mode].append(dt)
            await wait_drained(s, base)  # the next block starts with no background work left over
        out["hit_latency_ms"] = {m: {"n": len(v_), "p50": pct(v_, 0.5), "p99": pct(v_, 0.99)} for m, v_ in lat.items()}
        p50_on, p50_off = out["hit_latency_ms"]["on"]["p50"], out["hit_latency_ms"]["off"]["p50"]
        out["hit_latency_ms"]["p50_ratio_on_over_off"] = round(p50_on / p50_off, 3) if p50_on and p50_off else None
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--questions", type=int, default=24)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--max-tokens", type=int, default=24)
    p.add_argument("--latency-blocks", type=int, default=6)
    p.add_argument("--out", default=str(ROOT / "docs" / "results" / "bench_verify.json"))
    args = p.parse_args(argv)

    from runtime.platform import configure_xla, cpu_info

    configure_xla()
    from gateway.app import create_app
    from gateway.cache import CacheConfig, SemanticCache
    from gateway.config.gateway import GatewayConfig, ModelEntry
    from runtime.api import EngineConfig
    from tests.support.gateway_server import ServerThread
    from tests.support.planting_store import PlantingStore

    tmp = tempfile.mkdtemp(prefix="bench_verify_")
    lookalikes = {tpl.format(q=q) for q in QUESTIONS[: args.questions] for tpl in LOOKALIKES}
    config = CacheConfig(
        store="file",
        path=f"{tmp}/cache.jsonl",
        threshold=0.5,
        checker_threshold=0.0,
        max_false_hit_rate=0.01,
        verify_share=1.0,
        verify_first=0,
        verify_min_window=20,
        verify_max_pending=512,
    )
    store = PlantingStore(
        config.path, questions=lookalikes, ttl_seconds=config.ttl_seconds, max_entries=config.max_entries
    )
    cache = SemanticCache(config, store=store)
    engine = EngineConfig(model=MODEL, max_num_seqs=4, max_num_batched_tokens=64, max_model_len=512, num_blocks=128)
    gw = GatewayConfig(port=0, models=(ModelEntry(MODEL, engine),))
    print("starting the gateway (model load + warm-up) ...", file=sys.stderr)
    server = ServerThread(create_app(gw, cache=cache)).start()
    try:
        result = {
            "cpu": cpu_info(),
            "config": {"threshold": 0.5, "checker_threshold": 0.0, "bound": 0.01, "verify_min_window": 20},
            **asyncio.run(run(args, server, cache, store)),
        }
    finally:
        server.stop()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "rounds"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
