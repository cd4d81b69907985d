"""The advisor's reading of Prometheus text: parsed once, differenced over a window, histograms merged.

    parse(text) -> {"values", "hists", "counters"}       subtract(new, old) -> the change between two
    merged(hists, name, **labels) -> one Histogram       by_model / by_label -> one counter by a label
    decode_steps(values) -> the busiest engine's decode steps (batch, step time, weights), or None

Plain data, no I/O: the CLI (``gateway.advise.cli``) and the gateway's history
(``gateway.advise.history``) feed it text read from ``/metrics`` or from the registry.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass


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


def merged(hists: dict, name: str, **match) -> Histogram:
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


def by_model(values: dict, name: str) -> dict[str, float]:
    return {dict(labels).get("model", ""): v for labels, v in values.get(name, {}).items()}


def decode_steps(values: dict) -> dict | None:
    """The busiest engine's decode steps in the figures: its name, steps, mean batch, mean step, weights."""
    steps = by_model(values, "decode_steps_total")
    if not steps or max(steps.values()) <= 0:
        return None
    model = max(steps, key=steps.get)
    n = steps[model]
    return {
        "model": model,
        "steps": n,
        "batch": by_model(values, "decode_step_sequences_total").get(model, 0.0) / n,
        "step_s": by_model(values, "decode_step_seconds_total").get(model, 0.0) / n,
        "weights": by_model(values, "model_weight_bytes").get(model, 0.0),
        "bits": by_model(values, "model_weight_bits").get(model),
        "chunk": by_model(values, "max_num_batched_tokens").get(model),
    }


def by_label(values: dict, name: str, label: str) -> dict[str, float]:
    """One counter's values keyed by one label's value."""
    return {dict(labels).get(label, ""): v for labels, v in values.get(name, {}).items()}
