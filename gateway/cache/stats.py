"""The semantic cache's counters as one snapshot for ``/metrics`` and the dashboard.

In: the cache's counters, its store, replica, embedder, config and (when attached) verifier. Out: plain
JSON (``snapshot``): lookups by kind, stores, errors, evictions, sizes, propagation quantiles, embedder work,
the thresholds in force and where they came from. Read on the event loop; nothing here changes state.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from gateway.cache.config import CacheConfig
from gateway.cache.lookup import LOOKUP_KINDS
from gateway.cache.replica import Replica
from gateway.cache.store import CacheStore


def snapshot(
    counters: Counter, store: CacheStore, replica: Replica, embedder, config: CacheConfig, verifier=None, learner=None
) -> dict[str, Any]:
    c = counters
    state = replica.state
    return {
        "lookups": {kind: c[f"lookup_{kind}"] for kind in LOOKUP_KINDS},
        "stores": c["stores"],
        "store_skipped": c["store_skipped"],
        "errors": c["errors"],  # lookups answered "error" + stores dropped + other store failures
        "store_errors": getattr(store, "errors", 0),  # every failed Redis call, listener included
        "evictions": c["evictions"],
        "expired": c["expired"],
        "entries": len(state.meta),
        "indexed": len(state.index),
        "rebuilds": c["rebuilds"],  # full rebuilds from the store (start, reconnect)
        "remote_adds": c["remote_adds"],  # entries of other processes added one by one (pub/sub)
        "propagation_s": quantiles(replica.propagation_s),  # {"0.5": s, "0.99": s} over the last 1024 adds
        "store": store.kind,
        "store_available": getattr(store, "available", True),
        "embed_forward_passes": embedder.forward_passes,
        "embed_texts": embedder.texts_embedded,
        "evicted_wrong": c["evicted_wrong"],
        "thresholds": {
            "single": [config.threshold, config.checker_threshold],
            "conversation": [config.conversation_threshold, config.conversation_checker_threshold],
            "source": config.threshold_source,
            "bound": config.bounds(),
            "conversation_match": config.conversation_match,
        },
        **({"verification": verifier.stats()} if verifier is not None else {}),
        **({"learning": learner.stats()} if learner is not None else {}),
    }


def quantiles(values) -> dict[str, float]:
    if not values:
        return {}
    v = np.asarray(values, dtype=np.float64)
    return {q: float(np.quantile(v, float(q))) for q in ("0.5", "0.99")}
