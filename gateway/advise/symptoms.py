"""The bottleneck doctor: the symptom-to-remedy tree walked over a gateway's live metrics.

    python -m gateway.advise --url http://127.0.0.1:8000 [--window 15m] [--ttft-slo 1.0] [--tpot-slo 0.1] [--json]
    python -m gateway.advise --replay RECORDING --try KEY=VALUE ...     (runtime/replay.py: before/after)

Reads ``GET /metrics`` once (the counters since the gateway started), or with ``--window`` asks the
gateway for the change over the last minutes (``GET /dashboard/diagnosis``: it keeps a parsed reading of
its registry every 30 s, ``gateway.observability.dashboard.DiagnosisHistory``, and this module's
``subtract`` differences two). Reports findings: the symptom (``ttft``, ``tpot``, ``memory``, ``cost``),
the cause, the evidence figures, the remedy, the configuration key to change, the traps, and the change
as ``runtime.replay --try`` keys (``proposal``: what proves it). The tree, in the order it is walked::

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

import argparse
import json
import math
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

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
    proposal: dict = field(default_factory=dict)  # the change as runtime.replay --try keys (the proof)


def histogram_quantile(q: float, cumulative: Sequence[tuple[float, float]]) -> float | None:
    """The q-quantile (0 < q <= 1) of a histogram given as sorted (le, cumulative count) pairs ending at
    +Inf, interpolated linearly inside the bucket that holds rank q*total, like Prometheus'
    histogram_quantile: the first bucket starts at 0, a rank in the +Inf bucket answers the largest
    finite bound. None when the histogram is empty (no observations, or no +Inf bucket)."""
    if not cumulative or cumulative[-1][0] != math.inf:
        return None
    counts, running = [], 0.0
    for _, c in cumulative:  # summed deltas may wobble by float error: force monotonic, as Prometheus does
        running = max(running, c)
        counts.append(running)
    n = counts[-1]
    if n <= 0:
        return None
    rank = q * n
    lower, below = 0.0, 0.0
    for (le, _), count in zip(cumulative, counts):
        if count >= rank:
            if le == math.inf:
                return lower if len(cumulative) > 1 else None
            if count == below:
                return le
            return lower + (le - lower) * (rank - below) / (count - below)
        lower, below = le, count
    return None  # unreachable: the +Inf bucket holds every observation


@dataclass
class Histogram:
    buckets: list[tuple[float, float]]  # (upper bound, cumulative count), +Inf last
    total: float = 0.0
    count: float = 0.0

    def quantile(self, q: float) -> float | None:
        """Quantile ``q``, interpolated inside its bucket as Prometheus' histogram_quantile does."""
        v = histogram_quantile(q, sorted(self.buckets)) if self.count else None
        return None if v is None else round(v, 6)

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None


def parse(text: str) -> dict:
    """Prometheus text -> {"values": {sample: {labels: value}}, "hists": {(name, labels): Histogram},
    "counters": the sample names that are counters (``subtract`` differences them; gauges it keeps)}."""
    from prometheus_client.parser import text_string_to_metric_families

    values: dict = defaultdict(dict)
    hists: dict = {}
    counters: set = set()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            if family.type == "histogram":
                h = hists.setdefault((family.name, labels), Histogram([]))
                if s.name.endswith("_bucket"):
                    h.buckets.append((float(s.labels["le"]), s.value))
                elif s.name.endswith("_sum"):
                    h.total = s.value
                elif s.name.endswith("_count"):
                    h.count = s.value
            elif not s.name.endswith("_created"):
                values[s.name][labels] = s.value
                if family.type == "counter":
                    counters.add(s.name)
    return {"values": values, "hists": hists, "counters": counters}


def _grown(new: float, old: float) -> float:
    return new - old if new >= old else new  # a counter that went down was reset: it counts from zero


def subtract(new: dict, old: dict) -> dict:
    """What happened between two ``parse`` results: counters and histograms as differences (a reset
    counts from zero, as PromQL's ``increase`` does), gauges as ``new`` reads them."""
    values: dict = defaultdict(dict)
    for name, series in new["values"].items():
        before = old["values"].get(name, {})
        for labels, v in series.items():
            values[name][labels] = _grown(v, before.get(labels, 0.0)) if name in new["counters"] else v
    hists = {}
    for key, h in new["hists"].items():
        o = old["hists"].get(key)
        if o is None or o.count > h.count:  # new since, or reset: all of it is in the window
            hists[key] = h
            continue
        was = dict(o.buckets)
        hists[key] = Histogram(
            [(le, c - was.get(le, 0.0)) for le, c in h.buckets], h.total - o.total, h.count - o.count
        )
    return {"values": values, "hists": hists, "counters": new["counters"]}


def _merged(hists: dict, name: str, **match) -> Histogram:
    """One histogram of ``name`` over every label set that has ``match``'s labels."""
    out: dict[float, float] = defaultdict(float)
    total = count = 0.0
    for (n, labels), h in hists.items():
        d = dict(labels)
        if n != name or any(d.get(k) != v for k, v in match.items()):
            continue
        for le, cum in h.buckets:
            out[le] += cum
        total, count = total + h.total, count + h.count
    return Histogram(sorted(out.items()), total, count)


def _by_model(values: dict, name: str) -> dict[str, float]:
    return {dict(labels).get("model", ""): v for labels, v in values.get(name, {}).items()}


def _decode(values: dict) -> dict | None:
    """The busiest engine's decode steps in the figures: its name, steps, mean batch, mean step, weights."""
    steps = _by_model(values, "decode_steps_total")
    if not steps or max(steps.values()) <= 0:
        return None
    model = max(steps, key=steps.get)
    n = steps[model]
    return {
        "model": model,
        "steps": n,
        "batch": _by_model(values, "decode_step_sequences_total").get(model, 0.0) / n,
        "step_s": _by_model(values, "decode_step_seconds_total").get(model, 0.0) / n,
        "weights": _by_model(values, "model_weight_bytes").get(model, 0.0),
        "bits": _by_model(values, "model_weight_bits").get(model),
        "chunk": _by_model(values, "max_num_batched_tokens").get(model),
    }


def diagnose(
    metrics: str | dict,
    *,
    ttft_slo: float = TTFT_SLO,
    tpot_slo: float = TPOT_SLO,
    prices: dict | None = None,
    peak_gbs: float | None = None,
):
    """Findings for one scrape's text, or for a ``parse`` result (``subtract``: a window of it); a list,
    empty for a healthy gateway or too little traffic. Each finding's ``proposal`` is the change as
    ``runtime.replay --try`` keys: what ``--replay`` runs to prove it (empty where a replay on one engine
    cannot show it, such as another replica)."""
    m = parse(metrics) if isinstance(metrics, str) else metrics
    values, hists = m["values"], m["hists"]
    ttft = _merged(hists, "time_to_first_token_seconds", cache="miss")
    tpot = _merged(hists, "inter_token_latency_seconds")
    queue = _merged(hists, "request_queue_time_seconds")
    if ttft.count < MIN_REQUESTS:
        return []
    findings: list[Finding] = []
    prompt = sum(_by_model(values, "prompt_tokens_total").values())
    requests = ttft.count
    queries = sum(_by_model(values, "prefix_cache_queries_total").values())
    hits = sum(_by_model(values, "prefix_cache_hits_total").values())
    hit_rate = hits / queries if queries else 0.0
    # What a prefix cache could reuse, counted by the engines with caching on or off (None: older engines)
    shared_q = sum(_by_model(values, "shared_prefix_queries_total").values())
    shared = sum(_by_model(values, "shared_prefix_tokens_total").values()) / shared_q if shared_q else None
    lengths = _merged(hists, "request_prompt_tokens")
    running = _by_model(values, "num_requests_running")
    decode = _decode(values)
    batch = decode["batch"] if decode else (sum(running.values()) / len(running) if running else 0.0)
    tpot_p99 = tpot.quantile(0.99)

    ttft_p99, ttft_p50 = ttft.quantile(0.99), ttft.quantile(0.5)
    if ttft_p99 is not None and ttft_p99 > ttft_slo:
        share = (queue.mean or 0.0) / ttft.mean if ttft.mean else 0.0
        mean_prompt = prompt / requests
        evidence = {
            "ttft_p50_s": ttft_p50,
            "ttft_p99_s": ttft_p99,
            "ttft_slo_s": ttft_slo,
            "queue_share_of_ttft": round(share, 3),
            "mean_prompt_tokens": round(mean_prompt, 1),
            "prompt_tokens_p50": lengths.quantile(0.5),
            "prompt_tokens_p99": lengths.quantile(0.99),
            "shared_prefix_share": None if shared is None else round(shared, 3),
            "prefix_cache_hit_rate": round(hit_rate, 3),
        }
        long = mean_prompt > LONG_PROMPT_TOKENS
        reusable = shared is None or shared >= SHARED_PREFIX  # unknown: assume, as before engines counted it
        not_decode = "high TTFT is not slow decode: quantizing weights will not fix it"
        # Long prompts first: when their prefill is redone every time, it is also what builds the queue
        # (each request waits behind the previous one's prefill), and capacity would only hide it.
        if long and queries == 0 and reusable:
            findings.append(
                Finding(
                    "ttft",
                    "context too long and the prefix cache is off: every prompt is prefilled from its first token",
                    evidence,
                    "prefix caching: a shared system prompt or conversation history is prefilled once",
                    "models[].engine.enable_prefix_caching: true",
                    [not_decode],
                    {"enable_prefix_caching": True},
                )
            )
        elif long and queries and hit_rate < COLD_PREFIX and shared is not None and shared >= SHARED_PREFIX:
            findings.append(
                Finding(
                    "ttft",
                    "context too long, and the shared prefixes are evicted before they are reused: prompts "
                    "begin alike, the prefix cache rarely finds them",
                    evidence,
                    "keep the shared blocks resident: a larger KV cache, or KV in int8 (twice the blocks)",
                    "models[].engine.kv_cache_mb: larger, or kv_dtype: int8",
                    [not_decode],
                )
            )
        elif long and hit_rate < COLD_PREFIX:
            findings.append(
                Finding(
                    "ttft",
                    "context too long: long prompts are prefilled anew each time",
                    evidence,
                    "drop old turns, and keep shared system prompts byte-identical so the prefix cache reuses them",
                    "tiers[].truncation: auto",
                    [not_decode],
                )
            )
        elif share > QUEUE_SHARE:
            evidence |= {"mean_decode_batch": round(batch, 2), "tpot_p99_s": tpot_p99}
            raise_batch = "a bigger batch (max_num_seqs) lets more in at once but raises every request's TPOT"
            # Room to batch more: the engine's own decode step (what TPOT is made of, without the prefills
            # of newly admitted requests) is under half the TPOT service level.
            step_s = decode["step_s"] if decode else tpot.quantile(0.5)
            evidence["mean_decode_step_ms"] = None if step_s is None else round(step_s * 1e3, 2)
            if step_s is not None and step_s <= tpot_slo / 2 and batch >= 1:
                seqs = 2 * math.ceil(batch)
                findings.append(
                    Finding(
                        "ttft",
                        "queueing: requests wait to be scheduled for most of their time to first token, while "
                        "the running batch is small and TPOT has room under its service level",
                        evidence,
                        "let more sequences run at once (continuous batching's cap): TPOT rises, within its level",
                        f"models[].engine.max_num_seqs: {seqs}",
                        [raise_batch + ": check TPOT in the replay"],
                        {"max_num_seqs": seqs},
                    )
                )
            else:
                findings.append(
                    Finding(
                        "ttft",
                        "queueing: requests wait to be scheduled for most of their time to first token",
                        evidence,
                        "more capacity: another replica of the tier",
                        "tiers[].urls: [<another runtime server>]",
                        [raise_batch + ", which is already at its service level here"],
                    )
                )
        else:
            findings.append(
                Finding(
                    "ttft",
                    "prefill compute: the prompts themselves take the time",
                    evidence,
                    "a stronger device for prefill, or prefill/decode disaggregation",
                    "python -m runtime.server --role decode --prefill-url <prefill server>",
                    [not_decode],
                )
            )

    if tpot_p99 is not None and tpot_p99 > tpot_slo:
        evidence = {"tpot_p50_s": tpot.quantile(0.5), "tpot_p99_s": tpot_p99, "tpot_slo_s": tpot_slo}
        if decode is not None:  # the engines' own decode steps: batch, step time, the weights' read rate
            step_s, weights = decode["step_s"], decode["weights"]
            evidence |= {
                "model": decode["model"],
                "decode_steps": int(decode["steps"]),
                "mean_decode_batch": round(batch, 2),
                "mean_decode_step_ms": round(step_s * 1e3, 2),
                "weight_mb": round(weights / 1e6, 1),
                # every decode step reads every weight once: this is the rate the step sustains doing so
                "weights_read_gb_per_s": round(weights / step_s / 1e9, 2) if step_s else None,
            }
            if peak_gbs:  # the roofline: the step can be no faster than the weights' read at peak bandwidth
                evidence["roofline_step_ms"] = round(weights / (peak_gbs * 1e9) * 1e3, 3)
        else:
            evidence["mean_running_per_engine"] = round(batch, 2)
        tpot_p50 = tpot.quantile(0.5)
        if decode and decode["step_s"] and tpot_p50 is not None and tpot_p50 > INTERFERENCE * decode["step_s"]:
            chunk = int(decode.get("chunk") or 0)
            half = max(16, chunk // 2) if chunk > 16 else None
            evidence |= {
                "tpot_p50_in_decode_steps": round(tpot_p50 / decode["step_s"], 1),
                "max_num_batched_tokens": chunk,
            }
            findings.append(
                Finding(
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
            )
        elif batch < FEW_RUNNING:
            bits = decode.get("bits") if decode else None
            evidence["weight_bits"] = bits
            cause = "bandwidth-bound: one or two sequences per step, so each token costs a full read of the weights"
            trap = "a bigger batch does not make one stream faster: it only shares the read"
            if bits is None or bits > 8:  # float weights (or an engine that does not say): 8 bits
                remedy, quant = "weight quantization: int8 reads a quarter of float32's bytes per token", "int8"
            elif bits == 8:
                remedy, quant = "weight quantization: int4 reads half of int8's bytes (check the quality)", "int4"
            else:
                remedy, quant = "the weights are already 4-bit: a device with more memory bandwidth", None
            findings.append(
                Finding(
                    "tpot",
                    cause,
                    evidence,
                    remedy,
                    f"models[].engine.weight_quant: {quant}" if quant else "a faster device (HBM)",
                    [trap],
                    {"weight_quant": quant} if quant else {},
                )
            )
        else:
            seqs = max(1, math.floor(batch / 4))
            findings.append(
                Finding(
                    "tpot",
                    "the batch is the cost: many sequences share each step",
                    evidence,
                    "cap the batch (or add a replica): each step gets shorter, the queue longer",
                    f"models[].engine.max_num_seqs: {seqs}",
                    ["a bigger batch raises TPOT: do not raise max_num_seqs to fix queueing here"],
                    {"max_num_seqs": seqs},
                )
            )

    kv = _by_model(values, "kv_cache_usage_perc")  # over a window: the peak the dashboard sampled in it
    preempt = _by_model(values, "num_preemptions_total")
    for model, n in preempt.items():
        if n > 0 and kv.get(model, 0.0) > KV_FULL:
            findings.append(
                Finding(
                    "memory",
                    f"KV too big for the cache on {model}: it filled up and requests were preempted (recomputed)",
                    {"kv_cache_usage": round(kv.get(model, 0.0), 3), "preemptions": n},
                    "store the KV in int8 (half the bytes: twice the tokens), or fewer / shorter sequences",
                    "models[].engine.kv_dtype: int8",
                    ["preemption recomputes: it costs prefill time, so it shows as TTFT and TPOT too"],
                    {"kv_dtype": "int8"},
                )
            )

    spend = {dict(labels).get("tier", ""): v for labels, v in values.get("gateway_cost_usd_total", {}).items()}
    total = sum(spend.values())
    if total > 0 and prices:
        priciest = max(prices, key=lambda t: prices[t])
        share = spend.get(priciest, 0.0) / total
        if share > EXPENSIVE_SHARE and len(prices) > 1:
            cheaper = min(prices, key=lambda t: prices[t])
            findings.append(
                Finding(
                    "cost",
                    f"model too big: {share:.0%} of the spend is on {priciest}, the priciest tier",
                    {"spend_usd": {k: round(v, 6) for k, v in spend.items()}, "priciest": priciest},
                    "send what a smaller tier can do there (model: auto), with the big one as its fallback",
                    f"router.default: {cheaper} (or model: auto)",
                    ["a smaller model answers some requests worse: check the quality (scripts/bench_tiers.py)"],
                    {"tier": cheaper},
                )
            )

    repeated = sum(_by_model_of(values, "gateway_repeated_requests_total", "tier").values())
    repeated_cost = sum(_by_model_of(values, "gateway_repeated_cost_usd_total", "tier").values())
    if total > 0 and repeated_cost / total > REPEAT_SHARE:
        lookups = {dict(k).get("result", ""): v for k, v in values.get("gateway_cache_lookups_total", {}).items()}
        looked = sum(lookups.values())
        evidence = {
            "repeated_requests": int(repeated),
            "model_requests": int(requests),
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
        findings.append(Finding("cost", cause, evidence, remedy, key, [], {"cache": "exact"}))
    return findings


def _by_model_of(values: dict, name: str, label: str) -> dict[str, float]:
    return {dict(labels).get(label, ""): v for labels, v in values.get(name, {}).items()}


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
        "requests": int(_merged(m["hists"], "time_to_first_token_seconds", cache="miss").count),
        "min_requests": MIN_REQUESTS,
        "findings": [asdict(f) for f in findings],
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--window", help="the last 15m, 90s, 2h (the gateway keeps two hours); default: since start")
    p.add_argument("--ttft-slo", type=float, default=TTFT_SLO, help="seconds, p99")
    p.add_argument("--tpot-slo", type=float, default=TPOT_SLO, help="seconds, p99")
    p.add_argument("--peak-gbs", type=float, default=None, help="the device's memory bandwidth, GB/s (roofline)")
    p.add_argument("--key", default=None, help="the admin key, when /metrics needs one")
    p.add_argument("--json", action="store_true")
    p.add_argument("--replay", metavar="RECORDING", help="replay a recording (gateway/recorder.py) instead")
    p.add_argument("--try", dest="try_", action="append", default=[], metavar="KEY=VALUE", help="with --replay")
    p.add_argument("--base", action="append", default=[], metavar="KEY=VALUE", help="with --replay")
    p.add_argument("--model", default="smollm2-135m", help="with --replay: the model to replay on")
    args = p.parse_args(argv)
    if args.replay:  # the engine runs in its own process: the gateway never loads JAX (runtime/replay.py)
        import subprocess

        cmd = [sys.executable, "-m", "runtime.replay", args.replay, "--model", args.model]
        cmd += [f"--ttft-slo={args.ttft_slo}", f"--tpot-slo={args.tpot_slo}"] + (["--json"] if args.json else [])
        for flag, items in (("--try", args.try_), ("--base", args.base)):
            for kv in items:
                cmd += [flag, kv]
        return subprocess.call(cmd)
    headers = {"Authorization": f"Bearer {args.key}"} if args.key else {}

    def get(path: str):
        with urllib.request.urlopen(urllib.request.Request(args.url + path, headers=headers), timeout=10) as r:
            return r.read().decode()

    try:
        if args.window:  # the gateway differences its own readings (gateway/observability/dashboard.py)
            query = urllib.parse.urlencode(
                {"window": args.window, "ttft_slo": args.ttft_slo, "tpot_slo": args.tpot_slo}
            )
            body = json.loads(get(f"/dashboard/diagnosis?{query}"))
        else:  # one scrape: the counters since the gateway started
            cards = json.loads(get("/v1/models"))["data"]
            prices = {c["tier"]: c["price"]["output_per_mtok"] for c in cards if c.get("tier") and c.get("price")}
            body = report(
                get("/metrics"), ttft_slo=args.ttft_slo, tpot_slo=args.tpot_slo, prices=prices, peak_gbs=args.peak_gbs
            )
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")[:300]
        print(f"error: {args.url} answered {exc.code}: {detail}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot read {args.url}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(body, indent=2))
        return 0
    span = "since the gateway started" if body["window_s"] is None else f"over the last {body['window_s']:.0f} s"
    print(f"{body['requests']} answered requests {span}")
    if not body["findings"]:
        print(f"no finding: within the service levels (or fewer than {MIN_REQUESTS} requests)")
    for f in body["findings"]:
        print(f"[{f['symptom']}] {f['cause']}\n  evidence: {json.dumps(f['evidence'])}")
        print(f"  remedy: {f['remedy']}\n  change: {f['key']}")
        for t in f["traps"]:
            print(f"  trap: {t}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
