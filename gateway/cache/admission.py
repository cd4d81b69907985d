"""The semantic cache's admission: which requests may use it, and which answers it keeps.

In: a request's sampling settings (``accepts``), and a finished answer with its scope, question, finish
reason, usage and, for greedy requests, each token's character offset (``store``). Out: whether the
request may look up / be stored, and the stored ``CacheEntry`` (written to the store and indexed in the
replica; with Redis the other gateway processes index it from the pub/sub event). Runs on the event loop.

Kept: complete answers (finish_reason "stop"), and for greedy requests also answers that reached
max_tokens, so that shorter requests get a cut (``CacheEntry.serve``); an answer never replaces a stored
one that covers more. Nothing the store does wrong reaches the caller: failures are counted and the
answer is simply not kept.
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping

import numpy as np

from gateway.cache.config import CacheConfig
from gateway.cache.normalize import normalize_question
from gateway.cache.replica import Replica
from gateway.cache.scope import CacheScope
from gateway.cache.store import CacheEntry, CacheStore, StoreUnavailable

log = logging.getLogger("gateway.cache.semantic_cache")


class Admission:
    """``accepts`` (the ``cache_sampled`` policy) and ``store``. ``embed(text)`` answers a unit vector (the
    cache's, which keeps the lookup's vector for the store that follows it)."""

    def __init__(
        self,
        config: CacheConfig,
        replica: Replica,
        store: CacheStore,
        embed: Callable[[str], Awaitable[np.ndarray]],
        *,
        counters: Counter,
        count_error: Callable[[str, BaseException], None],
        clock: Callable[[], float],
    ):
        self.config, self.replica, self.store, self.embed = config, replica, store, embed
        self.counters, self.count_error, self.clock = counters, count_error, clock

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

    def scope_accepts(self, scope: CacheScope) -> bool:
        return self.accepts(temperature=scope.param("temperature"), seed=scope.param("seed"))

    async def store_answer(
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
        """``SemanticCache.store``: True when stored; False when skipped by policy or dropped on an error."""
        if not self.config.enabled or no_store:
            self.counters["store_skipped"] += 1
            return False
        if (
            finish_reason not in (("stop", "length") if cuts is not None else ("stop",))
            or not answer.strip()
            or not self.scope_accepts(scope)
        ):
            self.counters["store_skipped"] += 1
            return False
        tokens = int((usage or {}).get("completion_tokens", 0))
        if finish_reason == "length" and self.covered(scope.key(), normalize_question(question), tokens):
            self.counters["store_skipped"] += 1
            return False
        try:
            await self._store_entry(scope, question, answer, finish_reason, usage or {}, model, tuple(cuts or ()))
        except StoreUnavailable as exc:
            self.count_error("store", exc)
            return False
        except Exception as exc:
            log.exception("cache store failed")
            self.count_error("store", exc)
            return False
        self.counters["stores"] += 1
        return True

    def covered(self, scope_key: str, normalized: str, tokens: int) -> bool:
        """Whether the entry held for this question answers at least what a ``tokens``-long cut one would."""
        state = self.replica.state
        old = state.exact.get((scope_key, normalized))
        meta = state.meta.get(old) if old is not None else None
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
        vec = await self.embed(question) if len(question) <= self.config.semantic_max_chars else None
        reply_vec = None
        if scope.kind == "conversation" and scope.reply:
            reply_vec = await self.embed(scope.reply[: self.config.semantic_max_chars])
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
        evicted = await self.store.put(entry)
        replaced = self.replica.add(entry)
        self.replica.forget_many(evicted)
        self.counters["evictions"] += len(evicted)
        if replaced is not None:  # the same question answered again: keep the newest only
            with contextlib.suppress(StoreUnavailable):
                await self.store.delete([replaced])
