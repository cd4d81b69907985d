"""Prometheus metrics of one gateway app (its own registry: several apps in one process stay apart).

Engine gauges (running, waiting, KV usage, preemptions) are read from the backends at scrape time,
so they are never stale; rates are left to PromQL over the counters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from runtime.serving.metrics import LATENCY_BUCKETS, EngineCollector


class _ReplicaCollector:
    """Per-replica gauges and counters of replicated tiers (``gateway.replicas.ReplicaSet``)."""

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


class _CacheCollector:
    """The semantic cache's index counters (``SemanticCache.stats()``), read at scrape time."""

    def __init__(self, cache: Callable[[], object]):
        self._cache = cache

    def collect(self):
        cache = self._cache()
        if cache is None:
            return
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


class _LedgerSyncCollector:
    """``keys.shared``: the background sync of budgets and rate limits through Redis (``LedgerSync``)."""

    def __init__(self, sync: Callable[[], object]):
        self._sync = sync

    def collect(self):
        sync = self._sync()
        if sync is None:
            return
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


class GatewayMetrics:
    def __init__(
        self,
        backends: Callable[[], Mapping],
        cache: Callable[[], object] | None = None,
        ledger_sync: Callable[[], object] | None = None,
    ):
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "gateway_requests", "Chat completion requests by model and HTTP status", ["model", "status"], registry=r
        )
        self.cache_lookups = Counter(
            "gateway_cache_lookups",
            "Cache lookups by result (exact, semantic, guard_rejected, miss, bypass, error)",
            ["result", "model"],
            registry=r,
        )
        self.cache_similarity = Histogram(
            "gateway_cache_similarity",
            "Best cosine similarity found by a lookup",
            buckets=(0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 1.0),
            registry=r,
        )
        self.cache_tokens_saved = Counter(
            "gateway_cache_tokens_saved", "Completion tokens answered from the cache", ["model"], registry=r
        )
        self.cache_store_errors = Counter(
            "gateway_cache_unavailable",
            "Requests served with the cache bypassed because its store failed",
            ["op"],
            registry=r,
        )
        self.ttft = Histogram(
            "time_to_first_token_seconds",
            "Time to first token seen by the gateway",
            ["model", "cache"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.e2e = Histogram(
            "e2e_request_latency_seconds",
            "End-to-end request latency",
            ["model", "cache"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.itl = Histogram(
            "inter_token_latency_seconds",
            "Time between streamed tokens, seen by the gateway (a delta of n tokens counts n times its gap / n)",
            ["model"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.queue = Histogram(
            "request_queue_time_seconds",
            "Time a request waited in its engine's queue",
            ["model"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.prompt_tokens = Counter("prompt_tokens", "Prompt tokens processed", ["model"], registry=r)
        self.generation_tokens = Counter("generation_tokens", "Tokens generated", ["model"], registry=r)
        self.routes = Counter(
            "gateway_route_decisions",
            "Requests routed to each tier, by how the tier was chosen (auto, explicit)",
            ["tier", "how"],
            registry=r,
        )
        self.fallbacks = Counter(
            "gateway_fallbacks",
            "A tier could not answer and the next in the chain was "
            "tried, by cause (unavailable, overloaded, timeout, failed)",
            ["tier", "to", "cause"],
            registry=r,
        )
        self.cost = Counter(
            "gateway_cost_usd", "Spend charged to callers, from usage and tier prices", ["tier"], registry=r
        )
        self.cost_saved = Counter(
            "gateway_cost_saved_usd", "What cache hits would have cost at their tier's prices", ["tier"], registry=r
        )
        self.rate_limited = Counter(
            "gateway_rejected_limits", "Requests answered 429, by limit (rate, budget)", ["limit"], registry=r
        )
        r.register(EngineCollector(backends))
        r.register(_ReplicaCollector(backends))
        if cache is not None:
            r.register(_CacheCollector(cache))
        if ledger_sync is not None:
            r.register(_LedgerSyncCollector(ledger_sync))

    def render(self) -> bytes:
        return generate_latest(self.registry)
