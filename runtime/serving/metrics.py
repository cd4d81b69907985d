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

    def collect(self):
        running = GaugeMetricFamily(
            "num_requests_running", "Requests holding KV blocks in the engine", labels=["model"]
        )
        waiting = GaugeMetricFamily("num_requests_waiting", "Requests queued in the engine", labels=["model"])
        kv = GaugeMetricFamily("kv_cache_usage_perc", "Fraction of KV blocks in use (0..1)", labels=["model"])
        preempt = CounterMetricFamily("num_preemptions", "Preemptions by recompute", labels=["model"])
        queries = CounterMetricFamily(
            "prefix_cache_queries", "Prompt tokens looked up in the prefix cache", labels=["model"]
        )
        hits = CounterMetricFamily("prefix_cache_hits", "Prompt tokens found in the prefix cache", labels=["model"])
        drafts = CounterMetricFamily(
            "spec_decode_num_draft_tokens", "Speculative draft tokens verified", labels=["model"]
        )
        accepted = CounterMetricFamily(
            "spec_decode_num_accepted_tokens", "Speculative draft tokens kept", labels=["model"]
        )
        dsteps = CounterMetricFamily(
            "decode_steps", "Engine steps that only decoded (one token per running sequence)", labels=["model"]
        )
        dseqs = CounterMetricFamily(
            "decode_step_sequences",
            "Sequences in decode-only steps, summed (/ decode_steps: the mean batch)",
            labels=["model"],
        )
        dsecs = CounterMetricFamily(
            "decode_step_seconds",
            "Wall time of decode-only steps, summed (/ decode_steps: the mean step)",
            labels=["model"],
        )
        weights = GaugeMetricFamily(
            "model_weight_bytes",
            "Bytes of the model's weights in memory (each decode step reads them)",
            labels=["model"],
        )
        bits = GaugeMetricFamily(
            "model_weight_bits",
            "Bits a weight as served: 32/16 float, 8 int8, 4 int4; 0 the file's mixed blocks",
            labels=["model"],
        )
        shared_q = CounterMetricFamily(
            "shared_prefix_queries", "Prompt tokens admitted, prefix caching on or off", labels=["model"]
        )
        shared = CounterMetricFamily(
            "shared_prefix_tokens",
            "Of those, tokens in leading full blocks an earlier prompt began with too (what a prefix cache can reuse)",
            labels=["model"],
        )
        chunk = GaugeMetricFamily(
            "max_num_batched_tokens",
            "Tokens a step may hold (the prefill chunk decoding waits behind)",
            labels=["model"],
        )
        for name, backend in self._backends().items():
            s = backend.stats()
            chunk.add_metric([name], getattr(s, "max_num_batched_tokens", 0))
            shared_q.add_metric([name], getattr(s, "shared_prefix_queries", 0))
            shared.add_metric([name], getattr(s, "shared_prefix_tokens", 0))
            bits.add_metric([name], getattr(s, "weight_bits", 0))
            dsteps.add_metric([name], getattr(s, "decode_steps", 0))
            dseqs.add_metric([name], getattr(s, "decode_seqs", 0))
            dsecs.add_metric([name], getattr(s, "decode_seconds", 0.0))
            weights.add_metric([name], getattr(s, "weight_bytes", 0))
            running.add_metric([name], s.num_running)
            waiting.add_metric([name], s.num_waiting)
            kv.add_metric([name], s.kv_cache_usage)
            preempt.add_metric([name], s.num_preemptions_total)
            queries.add_metric([name], getattr(s, "prefix_cache_queries", 0))
            hits.add_metric([name], getattr(s, "prefix_cache_hits", 0))
            drafts.add_metric([name], getattr(s, "spec_draft_tokens", 0))
            accepted.add_metric([name], getattr(s, "spec_accepted_tokens", 0))
        yield from (running, waiting, kv, preempt, queries, hits, shared_q, shared, drafts, accepted)
        yield from (dsteps, dseqs, dsecs, weights, bits, chunk)


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
        if out.finished:
            for hist, key in (
                (self.queue, "queue_s"),
                (self.ttft, "ttft_s"),
                (self.itl, "tpot_s"),
                (self.e2e, "e2e_s"),
            ):
                if out.metrics.get(key) is not None:
                    hist.labels(self.name).observe(out.metrics[key])

    def render(self) -> bytes:
        return generate_latest(self.registry)
