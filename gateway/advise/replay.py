"""Replay a recording (``gateway.advise.recording``) on the engine, as configured and as proposed.

    python -m gateway.advise --replay RECORDING [--model smollm2-135m] [--base KEY=VALUE ...]
                             [--try KEY=VALUE ...] [--time-scale 1] [--max-requests 200]
                             [--ttft-slo 1.0] [--tpot-slo 0.1] [--tiers configs/tiers.yaml] [--json]

Each recorded request that reached a model becomes one engine request with the same arrival time
(times ``--time-scale``), prompt length, prefix sharing and output length (``recording.prompt_of``);
``runtime.replay.drive`` runs them in real time, in this process, and times them. The same shape runs on
``EngineConfig(model, **base)`` and with the ``--try`` keys changed (any ``EngineConfig`` field:
max_num_seqs, max_num_batched_tokens, kv_dtype, weight_quant, enable_prefix_caching, kv_cache_bytes,
...), each engine's step programs compiled and primed before its clock starts. A row (``replay``): TTFT
and TPOT p50/p99, goodput (the share of requests within both service levels), the peak KV usage,
preemptions, prefix-cache hit rate, output tokens per second, cost.

Three keys are not engine fields (``SPECIAL``):

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
This module is the gateway's one road to an engine outside an in-process tier (pyproject.toml's
contract names it): the JAX import happens inside ``replay``, so ``gateway.advise`` loads without it.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import statistics
import sys
from pathlib import Path

from gateway.advise.recording import cache_outcome, load, prompt_of

SPECIAL = ("cache", "tier", "cache_threshold")  # replay keys that are not EngineConfig fields
TIERS = Path(__file__).resolve().parents[2] / "configs" / "tiers.yaml"


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
    engine=None,
) -> dict:
    """One run of ``shapes`` on ``config`` (an ``EngineConfig``): the row. ``warmup=False`` (tests) compiles
    as it goes. ``engine``: one already open on ``config`` (its prefix cache is emptied first:
    ``runtime.replay.reset``); without it one is opened for this run and dropped after."""
    from runtime.replay import Arrival, drive, open_engine, reset

    own = engine is None
    if own:
        engine = open_engine(config, warmup=warmup)
    else:
        reset(engine)
    vocab, limit = engine.model_config.vocab_size, config.max_model_len
    arrivals, shape_of = [], {}
    for i, s in enumerate(shapes):
        out = max(1, int(s.get("output_tokens") or 1))
        ids = prompt_of(s, i, vocab)[: max(1, limit - out - 1)]
        arrivals.append(Arrival(s["t"] * time_scale, f"r{i}", ids, out))
        shape_of[f"r{i}"] = s
    prices = prices or {}
    answered: set = set()  # ``asked`` numbers answered so far: what an exact cache holds
    tally = {"hits": 0, "unchecked": 0, "cost": 0.0}

    def admit(a: Arrival, finished: set[str]) -> bool:
        shape = shape_of[a.request_id]
        answered.update(shape_of[r].get("asked") for r in finished)
        looked = cache_outcome(shape, cache_threshold)
        if looked != "miss" or (cache == "exact" and shape.get("asked") is not None and shape["asked"] in answered):
            tally["hits"] += 1
            tally["unchecked"] += looked == "unchecked"
            return False
        p_in, p_out = prices.get(tier or shape.get("tier"), (0.0, 0.0))
        tally["cost"] += (len(a.prompt_ids) * p_in + a.max_tokens * p_out) / 1e6
        return True

    run = drive(engine, arrivals, admit=admit)
    if own:
        engine = None
        gc.collect()  # the next configuration's engine is built after this one's arrays are gone
    served = run.timings.values()
    ttft = [t.first - t.arrival for t in served if t.first is not None]
    tpot = [(t.done - t.first) / (t.tokens - 1) for t in served if t.done is not None and t.tokens > 1]
    within = {
        rid
        for rid, t in run.timings.items()
        if t.done is not None
        and t.first - t.arrival <= ttft_slo
        and (t.tokens < 2 or (t.done - t.first) / (t.tokens - 1) <= tpot_slo)
    }
    good = tally["hits"] + len(within)
    return {
        "requests": len(arrivals),
        "cache_hits": tally["hits"],
        "cache_hits_unchecked": tally["unchecked"],
        "cost_usd": round(tally["cost"], 8),
        "ttft_s": {"p50": quantile(ttft, 0.5), "p99": quantile(ttft, 0.99)},
        "tpot_s": {"p50": quantile(tpot, 0.5), "p99": quantile(tpot, 0.99)},
        "goodput": good / max(1, len(arrivals)),
        "peak_kv_usage": run.peak_kv_usage,
        "preemptions": run.preemptions,
        "prefix_cache_hit_rate": run.prefix_cache_hit_rate,
        "output_tokens_per_s": sum(t.tokens for t in served) / run.wall_s,
        "wall_s": run.wall_s,
        "mean_tpot_s": statistics.fmean(tpot) if tpot else None,
        # per request, in the recording's order: within both levels (a cache hit is), so the tuner can
        # count which requests changed sides between two runs of one configuration (``tune.noise_of``);
        # and the engine's requests' TTFTs and TPOTs, from which the report calibrates its levels
        "within": [f"r{i}" in within or f"r{i}" not in run.timings for i in range(len(arrivals))],
        "ttfts": ttft,
        "tpots": tpot,
    }


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


def replayable(path: str | Path, max_requests: int) -> list[dict]:
    """The lines a replay sends or counts: those that reached a model, and recorded cache hits."""
    shapes = [s for s in load(path, reached_a_model=False) if s.get("prompt_tokens", 0) > 0 or s.get("cache") == "hit"]
    return shapes[:max_requests]


@dataclasses.dataclass(frozen=True)
class Replayer:
    """One recording, its service levels and prices: ``run(keys)`` replays it on the engine ``keys`` name
    (EngineConfig fields and ``SPECIAL`` keys, with ``model``) and answers the row. The tuner calls it once
    per candidate.

    It keeps the last ``keep`` (2) engines it opened: a configuration replayed again (the tuner's current
    configuration between candidates, and the confirmation's interleaved replays of the current
    configuration and a leader) reuses its engine, its prefix cache emptied, instead of building and
    compiling it anew (minutes on a busy CPU). The runs on one engine then differ by the run alone, not by
    a rebuild. A third configuration's engine is built only after the least recently used one is released
    (two SmolLM2 engines hold about 1.5 GB). ``close()`` releases them all."""

    shapes: list[dict]
    ttft_slo: float
    tpot_slo: float
    time_scale: float = 1.0
    tiers: str | Path = TIERS
    warmup: bool = True
    reuse: bool = True
    keep: int = 2
    _open: list = dataclasses.field(default_factory=list, compare=False, repr=False)  # [(config, engine)], oldest first

    def close(self) -> None:
        self._open.clear()
        gc.collect()

    def engine_for(self, config):
        """The open engine that runs ``config``, else a new one (the least recently used released first when
        ``keep`` are open)."""
        for i, (cfg, engine) in enumerate(self._open):
            if cfg == config:
                self._open.append(self._open.pop(i))
                return engine
        while len(self._open) >= max(1, self.keep):
            self._open.pop(0)
            gc.collect()
        from runtime.replay import open_engine

        self._open.append((config, open_engine(config, warmup=self.warmup)))
        return self._open[-1][1]

    def run(self, keys: dict, *, tier_sets_model: bool = True, slo: tuple[float, float] | None = None) -> dict:
        """The row for ``keys``; ``slo`` (TTFT, TPOT seconds) replaces the replayer's service levels for
        this run (the report calibrates them on a first run of the same engine)."""
        from runtime.api import EngineConfig

        prices, models = read_tiers(self.tiers)
        tier = keys.get("tier")
        if tier is not None and tier not in prices:
            raise SystemExit(f"error: tier={tier!r} is not in {self.tiers}")
        # every step program compiled and run once before the clock starts: no first-run cost in the rows
        engine = {"prime_programs": True, **{k: v for k, v in keys.items() if k not in SPECIAL}}
        if tier is not None and tier_sets_model:  # tier=NAME runs that tier's model unless keys name one
            engine["model"] = models.get(tier, engine["model"])
        config = EngineConfig(**engine)
        return replay(
            self.shapes,
            config,
            time_scale=self.time_scale,
            ttft_slo=self.ttft_slo if slo is None else slo[0],
            tpot_slo=self.tpot_slo if slo is None else slo[1],
            cache=keys.get("cache", "none"),
            prices=prices,
            tier=tier,
            cache_threshold=keys.get("cache_threshold"),
            warmup=self.warmup,
            engine=self.engine_for(config) if self.reuse else None,
        )


def compare(
    recording: str | Path,
    *,
    model: str,
    base: dict,
    proposed: dict,
    ttft_slo: float,
    tpot_slo: float,
    time_scale: float = 1.0,
    max_requests: int = 200,
    tiers: str | Path = TIERS,
) -> dict:
    """The current configuration (``base`` keys) against the proposed (``base`` with ``proposed``'s keys
    changed) on one recording: ``{"recording", "slo", "current": row, "proposed": row}``, each row with its
    ``config``. Raises ``ValueError`` when no line of the recording reached a model."""
    shapes = replayable(recording, max_requests)
    current, changed = {"model": model, **base}, {"model": model, **base, **proposed}
    rethreshold = "cache_threshold" in current or "cache_threshold" in changed
    if not any(s.get("cache") != "hit" for s in shapes) and not rethreshold:
        raise ValueError(f"{recording}: no request that reached a model")
    replayer = Replayer(shapes, ttft_slo, tpot_slo, time_scale, tiers)
    rows = {}
    for name, keys, own in (("current", current, base), ("proposed", changed, proposed)):
        print(f"replaying {len(shapes)} requests on {name}: {keys}", file=sys.stderr)
        rows[name] = {"config": keys, **replayer.run(keys, tier_sets_model="model" not in own)}
    replayer.close()
    return {"recording": str(recording), "slo": {"ttft_s": ttft_slo, "tpot_s": tpot_slo}, **rows}


ROWS = (
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
)


def show(report: dict) -> str:
    """``compare``'s answer as the side-by-side table the CLI prints."""
    fmt = lambda v: "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = [f"{'':24}{'current':>14}{'proposed':>14}"]
    for label, get in ROWS:
        lines.append(f"{label:24}{fmt(get(report['current'])):>14}{fmt(get(report['proposed'])):>14}")
    return "\n".join(lines)


def main(args) -> int:
    """``python -m gateway.advise --replay``: ``args`` from its parser (gateway.advise.cli)."""
    try:
        report = compare(
            args.replay,
            model=args.model,
            base=parse_try(args.base),
            proposed=parse_try(args.try_),
            ttft_slo=args.ttft_slo,
            tpot_slo=args.tpot_slo,
            time_scale=args.time_scale,
            max_requests=args.max_requests,
            tiers=args.tiers or TIERS,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2) if args.json else show(report))
    return 0
