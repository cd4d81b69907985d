"""Measure the semantic cache's precision and recall on a set of question pairs.

    python scripts/eval_cache.py --pairs tests/data/cache/dev.jsonl [--threshold T] [--store file|redis]

Each line of the pairs file: ``{"a": ..., "b": ..., "same_answer": bool, "category": str?}`` where
``a``/``b`` is a question string or an OpenAI ``messages`` list ending with a user message. For every
pair, ``a`` is stored (with a dummy answer) in a scope of its own, then ``b`` is looked up through
``SemanticCache.lookup`` -- the gateway's code path, scope included: for message lists the system
prompt and earlier turns are part of the scope, so a changed context is a scope mismatch and a miss.
A hit is a lookup of kind "exact" or "semantic".

Prints JSON: recall (hits among same-answer pairs) and false-hit rate (hits among different-answer
pairs), overall and per category, at the configured threshold; a threshold sweep with and without the
precision guard; and the pairs that were served wrongly. Writes a PNG of the sweep to ``out/``.

Each distinct question is embedded once (``Embedder.embed_many``); lookups then take the vectors
from that table, so the sweep needs no further model calls. The sweep comes from one extra pass with
an (almost) zero threshold: a pair hits at threshold T when it is an exact hit, or when its best
candidate has cosine >= T and (with the guard) passed the guard -- the same rule ``lookup`` applies,
since each pair's scope holds exactly one entry.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.cache import CacheConfig, CacheScope, SemanticCache  # noqa: E402
from gateway.cache.embedder import Embedder  # noqa: E402

MODEL = "eval-model"
PARAMS = {"temperature": 0}
SWEEP = [round(0.70 + 0.02 * i, 2) for i in range(15)]  # 0.70 .. 0.98


class TableEmbedder:
    """The Embedder interface over precomputed vectors (falls back to the real model)."""

    def __init__(self, embedder: Embedder, texts: list[str]):
        self._embedder = embedder
        vecs = embedder.embed_many(texts)
        self._table = {t: vecs[i] for i, t in enumerate(texts)}

    def __getattr__(self, name: str):
        # All but embed (dim, forward_passes, texts_embedded, start, close) is the real embedder's.
        return getattr(self._embedder, name)

    async def embed(self, text: str) -> np.ndarray:
        vec = self._table.get(text)
        return vec if vec is not None else await self._embedder.embed(text)


def load_pairs(path: str) -> list[dict]:
    pairs = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            row = json.loads(line)
            for key in ("a", "b", "same_answer"):
                if key not in row:
                    raise SystemExit(f"{path}:{n}: missing {key!r}")
            row.setdefault("category", "uncategorized")
            pairs.append(row)
    return pairs


def as_messages(x) -> list[dict]:
    return [{"role": "user", "content": x}] if isinstance(x, str) else list(x)


def make_cache(config: CacheConfig, embedder: TableEmbedder) -> SemanticCache:
    return SemanticCache(config, embedder=embedder)  # type: ignore[arg-type]


async def run_pass(cache: SemanticCache, pairs: list[dict], run_id: str) -> list[dict]:
    """Store a, look up b, per pair, in a tenant of its own. Returns one result per pair."""
    out = []
    for i, pair in enumerate(pairs):
        tenant = f"eval-{run_id}-{i}"
        try:
            scope_a, qa = CacheScope.from_request(tenant, MODEL, as_messages(pair["a"]), PARAMS)
            scope_b, qb = CacheScope.from_request(tenant, MODEL, as_messages(pair["b"]), PARAMS)
        except ValueError as exc:
            out.append({"kind": "invalid", "similarity": None, "reason": str(exc)})
            continue
        stored = await cache.store(
            scope_a, qa, f"answer to pair {i}", "stop", {"prompt_tokens": 1, "completion_tokens": 1}, MODEL
        )
        res = await cache.lookup(scope_b, qb)
        out.append(
            {
                "kind": res.kind,
                "similarity": res.similarity,
                "reason": res.reason,
                "stored": stored,
                "scope_match": scope_a.key() == scope_b.key(),
            }
        )
    return out


def rates(pairs: list[dict], hits: list[bool]) -> dict:
    same = [h for p, h in zip(pairs, hits) if p["same_answer"]]
    diff = [h for p, h in zip(pairs, hits) if not p["same_answer"]]
    return {
        "recall": round(float(np.mean(same)), 4) if same else None,
        "false_hit_rate": round(float(np.mean(diff)), 4) if diff else None,
        "same_answer_pairs": len(same),
        "hits_on_same": int(sum(same)),
        "different_answer_pairs": len(diff),
        "hits_on_different": int(sum(diff)),
    }


def sweep_hit(result: dict, threshold: float, guard: bool) -> bool:
    kind, sim = result["kind"], result["similarity"]
    if kind == "exact":
        return True
    if sim is None or sim < threshold:
        return False
    return kind == "semantic" or (not guard and kind == "guard_rejected")


def plot(sweep: list[dict], threshold: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ts = [s["threshold"] for s in sweep]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(ts, [s["guard"]["recall"] for s in sweep], "o-", color="tab:blue", label="recall, guard on")
    ax.plot(ts, [s["guard"]["false_hit_rate"] for s in sweep], "o-", color="tab:red", label="false hits, guard on")
    ax.plot(ts, [s["no_guard"]["recall"] for s in sweep], "--", color="tab:blue", alpha=0.5, label="recall, no guard")
    ax.plot(
        ts,
        [s["no_guard"]["false_hit_rate"] for s in sweep],
        "--",
        color="tab:red",
        alpha=0.5,
        label="false hits, no guard",
    )
    ax.axvline(threshold, color="gray", lw=1, ls=":", label=f"configured threshold {threshold}")
    ax.axhline(0.02, color="tab:red", lw=0.8, ls=":")
    ax.axhline(0.60, color="tab:blue", lw=0.8, ls=":")
    ax.set_xlabel("cosine threshold")
    ax.set_ylabel("rate")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Semantic cache: recall and false-hit rate vs threshold")
    ax.legend(fontsize=8, loc="center left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


async def evaluate(args) -> dict:
    pairs = load_pairs(args.pairs)
    texts = sorted(
        {
            m[-1]["content"]
            for p in pairs
            for m in (as_messages(p["a"]), as_messages(p["b"]))
            if m and isinstance(m[-1].get("content"), str)
        }
    )
    t0 = time.perf_counter()
    embedder = TableEmbedder(Embedder(quantize=args.embed_quantize), texts)
    t_embed = time.perf_counter() - t0

    base = CacheConfig()
    config = replace(
        base,
        threshold=args.threshold if args.threshold is not None else base.threshold,
        guard=not args.no_guard,
        store=args.store,
        embed_quantize=args.embed_quantize,
        flush_interval_s=60.0,
        purge_interval_s=3600.0,
    )
    if args.store == "redis":
        config = replace(config, redis_url=args.redis_url, redis_prefix=f"jaxserve:eval:{uuid.uuid4().hex[:8]}:")
    probe_config = replace(config, threshold=1e-6, guard=True)
    if args.store == "redis":
        probe_config = replace(probe_config, redis_prefix=config.redis_prefix + "probe:")

    with tempfile.TemporaryDirectory() as tmp:
        if args.store == "file":
            config = replace(config, path=os.path.join(tmp, "eval.jsonl"))
            probe_config = replace(probe_config, path=os.path.join(tmp, "probe.jsonl"))
        cache = make_cache(config, embedder)
        probe = make_cache(probe_config, embedder)
        await cache.start()
        await probe.start()
        try:
            t1 = time.perf_counter()
            results = await run_pass(cache, pairs, "main")
            t_pass = time.perf_counter() - t1
            probe_results = await run_pass(probe, pairs, "probe")
            stats = cache.stats()
        finally:
            for c in (cache, probe):
                if args.store == "redis":
                    await c.store_backend.clear()
                await c.close()

    hits = [r["kind"] in ("exact", "semantic") for r in results]
    by_cat: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pairs):
        by_cat[p["category"]].append(i)
    per_category = {}
    for cat, idx in sorted(by_cat.items()):
        r = rates([pairs[i] for i in idx], [hits[i] for i in idx])
        entry = {"pairs": len(idx)}
        if r["same_answer_pairs"]:
            entry.update(recall=r["recall"], hits=r["hits_on_same"])
        if r["different_answer_pairs"]:
            entry.update(false_hit_rate=r["false_hit_rate"], false_hits=r["hits_on_different"])
        entry["kinds"] = dict(Counter(results[i]["kind"] for i in idx))
        per_category[cat] = entry

    sweep = []
    for t in SWEEP:
        sweep.append(
            {
                "threshold": t,
                "guard": {
                    k: v
                    for k, v in rates(pairs, [sweep_hit(r, t, True) for r in probe_results]).items()
                    if k in ("recall", "false_hit_rate")
                },
                "no_guard": {
                    k: v
                    for k, v in rates(pairs, [sweep_hit(r, t, False) for r in probe_results]).items()
                    if k in ("recall", "false_hit_rate")
                },
            }
        )

    def show(x):
        return x if isinstance(x, str) else " / ".join(f"{m['role']}: {m['content']}" for m in x)

    false_hits = [
        {
            "category": p["category"],
            "a": show(p["a"]),
            "b": show(p["b"]),
            "kind": r["kind"],
            "similarity": None if r["similarity"] is None else round(r["similarity"], 4),
        }
        for p, r in zip(pairs, results)
        if not p["same_answer"] and r["kind"] in ("exact", "semantic")
    ]
    guard_reasons = Counter(r["reason"].split(":")[0] for r in results if r["kind"] == "guard_rejected")
    overall = rates(pairs, hits)
    report = {
        "pairs_file": args.pairs,
        "pairs": len(pairs),
        "store": args.store,
        "threshold": config.threshold,
        "guard": config.guard,
        "overall": overall,
        "targets": {
            "false_hit_rate_max": 0.02,
            "recall_min": 0.60,
            "met": bool(
                overall["false_hit_rate"] is not None
                and overall["false_hit_rate"] <= 0.02
                and overall["recall"] is not None
                and overall["recall"] >= 0.60
            ),
        },
        "per_category": per_category,
        "lookup_kinds": dict(Counter(r["kind"] for r in results)),
        "guard_rejections_by_rule": dict(guard_reasons.most_common()),
        "sweep": sweep,
        "false_hits": false_hits,
        "timing_s": {
            "embed_distinct_texts": round(t_embed, 2),
            "store_and_lookup_pass": round(t_pass, 2),
            "distinct_texts": len(texts),
        },
        "cache_stats": {k: stats[k] for k in ("lookups", "stores", "errors")},
    }
    if not args.no_plot:
        png = Path(args.out_dir) / "cache_eval_sweep.png"
        plot(sweep, config.threshold, png)
        report["plot"] = str(png)
    return report


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", required=True, help="JSON-lines pair file")
    p.add_argument("--threshold", type=float, default=None, help="cosine threshold (default: CacheConfig's)")
    p.add_argument("--store", choices=("file", "redis"), default="file")
    p.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    p.add_argument("--no-guard", action="store_true", help="evaluate without the precision guard")
    p.add_argument(
        "--embed-quantize",
        choices=("none", "int8"),
        default="none",
        help="evaluate the int8 (dynamically quantized) embedder",
    )
    p.add_argument("--out-dir", default="out")
    p.add_argument("--no-plot", action="store_true")
    args = p.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    report = asyncio.run(evaluate(args))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
