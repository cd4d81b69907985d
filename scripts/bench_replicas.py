"""Cross-replica cache propagation: how soon an answer cached through gateway A is a hit on the others.

Starts a Redis server of its own (or uses --redis-url with a fresh key prefix), one runtime server
(SmolLM2) as the model tier, and ``--gateways`` ``python -m gateway`` processes on that Redis. Then,
for each of ``--entries`` distinct questions:

    1. ask gateway A (a miss: the model answers; A stores the answer in Redis and publishes its id)
    2. poll every other gateway's /metrics until ``gateway_cache_remote_adds_total`` counts it: the
       delay after A's answer (A stores before it answers, so this is often one scrape, ~ms)
    3. ask one other gateway the same question: must be an exact hit

and finally reads each other gateway's own measure, ``gateway_cache_propagation_seconds`` (A's
entry creation -> its index holding it; quantiles over these entries), which does not depend on
when the client happened to look. Prints one JSON object and writes it to --out.

    python scripts/bench_replicas.py [--entries 30] [--gateways 2] [--out out/bench_replicas.json]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

SUBJECTS = [
    "France",
    "Japan",
    "Canada",
    "Brazil",
    "Egypt",
    "Norway",
    "Kenya",
    "Italy",
    "Peru",
    "India",
    "Spain",
    "Chile",
    "Greece",
    "Sweden",
    "Mexico",
    "Turkey",
    "Poland",
    "Vietnam",
    "Ghana",
    "Ireland",
]
TEMPLATES = ["What is the capital of {}?", "What language is spoken in {}?", "What currency does {} use?"]
PARAMS = {"temperature": 0, "max_tokens": 48, "stop": ["."]}
KEY = "sk-bench-replicas"


def questions(n: int) -> list[str]:
    qs = [t.format(s) for t in TEMPLATES for s in SUBJECTS]
    if n > len(qs):
        raise SystemExit(f"--entries: at most {len(qs)}")
    return qs[:n]


def metrics(url: str) -> str:
    return urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()


def value(text: str, name: str) -> float | None:
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def ask(url: str, question: str) -> tuple[dict, dict]:
    from tests.support.gateway_server import chat_body, http

    status, headers, raw = http(
        url, chat_body("small", question, **PARAMS), headers={"Authorization": f"Bearer {KEY}"}, timeout=300
    )
    if status != 200:
        raise SystemExit(f"{url}: HTTP {status}: {raw[:200]!r}")
    return {k.lower(): v for k, v in headers.items()}, json.loads(raw)


def pct(values: list[float], q: float) -> float | None:
    return round(float(np.quantile(values, q)) * 1000, 2) if values else None


def own_redis() -> tuple[str, callable]:
    """A redis-server of this run's own on a free loopback port: (its URL, how to stop it)."""
    from tests.support.redis_server import RedisServer

    if not shutil.which("redis-server"):
        raise SystemExit("redis-server is not installed; give --redis-url")
    server = RedisServer().start()
    return server.url, server.stop


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--entries", type=int, default=30)
    p.add_argument("--gateways", type=int, default=2, help="gateway processes (>= 2)")
    p.add_argument("--redis-url", help="an existing Redis (a fresh key prefix is used); default: start one")
    p.add_argument("--out", default="out/bench_replicas.json")
    args = p.parse_args(argv)
    if args.gateways < 2:
        p.error("--gateways: at least 2")
    from tests.support.processes import replica_gateways, replica_model, start_all, stop_all

    stop_redis = None
    redis_url = args.redis_url
    if redis_url is None:
        redis_url, stop_redis = own_redis()
    model = replica_model("bench-model")
    cache = {
        "store": "redis",
        "redis_url": redis_url,
        "redis_prefix": f"bench-replicas-{time.time_ns()}:",
        "cache_sampled": "always",
    }
    folder = tempfile.mkdtemp(prefix="bench-replicas-")
    gateways = replica_gateways(folder, model.url, cache, [f"bench-gateway-{i}" for i in range(args.gateways)])
    procs = [model, *gateways]
    try:
        t = time.perf_counter()
        start_all(procs)
        startup_s = time.perf_counter() - t
        a, others = gateways[0], gateways[1:]
        after_answer: list[float] = []
        answer_s: list[float] = []
        hit_s: list[float] = []
        skipped = hits = 0
        for i, q in enumerate(questions(args.entries)):
            before = [value(metrics(g.url), "gateway_cache_remote_adds_total") for g in others]
            t0 = time.perf_counter()
            h, body = ask(a.url, q)
            t1 = time.perf_counter()
            if h["x-cache"] != "miss" or body["choices"][0]["finish_reason"] != "stop":
                skipped += 1  # not stored (truncated answer): nothing to propagate
                continue
            answer_s.append(t1 - t0)
            for g, n in zip(others, before):
                while value(metrics(g.url), "gateway_cache_remote_adds_total") < n + 1:
                    if time.perf_counter() - t1 > 10:
                        raise SystemExit(f"{g.name} did not index entry {i} within 10 s")
                    time.sleep(0.002)
                after_answer.append(time.perf_counter() - t1)
            target = others[i % len(others)]
            t2 = time.perf_counter()
            h, _ = ask(target.url, q)
            hit_s.append(time.perf_counter() - t2)
            hits += h["x-cache"] == "hit"
        own = []
        for g in others:
            text = metrics(g.url)
            own.append(
                {
                    "gateway": g.name,
                    "remote_adds": value(text, "gateway_cache_remote_adds_total"),
                    "index_rebuilds": value(text, "gateway_cache_index_rebuilds_total"),
                    "created_to_indexed_ms": {
                        q: round(v * 1000, 2)
                        for q in ("0.5", "0.99")
                        if (v := value(text, f'gateway_cache_propagation_seconds{{quantile="{q}"}}')) is not None
                    },
                }
            )
        stored = len(answer_s)
        from runtime.platform import cpu_info

        report = {
            "cpu": cpu_info(),
            "gateways": args.gateways,
            "entries_asked": args.entries,
            "entries_stored": stored,
            "skipped_not_stop": skipped,
            "cross_replica_hits": hits,
            "hit_rate": round(hits / max(1, stored), 3),
            "startup_s": round(startup_s, 1),
            "after_answer_ms": {
                "p50": pct(after_answer, 0.5),
                "p99": pct(after_answer, 0.99),
                "max": round(max(after_answer) * 1000, 2) if after_answer else None,
            },
            "replica_measured": own,
            "miss_answer_ms_p50": pct(answer_s, 0.5),
            "hit_answer_ms_p50": pct(hit_s, 0.5),
            "note": "after_answer: client-observed, A stores before answering, resolution one /metrics scrape; "
            "created_to_indexed: each replica's own clock from A's entry creation to its index",
        }
    finally:
        stop_all(procs)
        if stop_redis is not None:
            stop_redis()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0 if hits == stored and stored else 1


if __name__ == "__main__":
    sys.exit(main())
