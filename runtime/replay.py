"""Replay a recorded traffic shape (gateway/recorder.py) against the engine, as configured and as proposed.

    python -m runtime.replay RECORDING [--model smollm2-135m] [--try KEY=VALUE ...] [--time-scale 1]
                             [--max-requests 200] [--ttft-slo 1.0] [--tpot-slo 0.1] [--json]

Each recorded request that reached a model becomes one engine request with the same arrival time
(times ``--time-scale``), prompt length, prefix sharing and output length: a recorded ``blocks``
number always stands for the same 16 tokens (drawn from it as a seed), so requests that shared a
prefix share it again; the rest of a prompt is tokens of its own; ``ignore_eos`` with
``max_tokens = output_tokens`` makes it answer exactly as long. The same shape runs twice in this process,
on ``EngineConfig(model, **base)`` and with the ``--try`` keys changed (any ``EngineConfig`` field:
max_num_seqs, max_num_batched_tokens, kv_dtype, weight_quant, enable_prefix_caching, kv_cache_bytes,
...), each engine's step programs compiled before its clock starts; both rows print side by side:
TTFT and TPOT p50/p99, goodput (the share of requests within both service levels), the peak KV usage,
preemptions, prefix-cache hit rate, output tokens per second, cost. Prints JSON with ``--json``.

Two keys are not engine fields:

    cache=exact   a request that asks what an earlier, already answered one asked (the recording's
                  ``asked`` numbers) is answered from a cache: it never reaches the engine and costs
                  nothing. An exact cache only: a semantic one answers at least these (and paraphrases,
                  which a shape cannot show). Hits count toward goodput; the latency rows are the
                  engine's requests'.
    tier=NAME     price the answers at that tier of ``--tiers`` (configs/tiers.yaml), and run its model
                  unless ``model`` is given too. Without it each line is priced at its recorded tier.
    cache_threshold=T
                  the semantic cache's cosine threshold, re-decided from each line's recorded ``lookup``
                  and ``similarity``: a semantic hit below T is a miss (sent to the engine: its length is
                  known, its prefix sharing is not); a miss whose best candidate reached T is a hit, counted
                  apart as ``cache_hits_unchecked``: the precision checker never read it, so with the guard
                  on it is an upper bound (what such hits are worth is docs/CACHE_EVAL.md's question, not a
                  shape's); checker refusals and exact hits stand at any T. Without the key every recorded
                  hit is a hit.

Recorded cache hits count in every row as answered (free, within the service levels, ``cache_hits``).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import random
import statistics
import sys
import time
from pathlib import Path

BLOCK = 16


def load(path: str | Path, *, reached_a_model: bool = True) -> list[dict]:
    """A recording's lines (gateway/recorder.py writes them), in arrival order; by default only the requests
    that reached a model (not answered from the cache, with a prompt), which are what a replay sends."""
    lines = [json.loads(x) for x in Path(path).expanduser().read_text().splitlines() if x.strip()]
    if reached_a_model:
        lines = [r for r in lines if r.get("cache") != "hit" and r.get("prompt_tokens", 0) > 0]
    return sorted(lines, key=lambda r: r["t"])


def prompt_of(shape: dict, index: int, vocab: int) -> list[int]:
    """Tokens with the recorded prefix sharing: block number b is always the same 16 tokens."""
    ids: list[int] = []
    for b in shape.get("blocks", ()):
        ids += random.Random(b * 7919 + 1).choices(range(100, vocab - 100), k=BLOCK)
    rest = shape["prompt_tokens"] - len(ids)
    if rest > 0:
        ids += random.Random(-1 - index).choices(range(100, vocab - 100), k=rest)
    return ids[: shape["prompt_tokens"]]


def quantile(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def read_tiers(path: str | Path) -> tuple[dict[str, tuple[float, float]], dict[str, str]]:
    """From a tiers file (configs/tiers.yaml): tier -> (input, output) USD per million tokens, and tier ->
    model. No file: neither."""
    import yaml

    if not Path(path).expanduser().exists():
        return {}, {}
    spec = yaml.safe_load(Path(path).expanduser().read_text()) or {}
    prices, models = {}, {}
    for t in spec.get("tiers", []):
        price = t.get("price") or {}
        prices[t["name"]] = (float(price.get("input_per_mtok", 0.0)), float(price.get("output_per_mtok", 0.0)))
        if t.get("model"):
            models[t["name"]] = t["model"]
    return prices, models


def replay(
    shapes: list[dict],
    config,
    *,
    time_scale: float,
    ttft_slo: float,
    tpot_slo: float,
    cache: str = "none",
    prices: dict | None = None,
    tier: str | None = None,
    cache_threshold: float | None = None,
    warmup: bool = True,
) -> dict:
    """One run of ``shapes`` on ``config``: the row. ``warmup=False`` (tests) compiles as it goes."""
    from runtime.api import SamplingParams
    from runtime.engine.llm_engine import LLMEngine

    engine = LLMEngine(config)
    if warmup:
        engine.warmup()
    vocab = engine.model_config.vocab_size
    limit = config.max_model_len
    reqs = []
    for i, s in enumerate(shapes):
        out = max(1, int(s.get("output_tokens") or 1))
        ids = prompt_of(s, i, vocab)[: max(1, limit - out - 1)]
        reqs.append((s["t"] * time_scale, f"r{i}", ids, SamplingParams(max_tokens=out, ignore_eos=True), s))
    prices = prices or {}
    t0 = time.perf_counter()
    arrival, first, done, tokens = {}, {}, {}, {}
    answered: set = set()  # ``asked`` numbers answered so far: what an exact cache holds
    asked_of: dict[str, object] = {}
    hits, unchecked, cost = 0, 0, 0.0
    peak_kv = 0.0
    pending = list(reqs)
    before = engine.stats()
    while pending or engine.has_unfinished_requests():
        now = time.perf_counter() - t0
        while pending and pending[0][0] <= now:
            _, rid, ids, sp, shape = pending.pop(0)
            asked = shape.get("asked")
            looked = cache_outcome(shape, cache_threshold)
            if looked != "miss":
                hits += 1
                unchecked += looked == "unchecked"
                continue
            if cache == "exact" and asked is not None and asked in answered:
                hits += 1
                continue
            p_in, p_out = prices.get(tier or shape.get("tier"), (0.0, 0.0))
            cost += (len(ids) * p_in + sp.max_tokens * p_out) / 1e6
            asked_of[rid] = asked
            engine.add_request(ids, sp, rid)
            arrival[rid] = time.perf_counter()
        if not engine.has_unfinished_requests():
            if pending:
                time.sleep(max(0.0, min(0.05, pending[0][0] - now)))
            continue
        for o in engine.step():
            t = time.perf_counter()
            if o.token_ids and o.request_id not in first:
                first[o.request_id] = t
            tokens[o.request_id] = tokens.get(o.request_id, 0) + len(o.token_ids)
            if o.finished:
                done[o.request_id] = t
                answered.add(asked_of.get(o.request_id))
        peak_kv = max(peak_kv, engine.stats().kv_cache_usage)
    wall = time.perf_counter() - t0
    after = engine.stats()
    ttft = [first[r] - arrival[r] for r in first]
    tpot = [(done[r] - first[r]) / (tokens[r] - 1) for r in done if tokens.get(r, 0) > 1]
    good = hits + sum(
        1
        for r in done
        if first[r] - arrival[r] <= ttft_slo and (tokens[r] < 2 or (done[r] - first[r]) / (tokens[r] - 1) <= tpot_slo)
    )
    queries = after.prefix_cache_queries - before.prefix_cache_queries
    row = {
        "requests": len(reqs),
        "cache_hits": hits,
        "cache_hits_unchecked": unchecked,
        "cost_usd": round(cost, 8),
        "ttft_s": {"p50": quantile(ttft, 0.5), "p99": quantile(ttft, 0.99)},
        "tpot_s": {"p50": quantile(tpot, 0.5), "p99": quantile(tpot, 0.99)},
        "goodput": good / max(1, len(reqs)),
        "peak_kv_usage": round(peak_kv, 3),
        "preemptions": after.num_preemptions_total - before.num_preemptions_total,
        "prefix_cache_hit_rate": (after.prefix_cache_hits - before.prefix_cache_hits) / queries if queries else 0.0,
        "output_tokens_per_s": sum(tokens.values()) / wall,
        "wall_s": wall,
        "mean_tpot_s": statistics.fmean(tpot) if tpot else None,
    }
    del engine
    gc.collect()
    return row


def cache_outcome(shape: dict, threshold: float | None) -> str:
    """A recorded line at cosine threshold ``threshold`` (None: as recorded): "hit", "unchecked" (a hit
    only the threshold decided, which the precision checker never read) or "miss"."""
    if threshold is None:
        return "hit" if shape.get("cache") == "hit" else "miss"
    lookup, sim = shape.get("lookup"), shape.get("similarity")
    if lookup == "exact":
        return "hit"
    if lookup == "semantic":
        return "hit" if sim is not None and sim >= threshold else "miss"
    if lookup == "miss" and sim is not None and sim >= threshold:
        return "unchecked"
    return "miss"  # refused by the checker (its verdict stands), bypassed, failed, or below T


SPECIAL = ("cache", "tier", "cache_threshold")  # replay keys that are not EngineConfig fields (the module's docstring)


def parse_try(items: list[str]) -> dict:
    """``KEY=VALUE`` pairs: VALUE read as JSON when it is (8, 0.5, true, null), else a string (int8)."""
    from runtime.api import EngineConfig

    fields = {f.name for f in dataclasses.fields(EngineConfig)} | set(SPECIAL)
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.removeprefix("models[].engine.").removeprefix("engine.")
        if not sep or key not in fields:
            raise SystemExit(f"error: --try {item!r}: want KEY=VALUE with KEY one of {', '.join(sorted(fields))}")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    if out.get("cache", "none") not in ("none", "exact"):
        raise SystemExit(f"error: cache={out['cache']!r}: want none or exact")
    t = out.get("cache_threshold")
    if "cache_threshold" in out and not (isinstance(t, (int, float)) and not isinstance(t, bool) and 0 < t <= 1):
        raise SystemExit(f"error: cache_threshold={t!r}: want a cosine similarity in (0, 1]")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("recording")
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--base", action="append", default=[], metavar="KEY=VALUE", help="the current configuration")
    p.add_argument("--try", dest="try_", action="append", default=[], metavar="KEY=VALUE", help="the proposal")
    p.add_argument("--time-scale", type=float, default=1.0, help="arrival times times this")
    p.add_argument("--max-requests", type=int, default=200)
    p.add_argument("--ttft-slo", type=float, default=1.0)
    p.add_argument("--tpot-slo", type=float, default=0.1)
    p.add_argument("--tiers", default=str(Path(__file__).resolve().parent.parent / "configs" / "tiers.yaml"))
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    from runtime.api import EngineConfig
    from runtime.platform import configure_xla

    configure_xla()
    base = {"model": args.model, **parse_try(args.base)}
    proposed = {**base, **parse_try(args.try_)}
    shapes = [
        s
        for s in load(args.recording, reached_a_model=False)
        if s.get("prompt_tokens", 0) > 0 or s.get("cache") == "hit"
    ][: args.max_requests]
    rethreshold = "cache_threshold" in base or "cache_threshold" in proposed
    if not any(s.get("cache") != "hit" for s in shapes) and not rethreshold:
        print(f"error: {args.recording}: no request that reached a model", file=sys.stderr)
        return 2
    prices, models = read_tiers(args.tiers)
    rows = {}
    for name, kw in (("current", base), ("proposed", proposed)):
        print(f"replaying {len(shapes)} requests on {name}: {kw}", file=sys.stderr)
        # every step program compiled and run once before the clock starts: no first-run cost in the rows
        engine = {"prime_programs": True, **{k: v for k, v in kw.items() if k not in SPECIAL}}
        tier = kw.get("tier")
        if tier is not None and tier not in prices:
            raise SystemExit(f"error: tier={tier!r} is not in {args.tiers}")
        if tier is not None and "model" not in parse_try(args.try_ if name == "proposed" else args.base):
            engine["model"] = models.get(tier, engine["model"])
        rows[name] = {
            "config": kw,
            **replay(
                shapes,
                EngineConfig(**engine),
                time_scale=args.time_scale,
                ttft_slo=args.ttft_slo,
                tpot_slo=args.tpot_slo,
                cache=kw.get("cache", "none"),
                prices=prices,
                tier=tier,
                cache_threshold=kw.get("cache_threshold"),
            ),
        }
    report = {"recording": str(args.recording), "slo": {"ttft_s": args.ttft_slo, "tpot_s": args.tpot_slo}, **rows}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    fmt = lambda v: "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    print(f"{'':24}{'current':>14}{'proposed':>14}")
    for label, get in (
        ("TTFT p50 (s)", lambda r: r["ttft_s"]["p50"]),
        ("TTFT p99 (s)", lambda r: r["ttft_s"]["p99"]),
        ("TPOT p50 (s)", lambda r: r["tpot_s"]["p50"]),
        ("TPOT p99 (s)", lambda r: r["tpot_s"]["p99"]),
        ("goodput", lambda r: r["goodput"]),
        ("peak KV usage", lambda r: r["peak_kv_usage"]),
        ("preemptions", lambda r: r["preemptions"]),
        ("prefix-cache hit rate", lambda r: r["prefix_cache_hit_rate"]),
        ("output tokens / s", lambda r: r["output_tokens_per_s"]),
        ("cache hits", lambda r: r["cache_hits"]),
        ("  of which unchecked", lambda r: r["cache_hits_unchecked"]),
        ("cost (USD)", lambda r: r["cost_usd"]),
    ):
        print(f"{label:24}{fmt(get(rows['current'])):>14}{fmt(get(rows['proposed'])):>14}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
