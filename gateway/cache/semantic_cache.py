"""The semantic cache: scope -> exact match -> embedding search -> precision guard -> stored answer.

Data flow of ``lookup(scope, question)`` (event loop; the embedding runs on the embedder's thread):

    bypass?  disabled, ``no_cache``, sampled request under the policy, store circuit open
    exact    (scope key, normalized question) in an in-memory dict -> entry; no embedding at all
    embed    MiniLM vector of the question (micro-batched with concurrent lookups)
    search   the scope's FAISS index: the best few candidates with cosine >= threshold
    check    the first candidate the precision checker accepts is the hit (``checker``: a cross-encoder
             reading both questions together, on its own thread)
    fetch    the entry from the store (Redis: one HMGET), then ``touch`` for LRU

``store(...)`` keeps complete answers (finish_reason "stop"), and for greedy requests also answers that
reached max_tokens, with the character offset of each token so that shorter requests get a cut
(``CacheEntry.serve``); it writes the entry, and indexes it
here; with Redis the other gateway processes index it from the pub/sub event. Nothing the store does
wrong reaches the caller: failures count in ``errors`` and turn into misses / dropped stores, and the
cache resumes by itself (the Redis listener resubscribes and rebuilds the index).

In-memory state (``_LocalState``, owned by the event loop): the exact table (scope key, normalized)
-> id, metadata id -> (scope key, normalized, question, created) and the ``VectorIndex``; rebuilt from
the store on start and after a Redis reconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np

from gateway.cache.checker import CHECKERS, Checker, make_checker
from gateway.cache.embedder import Embedder
from gateway.cache.index import VectorIndex
from gateway.cache.normalize import normalize_question
from gateway.cache.scope import CONVERSATION_MODES, CacheScope
from gateway.cache.store import CacheEntry, CacheStore, FileStore, RedisStore, Served, StoreUnavailable

log = logging.getLogger(__name__)

LookupKind = Literal["exact", "semantic", "miss", "bypass", "guard_rejected", "error"]
LOOKUP_KINDS: tuple[str, ...] = ("exact", "semantic", "miss", "bypass", "guard_rejected", "error")
SAMPLED_POLICIES = ("never", "seeded", "always")


@dataclass(frozen=True)
class CacheConfig:
    """Validated once (``__post_init__``); every error names the key (``cache.<key>``)."""

    enabled: bool = True
    # The operator's bound on the share of lookups of different-answer look-alikes that hit, per kind
    # of scope ("single", "conversation"; a number sets both). The thresholds below, when left unset,
    # come from the calibration table (gateway/cache/calibration.py): the highest recall whose one-sided
    # 95% Clopper-Pearson upper bound on calibration false hits is within it. A bound the table cannot
    # support is a start-up error. Conversations under conversation_match "exact" need no thresholds.
    max_false_hit_rate: Any = 0.01
    calibration: str = ""  # the table (default: gateway/cache/models/calibration.json)
    # Cosine similarity a candidate needs before the checker reads it, and the checker's score it needs,
    # for single questions and for conversations. None: from the calibration under the bound; a number
    # overrides it (the bound is then not guaranteed, and ``threshold_source`` says so).
    threshold: float | None = None
    checker_threshold: float | None = None
    conversation_threshold: float | None = None
    conversation_checker_threshold: float | None = None
    # Conversations: cosine the assistant turns before the two follow-ups need (0: not compared).
    conversation_reply_threshold: float = 0.6
    # "exact": a conversation hits only the same conversation, every turn as sent (the default: one API
    # key often serves many end users, and an assistant turn can carry one user's account details).
    # "semantic": keyed by all user turns and the conversation's facts (gateway/cache/scope.py).
    conversation_match: str = "exact"
    guard: bool = True  # run the precision checker (False: every candidate above the threshold hits)
    checker: str = "cross_encoder"  # "cross_encoder" | "numbers" | "none" (gateway/cache/checker.py)
    checker_threads: int = 1
    checker_reads_replies: bool = True  # conversations: the checker also reads the assistant turns
    hnsw_threshold: int = 2048  # a scope's index switches from exact (flat) search to HNSW past this size
    ttl_seconds: float = 7 * 24 * 3600.0
    max_entries: int = 100_000
    store: str = "file"  # "file" | "redis"
    path: str = "~/.cache/jaxserve/cache.jsonl"
    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_prefix: str = "jaxserve:cache:"
    redis_timeout_s: float = 0.5
    redis_retry_s: float = 1.0  # circuit-breaker pause after a Redis failure
    # Requests with temperature > 0: never cache them, cache them only when a seed makes them
    # reproducible, or always (serve one sample to everyone who asks the same).
    cache_sampled: str = "seeded"
    default_temperature: float = 1.0  # the temperature of a request that does not give one (OpenAI: 1)
    top_k: int = 4  # candidates the guard may look at
    semantic_max_chars: int = 1000  # longer questions use the exact path only (MiniLM reads 256 tokens)
    embed_max_batch: int = 32
    # 0: a lone lookup does not wait for company; lookups that arrive while a pass runs form the next batch.
    embed_max_wait_ms: float = 0.0
    embed_threads: int = 1
    embed_quantize: str = "none"  # torch backend: "int8" for dynamic int8 MiniLM
    embed_backend: str = "onnx"  # MiniLM as int8 ONNX (gateway/cache/onnx_models.py); "torch": sentence-transformers
    # Live verification (gateway/cache/verify.py): this share of hits, and each scope's first
    # ``verify_first`` hits, are answered again by the model in the background and compared.
    verify_share: float = 0.02
    verify_first: int = 20
    verify_answer_threshold: float = 0.85  # answers' cosine that counts as the same answer
    verify_max_pending: int = 8  # queued verifications; a full queue drops (never waits)
    verify_workers: int = 1
    verify_min_window: int = 20  # verified hits of a scope before its estimate may tighten it
    # Sampled hits (temperature > 0): a fresh sample differs from the served one by design, so comparing
    # them measures sampling as much as the cache; off by default (counted as skipped_sampled).
    verify_sampled: bool = False
    flush_interval_s: float = 1.0  # FileStore write debounce
    purge_interval_s: float = 60.0  # expired-entry sweep

    def __post_init__(self) -> None:
        def bad(key: str, why: str) -> ValueError:
            return ValueError(f"cache.{key}: {why}, got {getattr(self, key)!r}")

        for key in ("enabled", "guard", "checker_reads_replies", "verify_sampled"):
            if not isinstance(getattr(self, key), bool):
                raise bad(key, "must be true or false")
        if self.conversation_match not in CONVERSATION_MODES:
            raise bad("conversation_match", f"must be one of {', '.join(CONVERSATION_MODES)}")
        if not isinstance(self.calibration, str):
            raise bad("calibration", "must be a file path (empty: the shipped table)")
        for key in ("conversation_reply_threshold",):
            if not _is_number(getattr(self, key)) or not 0.0 <= getattr(self, key) <= 1.0:
                raise bad(key, "must be a number in [0, 1]")
        if self.checker not in CHECKERS:
            raise bad("checker", f"must be one of {', '.join(CHECKERS)}")
        if (
            not isinstance(self.checker_threads, int)
            or isinstance(self.checker_threads, bool)
            or self.checker_threads < 1
        ):
            raise bad("checker_threads", "must be a positive integer")
        if not _is_number(self.verify_share) or not 0.0 <= self.verify_share <= 1.0:
            raise bad("verify_share", "must be a number in [0, 1]")
        if not _is_number(self.verify_answer_threshold) or not 0.0 <= self.verify_answer_threshold <= 1.0:
            raise bad("verify_answer_threshold", "must be a number in [0, 1]")
        if not isinstance(self.verify_first, int) or isinstance(self.verify_first, bool) or self.verify_first < 0:
            raise bad("verify_first", "must be an integer >= 0")
        for key in (
            "hnsw_threshold",
            "max_entries",
            "top_k",
            "semantic_max_chars",
            "embed_max_batch",
            "verify_max_pending",
            "verify_workers",
            "verify_min_window",
        ):
            if (
                not isinstance(getattr(self, key), int)
                or isinstance(getattr(self, key), bool)
                or getattr(self, key) < 1
            ):
                raise bad(key, "must be a positive integer")
        if self.embed_backend not in ("torch", "onnx"):
            raise bad("embed_backend", "must be 'torch' or 'onnx'")
        if self.embed_quantize not in ("none", "int8"):
            raise bad("embed_quantize", "must be 'none' or 'int8'")
        if not isinstance(self.embed_threads, int) or isinstance(self.embed_threads, bool) or self.embed_threads < 0:
            raise bad("embed_threads", "must be an integer >= 0 (0: leave torch's default)")
        for key in ("ttl_seconds", "redis_timeout_s", "redis_retry_s", "flush_interval_s", "purge_interval_s"):
            if not _is_number(getattr(self, key)) or getattr(self, key) <= 0:
                raise bad(key, "must be a positive number")
        if not _is_number(self.embed_max_wait_ms) or self.embed_max_wait_ms < 0:
            raise bad("embed_max_wait_ms", "must be a number >= 0")
        if not _is_number(self.default_temperature) or self.default_temperature < 0:
            raise bad("default_temperature", "must be a number >= 0")
        if self.store not in ("file", "redis"):
            raise bad("store", "must be 'file' or 'redis'")
        if self.cache_sampled not in SAMPLED_POLICIES:
            raise bad("cache_sampled", f"must be one of {', '.join(SAMPLED_POLICIES)}")
        if not isinstance(self.path, str) or not self.path.strip():
            raise bad("path", "must be a non-empty file path")
        if not isinstance(self.redis_url, str) or not self.redis_url.startswith(("redis://", "rediss://", "unix://")):
            raise bad("redis_url", "must start with redis://, rediss:// or unix://")
        if not isinstance(self.redis_prefix, str) or not self.redis_prefix:
            raise bad("redis_prefix", "must be a non-empty string")
        self._resolve_thresholds(bad)  # last: it reads the checker and the conversation mode

    def bounds(self) -> dict[str, float]:
        """``max_false_hit_rate`` per kind of scope."""
        b = self.max_false_hit_rate
        return dict(b) if isinstance(b, Mapping) else {"single": b, "conversation": b}

    def _resolve_thresholds(self, bad) -> None:
        b = self.max_false_hit_rate
        kinds = ("single", "conversation")
        if isinstance(b, Mapping):
            unknown = sorted(set(b) - set(kinds))
            if unknown:
                raise bad("max_false_hit_rate", f"unknown kind {unknown[0]!r} (kinds: single, conversation)")
            b = {k: b.get(k, 0.01) for k in kinds}
        else:
            b = {k: b for k in kinds}
        for k, v in b.items():
            if not _is_number(v) or not 0.0 < v < 1.0:
                raise bad("max_false_hit_rate", f"{k}: must be a number in (0, 1)")
        object.__setattr__(self, "max_false_hit_rate", b)
        names = {
            "single": ("threshold", "checker_threshold"),
            "conversation": ("conversation_threshold", "conversation_checker_threshold"),
        }
        source = {}
        for kind, keys in names.items():
            given = [getattr(self, key) for key in keys]
            for key, v in zip(keys, given):
                if v is not None and (not _is_number(v) or not 0.0 <= v <= 1.0):
                    raise bad(key, "must be a number in [0, 1] (or unset: from the calibration)")
            if all(v is not None for v in given):
                source[kind] = "config"
                continue
            if not self.enabled or (kind == "conversation" and self.conversation_match == "exact"):
                for key, v in zip(keys, given):  # unused: kept at the strictest, reported as such
                    object.__setattr__(self, key, 1.0 if v is None else v)
                source[kind] = "unused" if self.enabled else "disabled"
                continue
            from gateway.cache.calibration import DEFAULT_TABLE, CalibrationError, choose, load_table, rows_for

            checker = self.checker if self.guard else "none"
            try:
                table = load_table(self.calibration or str(DEFAULT_TABLE))
                row = choose(rows_for(table, checker, kind), b[kind], what=f"{kind}: ")
            except CalibrationError as exc:
                raise ValueError(f"cache.max_false_hit_rate: {exc}") from None
            for key, v, chosen in zip(keys, given, (row.cosine, row.checker)):
                object.__setattr__(self, key, chosen if v is None else v)
            source[kind] = "calibration" if all(v is None for v in given) else "config"
        object.__setattr__(self, "_threshold_source", source)

    @property
    def threshold_source(self) -> dict[str, str]:
        """Per kind: "calibration" (chosen under the bound), "config" (set by hand), "unused"."""
        return dict(getattr(self, "_threshold_source", {}))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> CacheConfig:
        """From a YAML/JSON mapping; unknown keys are an error that names them."""
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"cache.{unknown[0]}: unknown key (known: {', '.join(sorted(known))})")
        return cls(**data)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclass(frozen=True)
class CacheLookup:
    kind: LookupKind
    entry: CacheEntry | None = None  # set for "exact" and "semantic"
    similarity: float | None = None  # best cosine seen (1.0 for exact hits; None when not searched)
    reason: str = ""  # why it bypassed / missed / was rejected (for logs and headers)
    served: Served | None = None  # set with entry: the answer as this request gets it (maybe cut)

    @property
    def hit(self) -> bool:
        return self.kind in ("exact", "semantic")


@dataclass(frozen=True)
class _Meta:
    scope_key: str
    normalized: str
    question: str
    created: float
    finish_reason: str = "stop"
    completion_tokens: int = 0
    reply_vec: np.ndarray | None = None
    reply: str = ""


class _LocalState:
    """What this process knows about the store's entries: exact-match table, metadata, vectors.

    One question per scope keeps one entry (the newest): a repeat store, or two processes racing on
    the same miss, replaces rather than duplicates."""

    def __init__(self, dim: int, hnsw_threshold: int):
        self.exact: dict[tuple[str, str], str] = {}
        self.meta: dict[str, _Meta] = {}
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
        self.meta[entry.id] = _Meta(
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
        )
        self._local = _LocalState(self.embedder.dim, self.config.hnsw_threshold)
        self._recent_vecs: OrderedDict[str, np.ndarray] = OrderedDict()  # question -> vector (lookup -> store)
        self._tasks: list[asyncio.Task] = []
        # While a rebuild reads the store, local changes are also logged here and replayed on the new state.
        self._rebuild_log: list[tuple[str, Any]] | None = None
        self._synced: asyncio.Event | None = None  # set once the first rebuild was attempted
        self._started = False
        self.counters: Counter[str] = Counter()
        self.verifier = None  # gateway.cache.verify.Verifier, once attach_verifier() was called
        # Seconds from another process creating an entry to this index holding it (the last 1024;
        # both clocks are wall clocks: exact on one host, off by the clock skew across hosts).
        self.propagation_s: deque[float] = deque(maxlen=1024)

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
        self._synced = asyncio.Event()
        if self._store.shared:
            try:
                await self._store.open()
                reachable = True
            except StoreUnavailable as exc:
                self._count_error("start", exc)  # serve without the cache; the listener keeps trying
                reachable = False
            # Subscribe first, then rebuild (inside on_resync): no event can fall between the two.
            self._tasks.append(
                asyncio.create_task(self._store.listen(self._on_remote_put, self._on_remote_delete, self._on_resync))
            )
            if reachable:
                with contextlib.suppress(asyncio.TimeoutError):
                    async with asyncio.timeout(max(5.0, self.config.redis_timeout_s * 8)):
                        await self._synced.wait()
        else:
            try:
                await self._store.open()
                await self._rebuild()
            except (StoreUnavailable, OSError) as exc:
                self._count_error("start", exc)
            self._synced.set()
        self._tasks.append(asyncio.create_task(self._purge_loop()))
        if self.verifier is not None and self.config.enabled:
            await self.verifier.start()

    async def close(self) -> None:
        if self.verifier is not None:
            await self.verifier.close()
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
        return self.verifier

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
            )
        )

    async def evict(self, entry_id: str) -> bool:
        """Remove one entry (a verified wrong answer, or the operator's action); False if unknown."""
        known = entry_id in self._local.meta
        try:
            await self._store.delete([entry_id])
        except StoreUnavailable as exc:
            self._count_error("evict", exc)
            return False
        self._forget(entry_id)
        self.counters["evicted_wrong"] += known
        return known

    # -- policy ----------------------------------------------------------------------------------

    def accepts(self, *, temperature: float | None = None, seed: int | None = None) -> bool:
        """Whether a request with these sampling settings may use the cache at all (policy
        ``cache_sampled``). ``temperature=None`` means the request gave none (``default_temperature``)."""
        if not self.config.enabled:
            return False
        t = self.config.default_temperature if temperature is None else temperature
        if t <= 0:
            return True
        if self.config.cache_sampled == "always":
            return True
        return self.config.cache_sampled == "seeded" and seed is not None

    def _scope_accepts(self, scope: CacheScope) -> bool:
        return self.accepts(temperature=scope.param("temperature"), seed=scope.param("seed"))

    # -- lookup ----------------------------------------------------------------------------------

    async def lookup(
        self, scope: CacheScope, question: str, *, no_cache: bool = False, max_tokens: int | None = None
    ) -> CacheLookup:
        """``max_tokens``: a greedy request's limit (its scope leaves max_tokens out, so stored answers of
        any length are candidates and ``CacheEntry.serve`` decides); None: serve entries whole."""
        result = await self._lookup(scope, question, no_cache, max_tokens)
        self.counters[f"lookup_{result.kind}"] += 1
        return result

    async def _lookup(self, scope: CacheScope, question: str, no_cache: bool, max_tokens: int | None) -> CacheLookup:
        if not self.config.enabled:
            return CacheLookup("bypass", reason="cache disabled")
        if no_cache:
            return CacheLookup("bypass", reason="no-cache requested")
        if not self._scope_accepts(scope):
            return CacheLookup("bypass", reason=f"sampled request (cache_sampled={self.config.cache_sampled})")
        if isinstance(self._store, RedisStore) and not self._store.available:
            self.counters["errors"] += 1
            return CacheLookup("error", reason="store unavailable")
        try:
            return await self._search(scope, question, max_tokens)
        except StoreUnavailable as exc:
            self._count_error("lookup", exc)
            return CacheLookup("error", reason=f"store unavailable: {exc}")
        except Exception as exc:  # never let the cache fail a request
            log.exception("cache lookup failed")
            self._count_error("lookup", exc)
            return CacheLookup("error", reason=f"{type(exc).__name__}: {exc}")

    async def _search(self, scope: CacheScope, question: str, max_tokens: int | None) -> CacheLookup:
        scope_key = scope.key()
        normalized = normalize_question(question)
        entry_id = self._local.exact.get((scope_key, normalized))
        reply_vec: list = []  # the incoming reply's vector, embedded once when first needed
        if entry_id is not None and not await self._reply_matches(scope, entry_id, reply_vec):
            entry_id = None  # the same user turns after another assistant answer: not the same follow-up
        if entry_id is not None and scope.kind == "conversation":
            meta = self._local.meta.get(entry_id)
            if meta is not None and meta.reply != scope.reply:  # both whitespace-normalized by the scope
                entry_id = None  # same user turns, another wording of the answer: the checker decides
        if entry_id is not None:
            found = await self._fetch(entry_id, max_tokens)
            if isinstance(found, tuple):
                return CacheLookup("exact", found[0], 1.0, "same normalized question", found[1])
            if found == "short":
                return CacheLookup("miss", None, 1.0, "the stored answer is shorter than max_tokens")
        if scope.kind == "history" and self.config.conversation_match == "exact":
            return CacheLookup("miss", reason="conversations match exactly (cache.conversation_match: exact)")
        if len(question) > self.config.semantic_max_chars or self._local.index.scope(scope_key) is None:
            return CacheLookup(
                "miss",
                reason="no entry in this scope"
                if len(question) <= self.config.semantic_max_chars
                else "question too long for the semantic path",
            )
        vec = await self._embed(question)
        candidates = self._local.index.search(scope_key, vec, self.config.top_k)
        threshold, accept = self.thresholds(scope)
        best = candidates[0][1] if candidates else None
        rejected: tuple[float, str] | None = None
        for cand_id, sim in candidates:
            if sim < threshold:
                break
            meta = self._local.meta.get(cand_id)
            if meta is None:
                continue
            if not await self._reply_matches(scope, cand_id, reply_vec):
                rejected = rejected or (sim, "reply: the assistant turns before the follow-ups differ")
                continue
            if self.config.guard:
                conversation = scope.kind == "conversation"
                replies = (meta.reply, scope.reply) if conversation else None
                verdict = await self.checker.check(meta.question, question, conversation, replies)
                if verdict.score < accept:
                    rejected = rejected or (
                        sim,
                        verdict.reason or f"{self.checker.name}: {verdict.score:.3f} < {accept}",
                    )
                    continue
            found = await self._fetch(cand_id, max_tokens)
            if isinstance(found, tuple):
                return CacheLookup("semantic", found[0], sim, f"cosine {sim:.3f} >= {threshold}", found[1])
        if rejected is not None:
            return CacheLookup("guard_rejected", None, rejected[0], rejected[1])
        return CacheLookup("miss", None, best, "below threshold" if best is not None else "no candidates")

    async def _reply_matches(self, scope: CacheScope, entry_id: str, cache: list) -> bool:
        """Conversations: whether the assistant turn before the follow-up is close enough to the stored
        one's (cosine >= conversation_reply_threshold); both absent also matches."""
        t = self.config.conversation_reply_threshold
        meta = self._local.meta.get(entry_id)
        if scope.kind != "conversation" or t <= 0 or meta is None:
            return True
        if meta.reply_vec is None or not scope.reply:
            return meta.reply_vec is None and not scope.reply
        if not cache:
            cache.append(await self._embed(scope.reply[: self.config.semantic_max_chars]))
        return float(np.dot(cache[0], meta.reply_vec)) >= t

    def thresholds(self, scope: CacheScope) -> tuple[float, float]:
        """(cosine threshold, checker score threshold) for this kind of scope, or the stricter ones live
        verification moved this scope to."""
        if self.verifier is not None:
            moved = self.verifier.thresholds(scope.key())
            if moved is not None:
                return moved
        c = self.config
        if scope.kind == "conversation":
            return c.conversation_threshold, c.conversation_checker_threshold
        return c.threshold, c.checker_threshold

    async def _fetch(self, entry_id: str, max_tokens: int | None = None) -> tuple[CacheEntry, Served] | str | None:
        """The stored entry and what this request gets of it (``CacheEntry.serve``); None when it expired
        or was evicted elsewhere (forget it here too); "short" when it cannot answer ``max_tokens``."""
        entry = await self._store.get(entry_id)
        if entry is None:
            self._forget(entry_id)
            return None
        served = entry.serve(max_tokens)
        if served is None:
            return "short"
        try:
            await self._store.touch(entry_id)
        except StoreUnavailable as exc:  # the answer is already in hand; LRU order is best effort
            self._count_error("touch", exc)
        return entry, served

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
        if not self.config.enabled or no_store:
            self.counters["store_skipped"] += 1
            return False
        if (
            finish_reason not in (("stop", "length") if cuts is not None else ("stop",))
            or not answer.strip()
            or not self._scope_accepts(scope)
        ):
            self.counters["store_skipped"] += 1
            return False
        tokens = int((usage or {}).get("completion_tokens", 0))
        if finish_reason == "length" and self._covered(scope.key(), normalize_question(question), tokens):
            self.counters["store_skipped"] += 1
            return False
        try:
            await self._store_entry(scope, question, answer, finish_reason, usage or {}, model, tuple(cuts or ()))
        except StoreUnavailable as exc:
            self._count_error("store", exc)
            return False
        except Exception as exc:
            log.exception("cache store failed")
            self._count_error("store", exc)
            return False
        self.counters["stores"] += 1
        return True

    def _covered(self, scope_key: str, normalized: str, tokens: int) -> bool:
        """Whether the entry held for this question answers at least what a ``tokens``-long cut one would."""
        old = self._local.exact.get((scope_key, normalized))
        meta = self._local.meta.get(old) if old is not None else None
        return meta is not None and (meta.finish_reason == "stop" or meta.completion_tokens >= tokens)

    async def _store_entry(
        self,
        scope: CacheScope,
        question: str,
        answer: str,
        finish_reason: str,
        usage: Mapping[str, int],
        model: str,
        cuts: tuple[int, ...],
    ) -> None:
        scope_key = scope.key()
        normalized = normalize_question(question)
        vec = await self._embed(question) if len(question) <= self.config.semantic_max_chars else None
        reply_vec = None
        if scope.kind == "conversation" and scope.reply:
            reply_vec = await self._embed(scope.reply[: self.config.semantic_max_chars])
        now = self.clock()
        entry = CacheEntry(
            id=CacheEntry.new_id(),
            scope_key=scope_key,
            question=question,
            normalized=normalized,
            embedding=vec,
            answer=answer,
            finish_reason=finish_reason,
            usage={
                "prompt_tokens": int(usage.get("prompt_tokens", 0)),
                "completion_tokens": int(usage.get("completion_tokens", 0)),
            },
            model=model,
            created=now,
            last_hit=now,
            cuts=cuts,
            reply_embedding=reply_vec,
            reply=scope.reply if scope.kind == "conversation" else "",
        )
        evicted = await self._store.put(entry)
        replaced = self._add_local(entry)
        self._forget_many(evicted)
        self.counters["evictions"] += len(evicted)
        if replaced is not None:  # the same question answered again: keep the newest only
            with contextlib.suppress(StoreUnavailable):
                await self._store.delete([replaced])

    # -- local state -----------------------------------------------------------------------------

    def _add_local(self, entry: CacheEntry) -> str | None:
        if self._rebuild_log is not None:
            self._rebuild_log.append(("add", entry))
        return self._local.add(entry)

    def _forget(self, entry_id: str) -> None:
        if self._rebuild_log is not None:
            self._rebuild_log.append(("forget", entry_id))
        self._local.forget(entry_id)

    def _forget_many(self, entry_ids) -> None:
        for entry_id in entry_ids:
            self._forget(entry_id)

    async def _rebuild(self) -> None:
        """Replace the in-memory state with the store's entries (start, and after a reconnect).
        Lookups keep using the old state meanwhile; changes made during the rebuild are replayed."""
        fresh = _LocalState(self.embedder.dim, self.config.hnsw_threshold)
        self._rebuild_log = []
        try:
            n = 0
            async for entry in self._store.iter_entries():
                fresh.add(entry)
                n += 1
                if n % 512 == 0:
                    await asyncio.sleep(0)  # let requests through during a big rebuild
            for op, arg in self._rebuild_log:
                fresh.add(arg) if op == "add" else fresh.forget(arg)
            self._local = fresh
        finally:
            self._rebuild_log = None
        self.counters["rebuilds"] += 1
        log.info("cache index rebuilt from the %s store: %d entries", self._store.kind, len(fresh.meta))

    async def _get_full(self, entry_id: str) -> CacheEntry | None:
        if isinstance(self._store, RedisStore):
            return await self._store.get_full(entry_id)
        return await self._store.get(entry_id)

    # -- events from other processes (Redis) ------------------------------------------------------

    async def _on_remote_put(self, entry_id: str) -> None:
        if entry_id in self._local.meta:
            return
        entry = await self._get_full(entry_id)
        if entry is not None and entry.id not in self._local.meta:
            self._add_local(entry)
            if entry.id in self._local.meta:  # not superseded by a newer answer held here
                self.counters["remote_adds"] += 1  # incremental: one vector into its scope's index
                self.propagation_s.append(max(0.0, self.clock() - entry.created))

    async def _on_remote_delete(self, entry_ids: list[str]) -> None:
        self._forget_many(entry_ids)

    async def _on_resync(self) -> None:
        try:
            await self._rebuild()
        finally:
            if self._synced is not None:
                self._synced.set()

    async def _purge_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.purge_interval_s)
            try:
                gone = await self._store.purge_expired()
                self._forget_many(gone)
                self.counters["expired"] += len(gone)
            except StoreUnavailable as exc:
                self._count_error("purge", exc)
            except Exception as exc:
                log.exception("cache purge failed")
                self._count_error("purge", exc)

    # -- stats -----------------------------------------------------------------------------------

    def _count_error(self, where: str, exc: BaseException) -> None:
        self.counters["errors"] += 1
        self.counters[f"errors_{where}"] += 1
        log.debug("cache %s error: %s", where, exc)

    def stats(self) -> dict[str, Any]:
        """Counters for metrics: lookups by kind, stores, errors, evictions, sizes, embedder work."""
        c = self.counters
        return {
            "lookups": {kind: c[f"lookup_{kind}"] for kind in LOOKUP_KINDS},
            "stores": c["stores"],
            "store_skipped": c["store_skipped"],
            "errors": c["errors"],  # lookups answered "error" + stores dropped + other store failures
            "store_errors": getattr(self._store, "errors", 0),  # every failed Redis call, listener included
            "evictions": c["evictions"],
            "expired": c["expired"],
            "entries": len(self._local.meta),
            "indexed": len(self._local.index),
            "rebuilds": c["rebuilds"],  # full rebuilds from the store (start, reconnect)
            "remote_adds": c["remote_adds"],  # entries of other processes added one by one (pub/sub)
            "propagation_s": _quantiles(self.propagation_s),  # {"0.5": s, "0.99": s} over the last 1024 adds
            "store": self._store.kind,
            "store_available": getattr(self._store, "available", True),
            "embed_forward_passes": self.embedder.forward_passes,
            "embed_texts": self.embedder.texts_embedded,
            "evicted_wrong": c["evicted_wrong"],
            "thresholds": {
                "single": [self.config.threshold, self.config.checker_threshold],
                "conversation": [self.config.conversation_threshold, self.config.conversation_checker_threshold],
                "source": self.config.threshold_source,
                "bound": self.config.bounds(),
                "conversation_match": self.config.conversation_match,
            },
            **({"verification": self.verifier.stats()} if self.verifier is not None else {}),
        }


def _quantiles(values) -> dict[str, float]:
    if not values:
        return {}
    v = np.asarray(values, dtype=np.float64)
    return {q: float(np.quantile(v, float(q))) for q in ("0.5", "0.99")}
