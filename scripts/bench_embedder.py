"""The cache's question embedder, four ways: torch float32, torch dynamic int8, ONNX Runtime float32 and int8.

For each backend, all on ``--threads`` intra-op threads (1 by default, like the gateway), in one process:
1. one short question (batch 1) through ``embed_many``, i.e. tokenizer + forward pass: p50/p99 per text;
2. the same question through the micro-batching worker (``await embed``, the gateway's path: includes the
   ``max_wait_ms`` the worker waits for company);
3. batches of 16 different questions: texts per second;
4. agreement with torch float32 on ``--questions`` varied questions (templates x subjects below), embedded in
   batches of 16 and one at a time: min / 1st percentile / mean cosine.
Timing rounds alternate between the backends, so a noisy neighbour on a shared CPU hits them all alike.
Prints one JSON object.

    python scripts/bench_embedder.py [--rounds 5] [--iters 200] [--batches 10] [--threads 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.cache.embedder import Embedder  # noqa: E402
from gateway.cache.onnx_models import OnnxEmbedder, cache_root  # noqa: E402
from runtime.platform import cpu_info  # noqa: E402

SHORT_QUESTION = "What is the capital of France?"

TEMPLATES = [
    "What is {}?",
    "what's {}",
    "Can you explain {} in simple terms?",
    "How does {} work?",
    "Why does {} matter?",
    "Give me three facts about {}.",
    "Is {} worth learning in 2025?",
    "Explain {} to a five-year-old",
    "{}?",
    "tell me about {} pls",
    "What are the pros and cons of {}?",
    "How would you compare {} with the alternatives, and which one should a beginner pick first?",
    "I keep getting confused about {}. Could you walk me through it step by step, with an example?",
    "Summarize {} in one sentence.",
    "Where can I read more about {}?",
    "WHAT IS {}",
    "¿Qué es {}?",
    "Was ist {}?",
    "Common mistakes with {}",
    "history of {}",
]
SUBJECTS = [
    "the capital of France",
    "photosynthesis",
    "a Python list comprehension",
    "Kubernetes",
    "compound interest",
    "the French Revolution",
    "quantum entanglement",
    "sourdough bread",
    "TCP vs UDP",
    "the Pythagorean theorem",
    "inflation",
    "black holes",
    "SQL joins",
    "the immune system",
    "GDPR",
    "machine learning",
    "the Great Wall of China",
    "ibuprofen",
    "HTTP status 404",
    "climate change",
]


def questions(n: int, seed: int = 0) -> list[str]:
    all_q = [t.format(s) for t in TEMPLATES for s in SUBJECTS]
    random.Random(seed).shuffle(all_q)
    return all_q[:n]


def percentiles(samples_s: list[float]) -> dict:
    ms = np.asarray(samples_s) * 1e3
    return {"p50_ms": round(float(np.percentile(ms, 50)), 3), "p99_ms": round(float(np.percentile(ms, 99)), 3)}


def make_backends(threads: int) -> dict[str, Embedder]:
    return {
        "torch_fp32": Embedder(num_threads=threads),
        "torch_int8": Embedder(num_threads=threads, quantize="int8"),
        "onnx_fp32": OnnxEmbedder(num_threads=threads, quantize="none"),
        "onnx_int8": OnnxEmbedder(num_threads=threads, quantize="int8"),
    }


async def worker_latency(e: Embedder, text: str, n: int) -> list[float]:
    await e.start()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await e.embed(text)
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="timing rounds, alternating between backends")
    ap.add_argument("--iters", type=int, default=200, help="batch-1 calls per backend per round")
    ap.add_argument("--batches", type=int, default=10, help="batch-16 calls per backend per round")
    ap.add_argument("--questions", type=int, default=200, help="questions for the agreement check")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    warnings.filterwarnings("ignore", category=UserWarning)  # torch's deprecation notes on quantized tensors

    qs = questions(args.questions)
    backends = make_backends(args.threads)
    load_s = {}
    for name, e in backends.items():  # the ONNX files are exported into the cache here the first time
        t0 = time.perf_counter()
        e.load()
        load_s[name] = round(time.perf_counter() - t0, 2)

    # Agreement with torch float32.
    ref = backends["torch_fp32"].embed_many(qs, batch_size=16)
    agreement = {}
    for name, e in backends.items():
        batched = e.embed_many(qs, batch_size=16)
        alone = np.concatenate([e.embed_many([q]) for q in qs])
        cos_b, cos_a = (batched * ref).sum(1), (alone * ref).sum(1)
        agreement[name] = {
            "cos_min": round(float(cos_b.min()), 5),
            "cos_p1": round(float(np.percentile(cos_b, 1)), 5),
            "cos_mean": round(float(cos_b.mean()), 5),
            "cos_min_alone": round(float(cos_a.min()), 5),
            "cos_min_batched_vs_alone": round(float((batched * alone).sum(1).min()), 5),
        }

    # Latency and throughput, rounds alternating between backends.
    b1 = {name: [] for name in backends}
    b16 = {name: [] for name in backends}
    batches = [qs[i : i + 16] for i in range(0, len(qs) - 15, 16)]
    for e in backends.values():  # warm-up
        for _ in range(10):
            e.embed_many([SHORT_QUESTION])
        e.embed_many(batches[0])
    for _ in range(args.rounds):
        for name, e in backends.items():
            for _ in range(args.iters):
                t0 = time.perf_counter()
                e.embed_many([SHORT_QUESTION])
                b1[name].append(time.perf_counter() - t0)
            for i in range(args.batches):
                batch = batches[i % len(batches)]
                t0 = time.perf_counter()
                e.embed_many(batch)
                b16[name].append((time.perf_counter() - t0, len(batch)))
    worker = {name: asyncio.run(worker_latency(e, SHORT_QUESTION, args.iters)) for name, e in backends.items()}

    result = {
        "bench": "embedder",
        "cpu": cpu_info(),
        "cores": os.cpu_count(),
        "threads": args.threads,
        "short_question": SHORT_QUESTION,
        "questions": len(qs),
        "onnx_cache": str(cache_root()),
        "backends": {},
    }
    for name, e in backends.items():
        secs = sum(t for t, _ in b16[name])
        texts = sum(n for _, n in b16[name])
        result["backends"][name] = {
            "load_s": load_s[name],
            "batch1": percentiles(b1[name]),
            "worker_batch1": percentiles(worker[name]) | {"max_wait_ms": e.max_wait_s * 1e3},
            "batch16": {"texts_per_s": round(texts / secs, 1), "ms_per_text": round(secs / texts * 1e3, 3)},
            "agreement_vs_torch_fp32": agreement[name],
        }
        e.close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
