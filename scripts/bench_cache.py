"""Cache-hit latency through HTTP, against a miss on the same gateway, and hits per second.

Starts a gateway on a loopback port (SmolLM2 in-process, the semantic cache with a fresh file store),
then:
1. misses: distinct questions answered by the model (each then stored);
2. exact hits: the same questions again; semantic hits: paraphrases of them;
   latency measured one request at a time (p50, p99), and the ratio miss / hit;
3. throughput: 64 concurrent clients asking cached questions for a fixed time: hits per second and
   the latency percentiles under that load.
With ``--previous-judge``, steps 1-2 run again on a gateway whose judge is the previous one alone
(``checker.onnx``; the shipped judge is the ensemble with ``checker_b.onnx``), same thresholds: the
judge's share of the lookup. With ``--before``, steps 1-2 run again in the same run on a second gateway whose cache embeds with the
previous default (sentence-transformers MiniLM in float32 on torch) and runs no precision checker: the
before/after of the semantic hit path. Prints one JSON line per measurement, each with its ``cache``.

    python scripts/bench_cache.py [--misses 16] [--repeats 20] [--clients 64] [--seconds 10] [--before] [--previous-judge]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

QUESTIONS = [
    ("What is the capital of France?", "Which city is the capital of France?"),
    ("How many legs does a spider have?", "How many legs do spiders have?"),
    ("What is photosynthesis?", "Can you explain what photosynthesis is?"),
    ("Who wrote Romeo and Juliet?", "Who is the author of Romeo and Juliet?"),
    ("What is the boiling point of water?", "At what temperature does water boil?"),
    ("How do I reverse a list in Python?", "How can I reverse a Python list?"),
    ("What causes rain?", "Why does it rain?"),
    ("What is the speed of light?", "How fast does light travel?"),
    ("Why is the sky blue?", "Why does the sky look blue?"),
    ("What is a prime number?", "Can you tell me what a prime number is?"),
    ("How does a rainbow form?", "How are rainbows formed?"),
    ("What is the largest ocean?", "Which ocean is the largest?"),
    ("What does DNA stand for?", "What is DNA short for?"),
    ("How many continents are there?", "How many continents does the Earth have?"),
    ("What is gravity?", "Can you explain gravity?"),
    ("Who painted the Mona Lisa?", "Who was the painter of the Mona Lisa?"),
]


def variant(question: str, n: int) -> str:
    """The same question with a different raw text (extra spaces between words, set by the digits of
    n in base 3): the cache keeps a small table of recent question vectors, so a semantic hit is only
    measured honestly on text it has not embedded before."""
    words = question.split(" ")
    out = [words[0]]
    for w in words[1:]:
        n, digit = divmod(n, 3)
        out.append(" " * (1 + digit) + w)
    return "".join(out)


def pct(values, q):
    return float(np.percentile(np.asarray(values), q)) * 1000


def summary(name: str, lat: list[float], **extra) -> dict:
    from runtime.platform import cpu_info

    return {
        "bench": name,
        "n": len(lat),
        "p50_ms": round(pct(lat, 50), 2),
        "p99_ms": round(pct(lat, 99), 2),
        "mean_ms": round(statistics.mean(lat) * 1000, 2),
        **extra,
        "cpu": cpu_info(),  # on every line
    }


SYSTEM = "Answer in one short sentence."  # short answers finish ("stop") and are cached


async def ask(session, url, question, max_tokens):
    body = {
        "model": "smollm2-135m",
        "temperature": 0,
        "max_tokens": max_tokens,
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
    }
    t = time.perf_counter()
    async with session.post(url, json=body) as r:
        await r.read()
        return time.perf_counter() - t, r.headers.get("x-cache"), r.status


async def run(args, base: str, label: str, load: bool = True) -> None:
    import aiohttp

    url = base + "/v1/chat/completions"
    qs = QUESTIONS[: args.misses]
    async with aiohttp.ClientSession() as s:
        misses, stored = [], []
        for pair in qs:
            dt, cache, status = await ask(s, url, pair[0], args.max_tokens)
            assert status == 200 and cache == "miss", (status, cache)
            misses.append(dt)
            # only answers that finished on their own are cached: check with a second ask
            if (await ask(s, url, pair[0], args.max_tokens))[1] == "hit":
                stored.append(pair)
        print(
            json.dumps(summary("miss", misses, cache=label, max_tokens=args.max_tokens, cached=len(stored))), flush=True
        )
        if not stored:
            raise SystemExit("no answer finished within max_tokens: nothing was cached")
        qs = stored
        for kind, idx in (("exact_hit", 0), ("semantic_hit", 1)):
            lat, n = [], 0  # latency of hits only: a paraphrase the guard turns away is a miss
            for r in range(args.repeats):
                for pair in qs:
                    q = pair[idx] if kind == "exact_hit" else variant(pair[idx], r)  # each embedded afresh
                    dt, cache, status = await ask(s, url, q, args.max_tokens)
                    n += 1
                    if cache == "hit":
                        lat.append(dt)
            print(
                json.dumps(
                    summary(
                        kind,
                        lat,
                        cache=label,
                        hit_rate=round(len(lat) / n, 3),
                        miss_over_hit_p50=round(statistics.median(misses) / statistics.median(lat), 1),
                        targets={"p99_ms_at_most": 25, "ratio_at_least": 50},
                    )
                ),
                flush=True,
            )

    if not load:
        return
    # Load: N concurrent clients, each with its own connection, asking cached questions.
    deadline = time.perf_counter() + args.seconds
    lat: list[float] = []
    kinds = {"hit": 0, "miss": 0}

    async def client(i: int):
        async with aiohttp.ClientSession() as s:
            j = i
            while time.perf_counter() < deadline:
                pair = qs[j % len(qs)]
                q = pair[0] if j % 2 == 0 else variant(pair[1], 1000 + j)  # alternate exact and new paraphrase text
                dt, cache, status = await ask(s, url, q, args.max_tokens)
                lat.append(dt)
                kinds[cache or "miss"] = kinds.get(cache or "miss", 0) + 1
                j += 1

    t = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(args.clients)))
    elapsed = time.perf_counter() - t
    print(
        json.dumps(
            summary(
                "hits_under_load",
                lat,
                cache=label,
                clients=args.clients,
                seconds=round(elapsed, 1),
                requests_per_s=round(len(lat) / elapsed, 1),
                hit_rate=round(kinds["hit"] / len(lat), 3),
            )
        ),
        flush=True,
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--misses", type=int, default=16)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--max-tokens", type=int, default=96)
    p.add_argument("--before", action="store_true", help="also measure the previous cache path (torch, no checker)")
    p.add_argument(
        "--no-verify",
        action="store_true",
        help="live verification off (its background answers share the two cores with the hits measured)",
    )
    p.add_argument(
        "--previous-judge",
        action="store_true",
        help="also measure the shipped path with the previous judge (checker.onnx alone, same thresholds)",
    )
    args = p.parse_args(argv)

    from runtime.platform import configure_xla

    configure_xla()
    from gateway.app import create_app
    from gateway.config.gateway import GatewayConfig, ModelEntry, load_config
    from runtime.api import EngineConfig
    from tests.support.gateway_server import ServerThread

    tmp = tempfile.mkdtemp(prefix="bench_cache_")
    engine = EngineConfig(
        model="smollm2-135m", max_num_seqs=4, max_num_batched_tokens=64, max_model_len=512, num_blocks=128
    )
    # The cache exactly as configs/gateway.yaml ships it, with a fresh file.
    shipped = load_config(Path(__file__).resolve().parent.parent / "configs" / "gateway.yaml").cache
    runs = [("shipped", {**shipped, "store": "file", "path": f"{tmp}/cache.jsonl"}, True)]
    if args.no_verify:
        runs = [("shipped, verification off", {**runs[0][1], "verify_share": 0.0, "verify_first": 0}, True)]
    if args.before:
        before = {"embed_backend": "torch", "embed_quantize": "none", "guard": False, "embed_max_wait_ms": 2.0}
        runs.append(("before: torch float32, no checker", {**runs[0][1], **before, "path": f"{tmp}/b.jsonl"}, False))
    if args.previous_judge:
        one = str(Path(__file__).resolve().parent.parent / "gateway" / "cache" / "models" / "checker.onnx")
        runs.append(
            (
                "previous judge: checker.onnx alone",
                {**runs[0][1], "checker_model": one, "path": f"{tmp}/p.jsonl"},
                False,
            )
        )
    for label, cache, load in runs:
        print(f"cache config ({label}): {cache}", file=sys.stderr)
        config = GatewayConfig(port=0, models=(ModelEntry("smollm2-135m", engine),), cache=cache)
        print("starting the gateway (model load + warm-up) ...", file=sys.stderr)
        srv = ServerThread(create_app(config)).start()
        try:
            asyncio.run(run(args, srv.url, label, load))
        finally:
            srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
