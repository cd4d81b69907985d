"""Semantic cache for the gateway: scope -> exact match -> MiniLM + FAISS -> precision guard -> store.

Public API (see ``semantic_cache`` for the data flow)::

    cache = SemanticCache(CacheConfig(...))          # or CacheConfig.from_mapping(yaml_section)
    await cache.start()
    scope, question = CacheScope.from_request(tenant, model, messages, params)
    hit = await cache.lookup(scope, question, no_cache=False)      # CacheLookup
    await cache.store(scope, question, answer, finish_reason, usage, model, no_store=False)
    cache.stats(); await cache.close()

Heavy imports (torch, sentence-transformers, faiss, redis) happen when the cache starts, not here.
"""

from gateway.cache.scope import CacheScope
from gateway.cache.semantic_cache import LOOKUP_KINDS, CacheConfig, CacheLookup, SemanticCache
from gateway.cache.store import CacheEntry, Served

__all__ = ["CacheConfig", "CacheEntry", "CacheLookup", "CacheScope", "LOOKUP_KINDS", "SemanticCache", "Served"]
