"""Repeated requests: how much of the traffic that reached a model asked exactly what was asked before.

The advisor's "repeated calls" branch (``gateway.advise.symptoms.repeated_calls``: cost -> a semantic
cache) needs this figure whether or not a cache is running: with no cache, nothing else in the gateway
sees a repeat. A request that reached a model (a cache miss or a bypass) is keyed by a digest of what makes its answer (tenant,
routed tier, messages, the answer-changing parameters: the cache scope's parts); a key seen among the last
``capacity`` keys is a repeat, counted with its cost in ``gateway_repeated_requests_total`` and
``gateway_repeated_cost_usd_total``. Only 16-byte digests are kept, never text; an LRU bounds memory
(10,000 keys: about 1 MB).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict


class RepeatTracker:
    def __init__(self, capacity: int = 10_000):
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._seen: OrderedDict[bytes, None] = OrderedDict()

    @staticmethod
    def key(tenant: str, tier: str, messages: list, params: dict) -> bytes:
        text = json.dumps([tenant, tier, messages, params], sort_keys=True, default=str, separators=(",", ":"))
        return hashlib.blake2b(text.encode(), digest_size=16).digest()

    def seen(self, key: bytes) -> bool:
        """Whether ``key`` came before (among the last ``capacity``); remembers it either way."""
        if key in self._seen:
            self._seen.move_to_end(key)
            return True
        self._seen[key] = None
        if len(self._seen) > self.capacity:
            self._seen.popitem(last=False)
        return False
