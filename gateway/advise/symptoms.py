"""The symptom-to-remedy tree: one function per branch, ``diagnose`` walking them over parsed metrics.

In: a ``gateway.advise.metrics.parse`` result (one scrape: since the gateway started) or a ``subtract``
of two (a window, ``gateway.advise.history``). Out: findings: the symptom (``ttft``, ``tpot``,
``memory``, ``cost``), the cause, the evidence figures, the remedy, the configuration key to change, the traps, and the change
as replay keys (``proposal``: what ``gateway.advise.replay`` runs to prove it,
and what ``gateway.advise.tune`` starts its candidates from). The tree, in the order it is walked::

    TTFT high?  long prompts, shared, prefix cache off  -> enable_prefix_caching (first: a prefill redone
                                                           every time is also what builds a queue)
                long prompts, prefix cache cold         -> prompts shared (engines count it, on or off) but
                                                           evicted: a larger KV cache; unshared: truncation
                queueing (queue time is most of TTFT)   -> decode steps under half the TPOT level: a larger
                                                           max_num_seqs (trap: it raises TPOT); else a replica
                else                                    -> prefill compute: disaggregation (--role decode)
    TPOT high?  TPOT p50 over 3 decode-only steps       -> prefill interference: half the chunk
                                                           (max_num_batched_tokens), or disaggregation
                a decode batch of one or two            -> the weights' read is the cost: int8 (int4 from int8;
                                                           from 4 bits, a faster device); read rate, roofline
                a big batch                             -> the batch is the cost: a lower max_num_seqs
    Memory?     preemptions and the KV cache filled up  -> kv_dtype int8 / fewer sequences / shorter context
    Cost?       most spend on the priciest tier         -> a smaller tier for what it can do (auto)
                exact repeats are a third of the spend  -> the semantic cache (or let sampled requests use it)

Every threshold below is a named constant, chosen from the tree's wording, not fitted to a workload.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from gateway.advise.metrics import by_label, by_model, decode_steps, merged, parse

QUEUE_SHARE = 0.5  # queue time over this share of TTFT: TTFT is waiting, not prefill
LONG_PROMPT_TOKENS = 1024  # mean prompt tokens per request above this: "context too long"
COLD_PREFIX = 0.3  # prefix-cache hit rate below this: the shared prefix is not being reused
SHARED_PREFIX = 0.5  # at least this share of prompt tokens begin as an earlier prompt did: a cache can reuse them
FEW_RUNNING = 2.0  # mean running requests per engine under this: decode is not batched
INTERFERENCE = 3.0  # TPOT p50 over this many decode-only steps: a token mostly waits for other work in its steps
KV_FULL = 0.9  # KV usage above this with preemptions: memory-bound
EXPENSIVE_SHARE = 0.8  # this share of spend on the priciest tier: cost
REPEAT_SHARE = 0.3  # this share of spend on exact repeats of earlier requests: the cache should answer them
MIN_REQUESTS = 20  # fewer finished requests than this: no diagnosis (not enough evidence)
TTFT_SLO, TPOT_SLO = 1.0, 0.1  # the default service levels, p99 seconds (--ttft-slo, --tpot-slo)


@dataclass
class Finding:
    symptom: str  # ttft | tpot | memory | cost
    cause: str
    evidence: dict
    remedy: str
    key: str  # the configuration key (and value) to change
    traps: list[str] = field(default_factory=list)
    proposal: dict = field(default_factory=dict)  # the change as replay keys (the proof)


@dataclass
class Signals:
    """The figures every branch reads, computed once from the metrics (``signals``)."""

    ttft: object  # Histogram: TTFT of cache misses
    tpot: object  # Histogram: inter-token latency
    queue: object  # Histogram: queue time
    lengths: object  # Histogram: prompt tokens per request
    values: dict
    requests: float
    prompt_tokens: float
    queries: float  # prefix-cache lookups (0: the prefix cache is off)
    hit_rate: float
    shared: float | None  # share of prompt tokens a prefix cache could reuse (None: engines did not count)
    decode: dict | None  # the busiest engine's decode steps (metrics.decode_steps)
    batch: float  # mean decode batch (or mean running requests per engine)
    ttft_slo: float
    tpot_slo: float
    peak_gbs: float | None

    @property
    def mean_prompt(self) -> float:
        return self.prompt_tokens / self.requests

    @property
    def long(self) -> bool:
        return self.mean_prompt > LONG_PROMPT_TOKENS

    @property
    def queue_share(self) -> float:
        return (self.queue.mean or 0.0) / self.ttft.mean if self.ttft.mean else 0.0


def signals(m: dict, *, ttft_slo: float, tpot_slo: float, peak_gbs: float | None) -> Signals | None:
    """The figures of a parsed reading; None below ``MIN_REQUESTS`` answered requests."""
    values, hists = m["values"], m["hists"]
    ttft = merged(hists, "time_to_first_token_seconds", cache="miss")
    if ttft.count < MIN_REQUESTS:
        return None
    queries = sum(by_model(values, "prefix_cache_queries_total").values())
    hits = sum(by_model(values, "prefix_cache_hits_total").values())
    # What a prefix cache could reuse, counted by the engines with caching on or off (None: older engines)
    shared_q = sum(by_model(values, "shared_prefix_queries_total").values())
    shared = sum(by_model(values, "shared_prefix_tokens_total").values()) / shared_q if shared_q else None
    running = by_model(values, "num_requests_running")
    decode = decode_steps(values)
    batch = decode["batch"] if decode else (sum(running.values()) / len(running) if running else 0.0)
    return Signals(
        ttft=ttft,
        tpot=merged(hists, "inter_token_latency_seconds"),
        queue=merged(hists, "request_queue_time_seconds"),
        lengths=merged(hists, "request_prompt_tokens"),
        values=values,
        requests=ttft.count,
        prompt_tokens=sum(by_model(values, "prompt_tokens_total").values()),
        queries=queries,
        hit_rate=hits / queries if queries else 0.0,
        shared=shared,
        decode=decode,
        batch=batch,
        ttft_slo=ttft_slo,
        tpot_slo=tpot_slo,
        peak_gbs=peak_gbs,
    )


# ---------------------------------------------------------------- TTFT: one function per cause

NOT_DECODE = "high TTFT is not slow decode: quantizing weights will not fix it"


def ttft_evidence(s: Signals) -> dict:
    return {
        "ttft_p50_s": s.ttft.quantile(0.5),
        "ttft_p99_s": s.ttft.quantile(0.99),
        "ttft_slo_s": s.ttft_slo,
        "queue_share_of_ttft": round(s.queue_share, 3),
        "mean_prompt_tokens": round(s.mean_prompt, 1),
        "prompt_tokens_p50": s.lengths.quantile(0.5),
        "prompt_tokens_p99": s.lengths.quantile(0.99),
        "shared_prefix_share": None if s.shared is None else round(s.shared, 3),
        "prefix_cache_hit_rate": round(s.hit_rate, 3),
    }


def prefix_cache_off(s: Signals) -> Finding:
    return Finding(
        "ttft",
        "context too long and the prefix cache is off: every prompt is prefilled from its first token",
        ttft_evidence(s),
        "prefix caching: a shared system prompt or conversation history is prefilled once",
        "models[].engine.enable_prefix_caching: true",
        [NOT_DECODE],
        {"enable_prefix_caching": True},
    )


def prefix_evicted(s: Signals) -> Finding:
    return Finding(
        "ttft",
        "context too long, and the shared prefixes are evicted before they are reused: prompts "
        "begin alike, the prefix cache rarely finds them",
        ttft_evidence(s),
        "keep the shared blocks resident: a larger KV cache, or KV in int8 (twice the blocks)",
        "models[].engine.kv_cache_mb: larger, or kv_dtype: int8",
        [NOT_DECODE],
    )


def long_prompts(s: Signals) -> Finding:
    return Finding(
        "ttft",
        "context too long: long prompts are prefilled anew each time",
        ttft_evidence(s),
        "drop old turns, and keep shared system prompts byte-identical so the prefix cache reuses them",
        "tiers[].truncation: auto",
        [NOT_DECODE],
    )


def queueing(s: Signals) -> Finding:
    """Room to batch more when the engine's own decode step (what TPOT is made of, without the prefills of
    newly admitted requests) is under half the TPOT service level: a larger max_num_seqs; else a replica."""
    evidence = ttft_evidence(s) | {"mean_decode_batch": round(s.batch, 2), "tpot_p99_s": s.tpot.quantile(0.99)}
    raise_batch = "a bigger batch (max_num_seqs) lets more in at once but raises every request's TPOT"
    step_s = s.decode["step_s"] if s.decode else s.tpot.quantile(0.5)
    evidence["mean_decode_step_ms"] = None if step_s is None else round(step_s * 1e3, 2)
    if step_s is not None and step_s <= s.tpot_slo / 2 and s.batch >= 1:
        seqs = 2 * math.ceil(s.batch)
        return Finding(
            "ttft",
            "queueing: requests wait to be scheduled for most of their time to first token, while "
            "the running batch is small and TPOT has room under its service level",
            evidence,
            "let more sequences run at once (continuous batching's cap): TPOT rises, within its level",
            f"models[].engine.max_num_seqs: {seqs}",
            [raise_batch + ": check TPOT in the replay"],
            {"max_num_seqs": seqs},
        )
    return Finding(
        "ttft",
        "queueing: requests wait to be scheduled for most of their time to first token",
        evidence,
        "more capacity: another replica of the tier",
        "tiers[].urls: [<another runtime server>]",
        [raise_batch + ", which is already at its service level here"],
    )


def prefill_compute(s: Signals) -> Finding:
    return Finding(
        "ttft",
        "prefill compute: the prompts themselves take the time",
        ttft_evidence(s),
        "a stronger device for prefill, or prefill/decode disaggregation",
        "python -m runtime.server --role decode --prefill-url <prefill server>",
        [NOT_DECODE],
    )


def why_ttft(s: Signals) -> Finding:
    """Long prompts first: when their prefill is redone every time, it is also what builds the queue (each
    request waits behind the previous one's prefill), and capacity would only hide it."""
    reusable = s.shared is None or s.shared >= SHARED_PREFIX  # unknown: assume, as before engines counted it
    if s.long and s.queries == 0 and reusable:
        return prefix_cache_off(s)
    if s.long and s.queries and s.hit_rate < COLD_PREFIX and s.shared is not None and s.shared >= SHARED_PREFIX:
        return prefix_evicted(s)
    if s.long and s.hit_rate < COLD_PREFIX:
        return long_prompts(s)
    if s.queue_share > QUEUE_SHARE:
        return queueing(s)
    return prefill_compute(s)


# ---------------------------------------------------------------- TPOT: one function per cause


def tpot_evidence(s: Signals) -> dict:
    evidence = {"tpot_p50_s": s.tpot.quantile(0.5), "tpot_p99_s": s.tpot.quantile(0.99), "tpot_slo_s": s.tpot_slo}
    if s.decode is None:
        return evidence | {"mean_running_per_engine": round(s.batch, 2)}
    step_s, weights = s.decode["step_s"], s.decode["weights"]  # the engines' own decode steps
    evidence |= {
        "model": s.decode["model"],
        "decode_steps": int(s.decode["steps"]),
        "mean_decode_batch": round(s.batch, 2),
        "mean_decode_step_ms": round(step_s * 1e3, 2),
        "weight_mb": round(weights / 1e6, 1),
        # every decode step reads every weight once: this is the rate the step sustains doing so
        "weights_read_gb_per_s": round(weights / step_s / 1e9, 2) if step_s else None,
    }
    if s.peak_gbs:  # the roofline: the step can be no faster than the weights' read at peak bandwidth
        evidence["roofline_step_ms"] = round(weights / (s.peak_gbs * 1e9) * 1e3, 3)
    return evidence


def interfered(s: Signals) -> bool:
    p50 = s.tpot.quantile(0.5)
    return bool(s.decode and s.decode["step_s"] and p50 is not None and p50 > INTERFERENCE * s.decode["step_s"])


def prefill_interference(s: Signals) -> Finding:
    chunk = int(s.decode.get("chunk") or 0)
    half = max(16, chunk // 2) if chunk > 16 else None
    evidence = tpot_evidence(s) | {
        "tpot_p50_in_decode_steps": round(s.tpot.quantile(0.5) / s.decode["step_s"], 1),
        "max_num_batched_tokens": chunk,
    }
    return Finding(
        "tpot",
        "prefill interference: decoding sequences wait behind other requests' prefill chunks (the "
        "engine's own decode steps are a fraction of TPOT)",
        evidence,
        "shorter prefill chunks, so each step holds less prompt; or prefill on servers of its own",
        f"models[].engine.max_num_batched_tokens: {half}"
        if half
        else "python -m runtime.server --role decode --prefill-url <prefill server>",
        [
            "a smaller chunk spreads each prompt over more steps: TTFT rises",
            "the decode step itself is fast: quantizing weights will not fix this",
        ],
        {"max_num_batched_tokens": half} if half else {},
    )


def bandwidth_bound(s: Signals) -> Finding:
    bits = s.decode.get("bits") if s.decode else None
    if bits is None or bits > 8:  # float weights (or an engine that does not say): 8 bits
        remedy, quant = "weight quantization: int8 reads a quarter of float32's bytes per token", "int8"
    elif bits == 8:
        remedy, quant = "weight quantization: int4 reads half of int8's bytes (check the quality)", "int4"
    else:
        remedy, quant = "the weights are already 4-bit: a device with more memory bandwidth", None
    return Finding(
        "tpot",
        "bandwidth-bound: one or two sequences per step, so each token costs a full read of the weights",
        tpot_evidence(s) | {"weight_bits": bits},
        remedy,
        f"models[].engine.weight_quant: {quant}" if quant else "a faster device (HBM)",
        ["a bigger batch does not make one stream faster: it only shares the read"],
        {"weight_quant": quant} if quant else {},
    )


def big_batch(s: Signals) -> Finding:
    seqs = max(1, math.floor(s.batch / 4))
    return Finding(
        "tpot",
        "the batch is the cost: many sequences share each step",
        tpot_evidence(s),
        "cap the batch (or add a replica): each step gets shorter, the queue longer",
        f"models[].engine.max_num_seqs: {seqs}",
        ["a bigger batch raises TPOT: do not raise max_num_seqs to fix queueing here"],
        {"max_num_seqs": seqs},
    )


def why_tpot(s: Signals) -> Finding:
    if interfered(s):
        return prefill_interference(s)
    if s.batch < FEW_RUNNING:
        return bandwidth_bound(s)
    return big_batch(s)


# ---------------------------------------------------------------- memory and cost


def kv_exhausted(s: Signals) -> list[Finding]:
    """One finding per engine whose KV cache filled up (over a window: the peak the dashboard sampled)
    while it preempted requests."""
    kv = by_model(s.values, "kv_cache_usage_perc")
    return [
        Finding(
            "memory",
            f"KV too big for the cache on {model}: it filled up and requests were preempted (recomputed)",
            {"kv_cache_usage": round(kv.get(model, 0.0), 3), "preemptions": n},
            "store the KV in int8 (half the bytes: twice the tokens), or fewer / shorter sequences",
            "models[].engine.kv_dtype: int8",
            ["preemption recomputes: it costs prefill time, so it shows as TTFT and TPOT too"],
            {"kv_dtype": "int8"},
        )
        for model, n in by_model(s.values, "num_preemptions_total").items()
        if n > 0 and kv.get(model, 0.0) > KV_FULL
    ]


def spend_by_tier(s: Signals) -> dict[str, float]:
    return by_label(s.values, "gateway_cost_usd_total", "tier")


def priciest_tier(s: Signals, prices: dict | None) -> Finding | None:
    spend = spend_by_tier(s)
    total = sum(spend.values())
    if not (total > 0 and prices):
        return None
    priciest = max(prices, key=lambda t: prices[t])
    share = spend.get(priciest, 0.0) / total
    if share <= EXPENSIVE_SHARE or len(prices) < 2:
        return None
    cheaper = min(prices, key=lambda t: prices[t])
    return Finding(
        "cost",
        f"model too big: {share:.0%} of the spend is on {priciest}, the priciest tier",
        {"spend_usd": {k: round(v, 6) for k, v in spend.items()}, "priciest": priciest},
        "send what a smaller tier can do there (model: auto), with the big one as its fallback",
        f"router.default: {cheaper} (or model: auto)",
        ["a smaller model answers some requests worse: check the quality (scripts/bench_tiers.py)"],
        {"tier": cheaper},
    )


def repeated_calls(s: Signals) -> Finding | None:
    total = sum(spend_by_tier(s).values())
    repeated = sum(by_label(s.values, "gateway_repeated_requests_total", "tier").values())
    repeated_cost = sum(by_label(s.values, "gateway_repeated_cost_usd_total", "tier").values())
    if not (total > 0 and repeated_cost / total > REPEAT_SHARE):
        return None
    lookups = by_label(s.values, "gateway_cache_lookups_total", "result")
    looked = sum(lookups.values())
    evidence = {
        "repeated_requests": int(repeated),
        "model_requests": int(s.requests),
        "repeated_share_of_spend": round(repeated_cost / total, 3),
        "repeated_cost_usd": round(repeated_cost, 6),
        "cache_lookups": int(looked),
        "cache_bypassed": int(lookups.get("bypass", 0)),
    }
    if looked == 0:
        cause, remedy, key = (
            "repeated calls: the same questions reach a model again and no cache answers them",
            "the semantic cache: repeats (and paraphrases) are answered from it at no model cost",
            "cache.enabled: true (configs/gateway.yaml; without --no-cache)",
        )
    elif lookups.get("bypass", 0) > looked / 2:
        cause, remedy, key = (
            "repeated calls bypass the cache: their sampling settings keep them out of it",
            "let seeded (or all) sampled requests use the cache, or ask repeatable questions at temperature 0",
            "cache.cache_sampled: seeded (or always)",
        )
    else:
        cause, remedy, key = (
            "repeated calls miss the cache: its answers are not stored or not found",
            "check Cache-Control: no-store on the clients and the store's errors (gateway_cache_unavailable_total)",
            "cache.max_false_hit_rate: higher, if scripts/eval_cache.py shows the recall it buys is worth it",
        )
    return Finding("cost", cause, evidence, remedy, key, [], {"cache": "exact"})


# ---------------------------------------------------------------- the tree


def diagnose(
    metrics: str | dict,
    *,
    ttft_slo: float = TTFT_SLO,
    tpot_slo: float = TPOT_SLO,
    prices: dict | None = None,
    peak_gbs: float | None = None,
) -> list[Finding]:
    """Findings for one scrape's text, or for a ``parse`` result (``subtract``: a window of it); a list,
    empty for a healthy gateway or too little traffic. Each finding's ``proposal`` is the change as replay
    keys (empty where a replay on one engine cannot show it, such as another replica)."""
    m = parse(metrics) if isinstance(metrics, str) else metrics
    s = signals(m, ttft_slo=ttft_slo, tpot_slo=tpot_slo, peak_gbs=peak_gbs)
    if s is None:
        return []
    findings: list[Finding] = []
    ttft_p99, tpot_p99 = s.ttft.quantile(0.99), s.tpot.quantile(0.99)
    if ttft_p99 is not None and ttft_p99 > ttft_slo:
        findings.append(why_ttft(s))
    if tpot_p99 is not None and tpot_p99 > tpot_slo:
        findings.append(why_tpot(s))
    findings += kv_exhausted(s)
    findings += [f for f in (priciest_tier(s, prices), repeated_calls(s)) if f is not None]
    return findings


def report(
    metrics: str | dict,
    *,
    window_s: float | None = None,
    ttft_slo: float = TTFT_SLO,
    tpot_slo: float = TPOT_SLO,
    prices: dict | None = None,
    peak_gbs: float | None = None,
) -> dict:
    """The JSON the CLI prints and ``GET /dashboard/diagnosis`` answers."""
    m = parse(metrics) if isinstance(metrics, str) else metrics
    findings = diagnose(m, ttft_slo=ttft_slo, tpot_slo=tpot_slo, prices=prices, peak_gbs=peak_gbs)
    return {
        "window_s": None if window_s is None else round(window_s, 1),
        "slo": {"ttft_p99_s": ttft_slo, "tpot_p99_s": tpot_slo},
        "requests": int(merged(m["hists"], "time_to_first_token_seconds", cache="miss").count),
        "min_requests": MIN_REQUESTS,
        "findings": [asdict(f) for f in findings],
    }
