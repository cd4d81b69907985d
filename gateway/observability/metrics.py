"""Prometheus metrics of one gateway app (its own registry: several apps in one process stay apart).

Engine gauges (running, waiting, KV usage, preemptions) are read from the backends at scrape time,
so they are never stale; rates are left to PromQL over the counters.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from runtime.serving.metrics import LATENCY_BUCKETS, PROMPT_BUCKETS, EngineCollector


class _ReplicaCollector:
    """Per-replica gauges and counters of replicated tiers (``gateway.backends.replicas.ReplicaSet``)."""

    def __init__(self, backends: Callable[[], Mapping]):
        self._backends = backends

    def collect(self):
        labels = ["tier", "replica"]
        up = GaugeMetricFamily("gateway_replica_up", "1 while the replica's stats poll succeeds", labels=labels)
        load = GaugeMetricFamily(
            "gateway_replica_load",
            "Load estimate used for dispatch: other gateways' "
            "running+waiting at the last poll plus this gateway's requests in flight",
            labels=labels,
        )
        inflight = GaugeMetricFamily(
            "gateway_replica_inflight", "Requests this gateway has on the replica", labels=labels
        )
        sent = CounterMetricFamily(
            "gateway_replica_requests", "Requests dispatched to the replica (resumptions included)", labels=labels
        )
        moved = CounterMetricFamily(
            "gateway_replica_failovers",
            "Requests moved off the replica to another one (before or during their answer)",
            labels=labels,
        )
        resumed = CounterMetricFamily(
            "gateway_replica_resumed",
            "Answers that broke off mid-way on the replica and were resumed on another",
            labels=labels,
        )
        for name, backend in self._backends().items():
            for r in getattr(backend, "replica_stats", lambda: [])():
                key = [name, r["replica"]]
                up.add_metric(key, float(r["up"]))
                load.add_metric(key, r["load"])
                inflight.add_metric(key, r["inflight"])
                sent.add_metric(key, r["dispatched"])
                moved.add_metric(key, r["failovers"])
                resumed.add_metric(key, r["resumes"])
        yield from (up, load, inflight, sent, moved, resumed)


class _SourceCollector(abc.ABC):
    """Families read at scrape time from what ``source()`` returns; none while it returns None."""

    def __init__(self, source: Callable[[], object]):
        self._source = source

    def collect(self):
        obj = self._source()
        if obj is not None:
            yield from self.families(obj)

    @abc.abstractmethod
    def families(self, obj) -> Iterator:
        """The metric families of ``obj``, the source's current value."""


class _CacheCollector(_SourceCollector):
    """The semantic cache's index counters (``SemanticCache.stats()``)."""

    def families(self, cache):
        s = cache.stats()
        yield GaugeMetricFamily(
            "gateway_cache_entries", "Entries in this process's in-memory cache index", value=s["entries"]
        )
        yield CounterMetricFamily(
            "gateway_cache_index_rebuilds",
            "Full rebuilds of the in-memory index from the store (start-up, Redis reconnect)",
            value=s["rebuilds"],
        )
        yield CounterMetricFamily(
            "gateway_cache_remote_adds",
            "Entries stored by other gateway replicas, added to this index one at a time from Redis pub/sub",
            value=s["remote_adds"],
        )
        prop = GaugeMetricFamily(
            "gateway_cache_propagation_seconds",
            "Seconds from another replica creating an entry to this index holding it (quantiles of the last 1024)",
            labels=["quantile"],
        )
        for q, v in s["propagation_s"].items():
            prop.add_metric([q], v)
        yield prop
        v = s.get("verification")
        if v is None:
            return
        labels = ["kind", "tier"]
        verified = CounterMetricFamily(
            "gateway_cache_verified",
            "Hits answered again by the model in the background (the uniform cache.verify_share sample)",
            labels=labels,
        )
        wrong = CounterMetricFamily(
            "gateway_cache_verified_wrong",
            "Verified hits whose fresh answer disagreed with the served one",
            labels=labels,
        )
        rate = GaugeMetricFamily(
            "gateway_cache_live_false_hit_rate",
            "Estimated share of served hits that are wrong, with its two-sided 95% Clopper-Pearson interval",
            labels=[*labels, "stat"],
        )
        for e in v["estimates"]:
            key = [e["kind"], e["tier"]]
            verified.add_metric(key, e["verified"])
            wrong.add_metric(key, e["wrong"])
            if e["rate"] is not None:
                rate.add_metric([*key, "estimate"], e["rate"])
                rate.add_metric([*key, "low95"], e["ci95"][0])
                rate.add_metric([*key, "high95"], e["ci95"][1])
            rate.add_metric([*key, "bound"], e["bound"])
        yield verified
        yield wrong
        yield rate
        yield GaugeMetricFamily(
            "gateway_cache_tightened_scopes",
            "Cache scopes whose thresholds live verification moved stricter",
            value=len(v["tightened"]),
        )
        yield CounterMetricFamily(
            "gateway_cache_verify_dropped", "Verifications dropped because the queue was full", value=v["dropped"]
        )
        yield CounterMetricFamily(
            "gateway_cache_evicted_wrong",
            "Entries evicted as wrong (verification or the operator)",
            value=s.get("evicted_wrong", 0),
        )


class _LedgerSyncCollector(_SourceCollector):
    """``keys.shared``: the background sync of budgets and rate limits through Redis (``LedgerSync``)."""

    def families(self, sync):
        yield CounterMetricFamily(
            "gateway_usage_syncs",
            "Budget and rate-limit syncs with the other replicas through Redis that succeeded",
            value=sync.syncs,
        )
        yield CounterMetricFamily(
            "gateway_usage_sync_failures",
            "Syncs that failed (Redis unreachable or slow); the replica enforces locally meanwhile",
            value=sync.failures,
        )
        yield GaugeMetricFamily(
            "gateway_usage_sync_up", "1 while the last sync succeeded", value=0.0 if sync.down else 1.0
        )


# The HELP text of the gateway's own metrics, by name (``GatewayMetrics`` makes them).
_HELP = {
    "gateway_requests": "Chat completion requests by model and HTTP status",
    "gateway_cache_lookups": "Cache lookups by result (exact, semantic, guard_rejected, miss, bypass, error)",
    "gateway_cache_similarity": "Best cosine similarity found by a lookup",
    "gateway_cache_tokens_saved": "Completion tokens answered from the cache",
    "gateway_cache_unavailable": "Requests served with the cache bypassed because its store failed",
    "time_to_first_token_seconds": "Time to first token seen by the gateway",
    "e2e_request_latency_seconds": "End-to-end request latency",
    "inter_token_latency_seconds": "Time between streamed tokens, seen by the gateway (a delta of n tokens counts n times its gap / n)",
    "request_queue_time_seconds": "Time a request waited in its engine's queue",
    "prompt_tokens": "Prompt tokens processed",
    "request_prompt_tokens": "Prompt length of a request on a tier, in tokens",
    "generation_tokens": "Tokens generated",
    "gateway_route_decisions": "Requests routed to each tier, by how the tier was chosen (auto, explicit)",
    "gateway_fallbacks": "A tier could not answer and the next in the chain was tried, by cause (unavailable, overloaded, timeout, failed)",
    "gateway_cost_usd": "Spend charged to callers, from usage and tier prices",
    "gateway_cost_saved_usd": "What cache hits would have cost at their tier's prices",
    "gateway_rejected_limits": "Requests answered 429, by limit (rate, budget)",
    "gateway_repeated_requests": "Requests that reached a model asking exactly what an earlier one asked (same tenant, tier, messages, parameters)",
    "gateway_repeated_cost_usd": "What those repeated requests cost",
}
SIMILARITY_BUCKETS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 1.0)


class GatewayMetrics:
    def __init__(
        self,
        backends: Callable[[], Mapping],
        cache: Callable[[], object] | None = None,
        ledger_sync: Callable[[], object] | None = None,
    ):
        self.registry = CollectorRegistry()
        r = self.registry

        def counter(name: str, labels: list[str]) -> Counter:
            return Counter(name, _HELP[name], labels, registry=r)

        def latency(name: str, labels: list[str]) -> Histogram:  # seconds
            return Histogram(name, _HELP[name], labels, buckets=LATENCY_BUCKETS, registry=r)

        self.requests = counter("gateway_requests", ["model", "status"])
        self.cache_lookups = counter("gateway_cache_lookups", ["result", "model"])
        name = "gateway_cache_similarity"
        self.cache_similarity = Histogram(name, _HELP[name], buckets=SIMILARITY_BUCKETS, registry=r)
        self.cache_tokens_saved = counter("gateway_cache_tokens_saved", ["model"])
        self.cache_store_errors = counter("gateway_cache_unavailable", ["op"])
        self.ttft = latency("time_to_first_token_seconds", ["model", "cache"])
        self.e2e = latency("e2e_request_latency_seconds", ["model", "cache"])
        self.itl = latency("inter_token_latency_seconds", ["model"])
        self.queue = latency("request_queue_time_seconds", ["model"])
        self.prompt_tokens = counter("prompt_tokens", ["model"])
        name = "request_prompt_tokens"
        self.prompt_lengths = Histogram(name, _HELP[name], ["model"], buckets=PROMPT_BUCKETS, registry=r)
        self.generation_tokens = counter("generation_tokens", ["model"])
        self.routes = counter("gateway_route_decisions", ["tier", "how"])
        self.fallbacks = counter("gateway_fallbacks", ["tier", "to", "cause"])
        self.cost = counter("gateway_cost_usd", ["tier"])
        self.cost_saved = counter("gateway_cost_saved_usd", ["tier"])
        self.rate_limited = counter("gateway_rejected_limits", ["limit"])
        self.repeated = counter("gateway_repeated_requests", ["tier"])
        self.repeated_cost = counter("gateway_repeated_cost_usd", ["tier"])
        r.register(EngineCollector(backends))
        r.register(_ReplicaCollector(backends))
        if cache is not None:
            r.register(_CacheCollector(cache))
        if ledger_sync is not None:
            r.register(_LedgerSyncCollector(ledger_sync))

    def render(self) -> bytes:
        return generate_latest(self.registry)
