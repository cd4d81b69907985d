"""The semantic cache's persistence: this process's copy of what the store holds, kept in sync with it.

In: the store's entries (``CacheStore.iter_entries`` on start and after a reconnect), entries this process
writes (``add``), and other processes' writes and deletions (Redis pub/sub: ``on_remote_put``,
``on_remote_delete``, ``on_resync``). Out: ``state``, the ``LocalState`` the lookup path reads: the exact
table (scope key, normalized question) -> id, each id's metadata, and the ``VectorIndex`` per scope.
Everything here runs on the event loop; a rebuild reads the store while lookups keep using the old state,
and changes made meanwhile are logged and replayed onto the new one.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gateway.cache.index import VectorIndex
from gateway.cache.store import CacheEntry, CacheStore, RedisStore, StoreUnavailable

log = logging.getLogger("gateway.cache.semantic_cache")


@dataclass(frozen=True)
class EntryMeta:
    scope_key: str
    normalized: str
    question: str
    created: float
    finish_reason: str = "stop"
    completion_tokens: int = 0
    reply_vec: np.ndarray | None = None
    reply: str = ""


class LocalState:
    """What this process knows about the store's entries: exact-match table, metadata, vectors.

    One question per scope keeps one entry (the newest): a repeat store, or two processes racing on
    the same miss, replaces rather than duplicates."""

    def __init__(self, dim: int, hnsw_threshold: int):
        self.exact: dict[tuple[str, str], str] = {}
        self.meta: dict[str, EntryMeta] = {}
        self.index = VectorIndex(dim, hnsw_threshold=hnsw_threshold)

    def add(self, entry: CacheEntry) -> str | None:
        """Index ``entry``; returns the id it replaced (or None)."""
        if entry.id in self.meta:
            return None
        key = (entry.scope_key, entry.normalized)
        old = self.exact.get(key)
        if old is not None and self.meta[old].created > entry.created:
            return None  # we already hold a newer answer to this question
        if old is not None:
            self.forget(old)
        self.exact[key] = entry.id
        self.meta[entry.id] = EntryMeta(
            entry.scope_key,
            entry.normalized,
            entry.question,
            entry.created,
            entry.finish_reason,
            entry.completion_tokens,
            entry.reply_embedding,
            entry.reply,
        )
        if entry.embedding is not None:
            self.index.add(entry.scope_key, entry.id, entry.embedding)
        return old

    def forget(self, entry_id: str) -> None:
        meta = self.meta.pop(entry_id, None)
        if meta is not None and self.exact.get((meta.scope_key, meta.normalized)) == entry_id:
            del self.exact[(meta.scope_key, meta.normalized)]
        self.index.remove(entry_id)


class Replica:
    """``state`` and the work that keeps it equal to the store's contents. ``counters`` is the cache's
    (rebuilds, remote_adds, expired); ``count_error(where, exc)`` counts a store failure."""

    def __init__(
        self,
        store: CacheStore,
        dim: int,
        hnsw_threshold: int,
        *,
        counters: Counter,
        count_error: Callable[[str, BaseException], None],
        clock: Callable[[], float],
    ):
        self.store, self.dim, self.hnsw_threshold = store, dim, hnsw_threshold
        self.counters, self.count_error, self.clock = counters, count_error, clock
        self.state = LocalState(dim, hnsw_threshold)
        # While a rebuild reads the store, local changes are also logged here and replayed on the new state.
        self._rebuild_log: list[tuple[str, object]] | None = None
        self.synced: asyncio.Event | None = None  # set once the first rebuild was attempted
        # Seconds from another process creating an entry to this index holding it (the last 1024;
        # both clocks are wall clocks: exact on one host, off by the clock skew across hosts).
        self.propagation_s: deque[float] = deque(maxlen=1024)

    def add(self, entry: CacheEntry) -> str | None:
        if self._rebuild_log is not None:
            self._rebuild_log.append(("add", entry))
        return self.state.add(entry)

    def forget(self, entry_id: str) -> None:
        if self._rebuild_log is not None:
            self._rebuild_log.append(("forget", entry_id))
        self.state.forget(entry_id)

    def forget_many(self, entry_ids) -> None:
        for entry_id in entry_ids:
            self.forget(entry_id)

    async def rebuild(self) -> None:
        """Replace the in-memory state with the store's entries (start, and after a reconnect).
        Lookups keep using the old state meanwhile; changes made during the rebuild are replayed."""
        fresh = LocalState(self.dim, self.hnsw_threshold)
        self._rebuild_log = []
        try:
            n = 0
            async for entry in self.store.iter_entries():
                fresh.add(entry)
                n += 1
                if n % 512 == 0:
                    await asyncio.sleep(0)  # let requests through during a big rebuild
            for op, arg in self._rebuild_log:
                fresh.add(arg) if op == "add" else fresh.forget(arg)
            self.state = fresh
        finally:
            self._rebuild_log = None
        self.counters["rebuilds"] += 1
        log.info("cache index rebuilt from the %s store: %d entries", self.store.kind, len(fresh.meta))

    async def get_full(self, entry_id: str) -> CacheEntry | None:
        if isinstance(self.store, RedisStore):
            return await self.store.get_full(entry_id)
        return await self.store.get(entry_id)

    # -- events from other processes (Redis) ------------------------------------------------------

    async def on_remote_put(self, entry_id: str) -> None:
        if entry_id in self.state.meta:
            return
        entry = await self.get_full(entry_id)
        if entry is not None and entry.id not in self.state.meta:
            self.add(entry)
            if entry.id in self.state.meta:  # not superseded by a newer answer held here
                self.counters["remote_adds"] += 1  # incremental: one vector into its scope's index
                self.propagation_s.append(max(0.0, self.clock() - entry.created))

    async def on_remote_delete(self, entry_ids: list[str]) -> None:
        self.forget_many(entry_ids)

    async def on_resync(self) -> None:
        try:
            await self.rebuild()
        finally:
            if self.synced is not None:
                self.synced.set()

    async def purge_loop(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            try:
                gone = await self.store.purge_expired()
                self.forget_many(gone)
                self.counters["expired"] += len(gone)
            except StoreUnavailable as exc:
                self.count_error("purge", exc)
            except Exception as exc:
                log.exception("cache purge failed")
                self.count_error("purge", exc)
