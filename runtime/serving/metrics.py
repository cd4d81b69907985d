"""Prometheus metrics of engines: the gauges every backend reports (``EngineCollector``) and the runtime
server's own request histograms (``ServerMetrics``), named like vLLM's and labelled ``model``."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from runtime.api import RequestOutput

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
# Prompt lengths in tokens, steps of x1.5 then x1.33 (the advisor's prompt-length distribution, as vLLM's
# request_prompt_tokens): a quantile is interpolated inside a bucket, so finer ones read closer.
PROMPT_BUCKETS = tuple(int(b * m) for b in (2**k for k in range(4, 17)) for m in (1, 1.5)) + (131072,)


class EngineCollector:
    """Engine gauges (running, waiting, KV usage, preemptions, prefix cache, speculative drafts) of every backend, read at
    scrape time from ``backend.stats()``; shared by the runtime server and the gateway."""

    def __init__(self, backends: Callable[[], Mapping]):
        self._backends = backends

    # (metric, gauge or counter, help, the EngineStats field it reads), in the order they are exposed
    FAMILIES = (
        ("num_requests_running", "gauge", "Requests holding KV blocks in the engine", "num_running"),
        ("num_requests_waiting", "gauge", "Requests queued in the engine", "num_waiting"),
        ("kv_cache_usage_perc", "gauge", "Fraction of KV blocks in use (0..1)", "kv_cache_usage"),
        ("num_preemptions", "counter", "Preemptions by recompute", "num_preemptions_total"),
        ("prefix_cache_queries", "counter", "Prompt tokens looked up in the prefix cache", "prefix_cache_queries"),
        ("prefix_cache_hits", "counter", "Prompt tokens found in the prefix cache", "prefix_cache_hits"),
        (
            "shared_prefix_queries",
            "counter",
            "Prompt tokens admitted, prefix caching on or off",
            "shared_prefix_queries",
        ),
        (
            "shared_prefix_tokens",
            "counter",
            "Of those, tokens in leading full blocks an earlier prompt began with too (what a prefix cache can reuse)",
            "shared_prefix_tokens",
        ),
        ("spec_decode_num_draft_tokens", "counter", "Speculative draft tokens verified", "spec_draft_tokens"),
        ("spec_decode_num_accepted_tokens", "counter", "Speculative draft tokens kept", "spec_accepted_tokens"),
        ("decode_steps", "counter", "Engine steps that only decoded (one token per running sequence)", "decode_steps"),
        (
            "decode_step_sequences",
            "counter",
            "Sequences in decode-only steps, summed (/ decode_steps: the mean batch)",
            "decode_seqs",
        ),
        (
            "decode_step_seconds",
            "counter",
            "Wall time of decode-only steps, summed (/ decode_steps: the mean step)",
            "decode_seconds",
        ),
        (
            "model_weight_bytes",
            "gauge",
            "Bytes of the model's weights in memory (each decode step reads them)",
            "weight_bytes",
        ),
        (
            "model_weight_bits",
            "gauge",
            "Bits a weight as served: 32/16 float, 8 int8, 4 int4; 0 the file's mixed blocks",
            "weight_bits",
        ),
        (
            "max_num_batched_tokens",
            "gauge",
            "Tokens a step may hold (the prefill chunk decoding waits behind)",
            "max_num_batched_tokens",
        ),
    )

    def collect(self):
        kinds = {"gauge": GaugeMetricFamily, "counter": CounterMetricFamily}
        families = [(kinds[kind](name, doc, labels=["model"]), field) for name, kind, doc, field in self.FAMILIES]
        for name, backend in self._backends().items():
            s = backend.stats()
            for family, field in families:
                family.add_metric([name], getattr(s, field, 0))  # a backend of an older contract: 0
        yield from (family for family, _ in families)


class ServerMetrics:
    """Prometheus metrics of one server (its own registry), named like vLLM's, all labelled ``model``.

    Engine gauges come from ``EngineCollector`` (read at scrape time). Latency
    histograms are observed from the ``metrics`` of each request's final output; the engine reports
    one mean inter-token latency per request (TPOT), so ``inter_token_latency_seconds`` gets one
    observation per finished request of 2+ tokens, not one per token as vLLM's does.
    """

    def __init__(self, name: str, backends: Callable[[], dict]):
        self.name = name
        r = self.registry = CollectorRegistry()

        def hist(metric: str, doc: str) -> Histogram:
            return Histogram(metric, doc, ["model"], buckets=LATENCY_BUCKETS, registry=r)

        self.ttft = hist("time_to_first_token_seconds", "Arrival to first output token")
        self.itl = hist("inter_token_latency_seconds", "Mean time between output tokens of a request (TPOT)")
        self.e2e = hist("e2e_request_latency_seconds", "Arrival to the final output")
        self.queue = hist("request_queue_time_seconds", "Arrival to first being scheduled")
        self.prompt_tokens = Counter("prompt_tokens", "Prompt tokens processed", ["model"], registry=r)
        self.prompt_lengths = Histogram(
            "request_prompt_tokens",
            "Prompt length of a request, in tokens",
            ["model"],
            buckets=PROMPT_BUCKETS,
            registry=r,
        )
        self.generation_tokens = Counter("generation_tokens", "Tokens generated", ["model"], registry=r)
        r.register(EngineCollector(backends))

    def observe(self, out: RequestOutput, first: bool) -> None:
        """Count one engine output; ``first``: the request's first output (its prompt is done)."""
        if first:
            self.prompt_tokens.labels(self.name).inc(out.prompt_tokens)
            self.prompt_lengths.labels(self.name).observe(out.prompt_tokens)
        self.generation_tokens.labels(self.name).inc(len(out.token_ids))
        m = out.metrics
        if out.finished and m is not None:
            for hist, value in (
                (self.queue, m.queue_s),
                (self.ttft, m.ttft_s),
                (self.itl, m.tpot_s),
                (self.e2e, m.e2e_s),
            ):
                if value is not None:
                    hist.labels(self.name).observe(value)

    def render(self) -> bytes:
        return generate_latest(self.registry)
