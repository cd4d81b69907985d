"""The semantic cache: scope -> exact match -> embedding search -> precision guard -> stored answer.

``SemanticCache`` wires five parts together and owns their lifecycle (``start``/``close``):

    config.py     CacheConfig: the settings, validated once, thresholds from the calibration under a bound
    admission.py  Admission: which requests may use the cache (``accepts``), which answers it keeps (``store``)
    lookup.py     Lookup: the read path, exact -> embed -> search -> check -> fetch (``CacheLookup``)
    replica.py    Replica: this process's copy of the store (exact table, metadata, vectors), kept in sync
                  (rebuild on start and reconnect, other processes' writes by pub/sub, the expiry sweep)
    stats.py      snapshot: the counters for /metrics
    verify.py     Verifier: live verification of served hits (``attach_verifier``, ``offer_verification``)
    learn.py      ThresholdLearner: labels from unserved near-misses and verified hits, thresholds refit
                  below the calibrated ones where they support it (``attach_learner``; ``cache.learn``)

Data flow of ``lookup(scope, question)`` (event loop; the embedding runs on the embedder's thread): the
policy may bypass (disabled, ``no_cache``, a sampled request under ``cache_sampled``, the store's circuit
open), else ``Lookup.search``; nothing the store or a model does wrong reaches the caller (an "error"
lookup, counted). ``store(...)`` hands a finished answer to ``Admission`` (and, after a near-miss, to the
learner with the candidate it was compared against). The vector of a question looked
up is kept for the store that follows its miss (``_embed``: the last 1,024 questions).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gateway.cache.admission import Admission
from gateway.cache.checker import Checker, make_checker
from gateway.cache.config import SAMPLED_POLICIES, CacheConfig
from gateway.cache.embedder import Embedder
from gateway.cache.lookup import LOOKUP_KINDS, CacheLookup, Lookup, LookupKind
from gateway.cache.replica import Replica
from gateway.cache.scope import CacheScope
from gateway.cache.stats import snapshot
from gateway.cache.store import CacheStore, FileStore, RedisStore, StoreUnavailable

log = logging.getLogger(__name__)

__all__ = ["LOOKUP_KINDS", "SAMPLED_POLICIES", "CacheConfig", "CacheLookup", "LookupKind", "SemanticCache"]


class SemanticCache:
    """See the module docstring. One instance per gateway process; safe for concurrent requests."""

    def __init__(
        self,
        config: CacheConfig | None = None,
        *,
        embedder: Embedder | None = None,
        store: CacheStore | None = None,
        checker: Checker | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.config = config or CacheConfig()
        self.clock = clock
        self._own_embedder = embedder is None
        self.embedder = embedder or self._make_embedder()
        self._store = store or self._make_store()
        self._own_checker = checker is None
        # The threshold lives in the config (one per kind of scope); the checker only scores.
        self.checker = checker or make_checker(
            self.config.checker if self.config.guard else "none",
            num_threads=self.config.checker_threads,
            read_replies=self.config.checker_reads_replies,
            model_path=self.config.checker_model or None,
        )
        self.counters: Counter[str] = Counter()
        self.replica = Replica(
            self._store,
            self.embedder.dim,
            self.config.hnsw_threshold,
            counters=self.counters,
            count_error=self._count_error,
            clock=self.clock,
        )
        self._lookup_path = Lookup(
            self.config, self.replica, self._store, self.checker, self._embed, self.thresholds, self._count_error
        )
        self.admission = Admission(
            self.config,
            self.replica,
            self._store,
            self._embed,
            counters=self.counters,
            count_error=self._count_error,
            clock=self.clock,
        )
        self._recent_vecs: OrderedDict[str, np.ndarray] = OrderedDict()  # question -> vector (lookup -> store)
        self._tasks: list[asyncio.Task] = []
        self._started = False
        self.verifier = None  # gateway.cache.verify.Verifier, once attach_verifier() was called
        self.learner = None  # gateway.cache.learn.ThresholdLearner, once attach_learner() was called
        self._near: OrderedDict[tuple[str, str], Any] = OrderedDict()  # (scope key, question) -> NearMiss

    def _make_embedder(self) -> Embedder:
        c = self.config
        common = dict(max_batch=c.embed_max_batch, max_wait_ms=c.embed_max_wait_ms, num_threads=c.embed_threads or None)
        if c.embed_backend == "onnx":
            from gateway.cache.onnx_models import OnnxEmbedder

            return OnnxEmbedder(**common)
        return Embedder(quantize=c.embed_quantize, **common)

    def _make_store(self) -> CacheStore:
        c = self.config
        common = dict(ttl_seconds=c.ttl_seconds, max_entries=c.max_entries, clock=self.clock)
        if c.store == "redis":
            return RedisStore(
                c.redis_url, prefix=c.redis_prefix, timeout_s=c.redis_timeout_s, retry_s=c.redis_retry_s, **common
            )
        return FileStore(c.path, flush_interval_s=c.flush_interval_s, **common)

    @property
    def store_backend(self) -> CacheStore:
        return self._store

    @property
    def propagation_s(self):
        """Seconds from another process creating an entry to this index holding it (the last 1,024)."""
        return self.replica.propagation_s

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Load the embedder, open the store and rebuild the indexes. Never raises for an
        unreachable Redis: the cache then bypasses itself until the listener reconnects."""
        if self._started:
            return
        self._started = True
        if self.config.enabled:
            await self.embedder.start()
            if self.config.guard:
                await self.checker.start()
        replica = self.replica
        replica.synced = asyncio.Event()
        if self._store.shared:
            try:
                await self._store.open()
                reachable = True
            except StoreUnavailable as exc:
                self._count_error("start", exc)  # serve without the cache; the listener keeps trying
                reachable = False
            # Subscribe first, then rebuild (inside on_resync): no event can fall between the two.
            self._tasks.append(
                asyncio.create_task(
                    self._store.listen(replica.on_remote_put, replica.on_remote_delete, replica.on_resync)
                )
            )
            if reachable:
                with contextlib.suppress(asyncio.TimeoutError):
                    async with asyncio.timeout(max(5.0, self.config.redis_timeout_s * 8)):
                        await replica.synced.wait()
        else:
            try:
                await self._store.open()
                await replica.rebuild()
            except (StoreUnavailable, OSError) as exc:
                self._count_error("start", exc)
            replica.synced.set()
        self._tasks.append(asyncio.create_task(replica.purge_loop(self.config.purge_interval_s)))
        if self.verifier is not None and self.config.enabled:
            await self.verifier.start()
        if self.learner is not None and self.config.enabled:
            await self.learner.start()

    async def close(self) -> None:
        if self.verifier is not None:
            await self.verifier.close()
        if self.learner is not None:
            await self.learner.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        with contextlib.suppress(Exception):
            await self._store.close()
        if self._own_embedder:
            self.embedder.close()
        if self._own_checker:
            self.checker.close()
        self._started = False

    async def __aenter__(self) -> SemanticCache:
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # -- live verification -------------------------------------------------------------------------

    def attach_verifier(self, answer_fn, *, rng=None):
        """Verify a share of hits with ``answer_fn(request, tier) -> text`` (gateway/cache/verify.py).
        Call before ``start``; returns the Verifier."""
        from gateway.cache.verify import Verifier

        self.verifier = Verifier(self.config, answer_fn=answer_fn, embed=self._embed, evict=self.evict, rng=rng)
        if self.learner is not None:
            self.verifier.on_label = self.learner.add
        return self.verifier

    def attach_learner(self):
        """Learn thresholds from near-misses (gateway/cache/learn.py). Call before ``start``; the
        answers' verdict is the verifier's rule (``verify.answers_agree``). Returns the learner."""
        from gateway.cache.calibration import DEFAULT_TABLE, CalibrationError, load_table, rows_for
        from gateway.cache.learn import ThresholdLearner
        from gateway.cache.verify import answers_agree

        def base(kind: str) -> tuple[float, float]:
            c = self.config
            if kind == "conversation":
                return c.conversation_threshold, c.conversation_checker_threshold
            return c.threshold, c.checker_threshold

        def grid(kind: str) -> list[tuple[float, float]]:
            try:
                table = load_table(self.config.calibration or str(DEFAULT_TABLE))
                return [(r.cosine, r.checker) for r in rows_for(table, self.config.checker, kind)]
            except CalibrationError:
                return []

        async def score(cached: str, incoming: str, conversation: bool, replies) -> float:
            return (await self.checker.check(cached, incoming, conversation, replies)).score

        self.learner = ThresholdLearner(
            self.config,
            base=base,
            grid=grid,
            fetch=self._store.get,
            score=score,
            agree=lambda served, fresh: answers_agree(self._embed, self.config.verify_answer_threshold, served, fresh),
            clock=self.clock,
        )
        if self.verifier is not None:
            self.verifier.on_label = self.learner.add
        return self.learner

    def offer_verification(
        self, scope: CacheScope, question: str, lookup: CacheLookup, request: Any, tier: str
    ) -> bool:
        """After a hit was answered: hand it to the verifier (never blocks; False: not chosen)."""
        if self.verifier is None or not lookup.hit or lookup.entry is None or lookup.served is None:
            return False
        t = getattr(request, "temperature", 0.0)
        if (self.config.default_temperature if t is None else t) > 0 and not self.config.verify_sampled:
            self.verifier.skipped_sampled += 1  # two samples differ by design: not a verdict on the cache
            return False
        from gateway.cache.verify import Job

        kind = "single" if scope.kind == "single" else "conversation"
        learned = (  # served only thanks to learned thresholds: labelled at learn_verify_share
            self.learner is not None
            and lookup.kind == "semantic"
            and self.learner.thresholds(kind) is not None
            and not self._within(self.learner.base(kind), lookup.similarity, lookup.score)
        )
        force = learned and self.verifier.rng.random() < self.config.learn_verify_share
        return self.verifier.offer(
            Job(
                scope_key=scope.key(),
                kind="single" if scope.kind == "single" else "conversation",
                tier=tier,
                tenant=scope.tenant,
                entry_id=lookup.entry.id,
                question=question,
                served=lookup.served.answer,
                lookup=lookup.kind,
                similarity=lookup.similarity,
                request=request,
                uniform=False,
                score=lookup.score,
            ),
            force=force,
        )

    @staticmethod
    def _within(thresholds: tuple[float, float], similarity: float | None, score: float | None) -> bool:
        t, c = thresholds
        return (similarity if similarity is not None else 1.0) >= t and (score if score is not None else 1.0) >= c

    async def evict(self, entry_id: str) -> bool:
        """Remove one entry (a verified wrong answer, or the operator's action); False if unknown."""
        known = entry_id in self.replica.state.meta
        try:
            await self._store.delete([entry_id])
        except StoreUnavailable as exc:
            self._count_error("evict", exc)
            return False
        self.replica.forget(entry_id)
        self.counters["evicted_wrong"] += known
        return known

    # -- policy ----------------------------------------------------------------------------------

    def accepts(self, *, temperature: float | None = None, seed: int | None = None) -> bool:
        """Whether a request with these sampling settings may use the cache at all (``Admission.accepts``)."""
        return self.admission.accepts(temperature=temperature, seed=seed)

    # -- lookup ----------------------------------------------------------------------------------

    async def lookup(
        self, scope: CacheScope, question: str, *, no_cache: bool = False, max_tokens: int | None = None
    ) -> CacheLookup:
        """``max_tokens``: a greedy request's limit (its scope leaves max_tokens out, so stored answers of
        any length are candidates and ``CacheEntry.serve`` decides); None: serve entries whole."""
        result = await self._lookup(scope, question, no_cache, max_tokens)
        self.counters[f"lookup_{result.kind}"] += 1
        if result.near is not None and self.learner is not None:  # labelled once the model has answered
            self._near[(result.near.scope_key, question)] = result.near
            if len(self._near) > 1024:
                self._near.popitem(last=False)
        return result

    async def _lookup(self, scope: CacheScope, question: str, no_cache: bool, max_tokens: int | None) -> CacheLookup:
        if not self.config.enabled:
            return CacheLookup("bypass", reason="cache disabled")
        if no_cache:
            return CacheLookup("bypass", reason="no-cache requested")
        if not self.admission.scope_accepts(scope):
            return CacheLookup("bypass", reason=f"sampled request (cache_sampled={self.config.cache_sampled})")
        if isinstance(self._store, RedisStore) and not self._store.available:
            self.counters["errors"] += 1
            return CacheLookup("error", reason="store unavailable")
        try:
            return await self._lookup_path.search(scope, question, max_tokens)
        except StoreUnavailable as exc:
            self._count_error("lookup", exc)
            return CacheLookup("error", reason=f"store unavailable: {exc}")
        except Exception as exc:  # never let the cache fail a request
            log.exception("cache lookup failed")
            self._count_error("lookup", exc)
            return CacheLookup("error", reason=f"{type(exc).__name__}: {exc}")

    def thresholds(self, scope: CacheScope) -> tuple[float, float]:
        """(cosine threshold, checker score threshold) for this kind of scope, or the stricter ones live
        verification moved this scope to."""
        if self.verifier is not None:
            moved = self.verifier.thresholds(scope.key())
            if moved is not None:
                return moved
        if self.learner is not None:
            learned = self.learner.thresholds("single" if scope.kind == "single" else "conversation")
            if learned is not None:
                return learned
        c = self.config
        if scope.kind == "conversation":
            return c.conversation_threshold, c.conversation_checker_threshold
        return c.threshold, c.checker_threshold

    async def _embed(self, question: str) -> np.ndarray:
        vec = self._recent_vecs.get(question)
        if vec is None:
            vec = await self.embedder.embed(question)
            self._recent_vecs[question] = vec
            if len(self._recent_vecs) > 1024:
                self._recent_vecs.popitem(last=False)
        else:
            self._recent_vecs.move_to_end(question)
        return vec

    # -- store -----------------------------------------------------------------------------------

    async def store(
        self,
        scope: CacheScope,
        question: str,
        answer: str,
        finish_reason: str | None,
        usage: Mapping[str, int] | None,
        model: str,
        *,
        no_store: bool = False,
        cuts: tuple[int, ...] | None = None,
    ) -> bool:
        """Cache a finished answer. Returns True when stored; False when skipped by policy (disabled,
        no_store, empty, sampled, not "stop" unless ``cuts`` is given) or dropped on a store error.

        ``cuts`` (greedy requests, whose scope leaves max_tokens out): the character offset of the answer
        after each token (-1: unknown); with it an answer that reached its length limit is kept too, and
        shorter requests are served from it. An answer never replaces a stored one that covers more (one
        that stopped by itself, or a longer one)."""
        near = self._near.pop((scope.key(), question), None) if self._near else None
        if near is not None and self.learner is not None and finish_reason == "stop":
            self.learner.offer(near, answer)  # a whole answer only: a cut one would not compare
        return await self.admission.store_answer(
            scope, question, answer, finish_reason, usage, model, no_store=no_store, cuts=cuts
        )

    # -- stats -----------------------------------------------------------------------------------

    def _count_error(self, where: str, exc: BaseException) -> None:
        self.counters["errors"] += 1
        self.counters[f"errors_{where}"] += 1
        log.debug("cache %s error: %s", where, exc)

    def stats(self) -> dict[str, Any]:
        """Counters for metrics: lookups by kind, stores, errors, evictions, sizes, embedder work
        (``stats.snapshot``)."""
        return snapshot(
            self.counters, self._store, self.replica, self.embedder, self.config, self.verifier, self.learner
        )
