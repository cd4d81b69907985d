"""The semantic cache's read path: exact match -> embedding search -> precision checker -> stored answer.

In: a request's ``CacheScope`` and question, and (greedy requests) its ``max_tokens``. Out: a
``CacheLookup`` (exact, semantic, miss or guard_rejected, with the best cosine seen and why). Runs on the
event loop; the embedding runs on the embedder's thread and the checker on its own. The policy that
bypasses the cache and the error boundary around this path are ``SemanticCache.lookup``'s.

    exact    (scope key, normalized question) in the replica's exact table -> entry; no embedding at all
    embed    MiniLM vector of the question (micro-batched with concurrent lookups)
    search   the scope's FAISS index: the best few candidates with cosine >= threshold
    check    the first candidate the precision checker accepts is the hit (``checker``: a cross-encoder
             reading both questions together)
    fetch    the entry from the store (Redis: one HMGET), then ``touch`` for LRU
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from gateway.cache.checker import Checker
from gateway.cache.config import CacheConfig
from gateway.cache.learn import NearMiss
from gateway.cache.normalize import normalize_question
from gateway.cache.replica import Replica
from gateway.cache.scope import CacheScope
from gateway.cache.store import CacheEntry, CacheStore, Served, StoreUnavailable

LookupKind = Literal["exact", "semantic", "miss", "bypass", "guard_rejected", "error"]
LOOKUP_KINDS: tuple[str, ...] = ("exact", "semantic", "miss", "bypass", "guard_rejected", "error")


@dataclass(frozen=True)
class CacheLookup:
    kind: LookupKind
    entry: CacheEntry | None = None  # set for "exact" and "semantic"
    similarity: float | None = None  # best cosine seen (1.0 for exact hits; None when not searched)
    reason: str = ""  # why it bypassed / missed / was rejected (for logs and headers)
    served: Served | None = None  # set with entry: the answer as this request gets it (maybe cut)
    score: float | None = None  # semantic hits: the checker's score of the served candidate
    near: NearMiss | None = None  # misses with a close best candidate (>= learn_floor): what learning labels

    @property
    def hit(self) -> bool:
        return self.kind in ("exact", "semantic")


class Lookup:
    """``search`` over the replica's state. ``embed(text)`` answers a unit vector (the cache's, which keeps
    recent ones); ``thresholds(scope)`` the (cosine, checker score) pair this scope is held to;
    ``count_error(where, exc)`` counts a store failure on the way (a ``touch``)."""

    def __init__(
        self,
        config: CacheConfig,
        replica: Replica,
        store: CacheStore,
        checker: Checker,
        embed: Callable[[str], Awaitable[np.ndarray]],
        thresholds: Callable[[CacheScope], tuple[float, float]],
        count_error: Callable[[str, BaseException], None],
    ):
        self.config, self.replica, self.store, self.checker = config, replica, store, checker
        self.embed, self.thresholds, self.count_error = embed, thresholds, count_error

    async def search(self, scope: CacheScope, question: str, max_tokens: int | None) -> CacheLookup:
        state = self.replica.state
        scope_key = scope.key()
        normalized = normalize_question(question)
        entry_id = state.exact.get((scope_key, normalized))
        reply_vec: list = []  # the incoming reply's vector, embedded once when first needed
        if entry_id is not None and not await self.reply_matches(scope, entry_id, reply_vec):
            entry_id = None  # the same user turns after another assistant answer: not the same follow-up
        if entry_id is not None and scope.kind == "conversation":
            meta = state.meta.get(entry_id)
            if meta is not None and meta.reply != scope.reply:  # both whitespace-normalized by the scope
                entry_id = None  # same user turns, another wording of the answer: the checker decides
        if entry_id is not None:
            found = await self.fetch(entry_id, max_tokens)
            if isinstance(found, tuple):
                return CacheLookup("exact", found[0], 1.0, "same normalized question", found[1])
            if found == "short":
                return CacheLookup("miss", None, 1.0, "the stored answer is shorter than max_tokens")
        if scope.kind == "history" and self.config.conversation_match == "exact":
            return CacheLookup("miss", reason="conversations match exactly (cache.conversation_match: exact)")
        if len(question) > self.config.semantic_max_chars or state.index.scope(scope_key) is None:
            return CacheLookup(
                "miss",
                reason="no entry in this scope"
                if len(question) <= self.config.semantic_max_chars
                else "question too long for the semantic path",
            )
        vec = await self.embed(question)
        candidates = state.index.search(scope_key, vec, self.config.top_k)
        threshold, accept = self.thresholds(scope)
        best = candidates[0][1] if candidates else None
        rejected: tuple[float, str] | None = None
        scores: dict[str, float] = {}  # the checker's scores read on the way (a near-miss reuses its own)
        conversation = scope.kind == "conversation"
        eligible = []  # (candidate, cosine, its stored metadata), best first
        for cand_id, sim in candidates:
            if sim < threshold:
                break
            meta = state.meta.get(cand_id)
            if meta is None:
                continue
            if not await self.reply_matches(scope, cand_id, reply_vec):
                rejected = rejected or (sim, "reply: the assistant turns before the follow-ups differ")
                continue
            eligible.append((cand_id, sim, meta))
        verdicts = [None] * len(eligible)
        if self.config.guard and eligible:  # every eligible candidate in one batch of the checker
            items = [(m.question, question, (m.reply, scope.reply) if conversation else None) for _, _, m in eligible]
            verdicts = await self.checker.check_many(items, conversation)
        for (cand_id, sim, _), verdict in zip(eligible, verdicts):
            score = None
            if verdict is not None:
                score = scores[cand_id] = verdict.score
                if verdict.score < accept:
                    rejected = rejected or (
                        sim,
                        verdict.reason or f"{self.checker.name}: {verdict.score:.3f} < {accept}",
                    )
                    continue
            found = await self.fetch(cand_id, max_tokens)
            if isinstance(found, tuple):
                return CacheLookup("semantic", found[0], sim, f"cosine {sim:.3f} >= {threshold}", found[1], score=score)
        near = self.near_miss(scope, question, candidates, scores)
        if rejected is not None:
            return CacheLookup("guard_rejected", None, rejected[0], rejected[1], near=near)
        return CacheLookup("miss", None, best, "below threshold" if best is not None else "no candidates", near=near)

    def near_miss(self, scope: CacheScope, question: str, candidates, scores: dict[str, float]) -> NearMiss | None:
        """The best candidate of a lookup that served none, when learning is on and it is close enough."""
        if not self.config.learn or not self.config.guard or not candidates:
            return None
        cand_id, sim = candidates[0]
        meta = self.replica.state.meta.get(cand_id)
        if sim < self.config.learn_floor or meta is None:
            return None
        conversation = scope.kind == "conversation"
        return NearMiss(
            kind="conversation" if conversation else "single",
            scope_key=scope.key(),
            question=question,
            entry_id=cand_id,
            similarity=float(sim),
            score=scores.get(cand_id),
            conversation=conversation,
            replies=(meta.reply, scope.reply) if conversation else None,
        )

    async def reply_matches(self, scope: CacheScope, entry_id: str, cache: list) -> bool:
        """Conversations: whether the assistant turn before the follow-up is close enough to the stored
        one's (cosine >= conversation_reply_threshold); both absent also matches."""
        t = self.config.conversation_reply_threshold
        meta = self.replica.state.meta.get(entry_id)
        if scope.kind != "conversation" or t <= 0 or meta is None:
            return True
        if meta.reply_vec is None or not scope.reply:
            return meta.reply_vec is None and not scope.reply
        if not cache:
            cache.append(await self.embed(scope.reply[: self.config.semantic_max_chars]))
        return float(np.dot(cache[0], meta.reply_vec)) >= t

    async def fetch(self, entry_id: str, max_tokens: int | None = None) -> tuple[CacheEntry, Served] | str | None:
        """The stored entry and what this request gets of it (``CacheEntry.serve``); None when it expired
        or was evicted elsewhere (forget it here too); "short" when it cannot answer ``max_tokens``."""
        entry = await self.store.get(entry_id)
        if entry is None:
            self.replica.forget(entry_id)
            return None
        served = entry.serve(max_tokens)
        if served is None:
            return "short"
        try:
            await self.store.touch(entry_id)
        except StoreUnavailable as exc:  # the answer is already in hand; LRU order is best effort
            self.count_error("touch", exc)
        return entry, served
