"""The cache step: look the request up in the semantic cache, and say how to store its answer.

In: the request's ``Cache-Control`` header, the caller's tenant, the ``ChatRequest`` and the routed tier.
Out: a ``CacheLookup``: its kind and best similarity (typed: the ``x-cache*`` headers are written from
them), the stored entry on a hit, and on a miss the coroutine function that stores the answer once it
is known (None when it must not be stored). Lookup counts and
similarities go to the metrics. Runs on the event loop; the cache embeds on its own worker.

    no cache, or one that refuses these sampling settings, or messages it cannot scope -> bypass
    scope (tenant, routed tier, system prompt, history, answer-changing parameters) -> lookup
      exact / semantic -> hit: replayed, x-served-by the routed tier
      anything else    -> miss: store the answer afterwards, unless ``Cache-Control: no-store``

The scope names the routed tier, not what the client typed: ``auto`` and an explicit tier share entries
when they land on the same tier, and one tier never answers for another. Only the routed tier's own
answers (no fallback) are stored, so that stays true.

Greedy requests (temperature 0) leave ``max_tokens`` out of the scope: the model's greedy answer to a
question is one token sequence, and a request for M tokens gets its first M. So an answer that reached
its limit is stored too, with the character offset of each token, and a hit is replayed cut to the
request's ``max_tokens`` with the ``finish_reason`` the model would have given (``CacheEntry.serve``).
Sampled requests keep ``max_tokens`` in the scope and store finished answers only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gateway.api.schemas import ChatRequest
from gateway.observability.metrics import GatewayMetrics
from gateway.pipeline.fallback import Summary

if TYPE_CHECKING:  # the cache package loads numpy and the index: only a gateway with a cache imports it
    from gateway.cache import CacheEntry, CacheScope, SemanticCache, Served

Store = Callable[[str, Summary], Awaitable[None]]
HITS = ("exact", "semantic")


@dataclass(frozen=True)
class CacheLookup:
    kind: str  # "bypass" (not looked up), "miss", "exact" / "semantic" (hits), or the cache's other kinds
    similarity: float | None = None  # the best candidate's, when the index was searched
    entry: CacheEntry | None = None  # a hit: the stored entry
    served: Served | None = None  # a hit: the answer to replay (the entry's, maybe cut to max_tokens)
    store: Store | None = None  # a miss: store(text, summary) once the answer is complete
    # a hit: call once the answer is sent; hands it to live verification (never blocks)
    verify: Callable[[], bool] | None = None

    @property
    def hit(self) -> bool:
        return self.kind in HITS

    @property
    def tokens(self) -> tuple[int, int]:
        """A hit: (prompt, completion) tokens of the stored answer as it is replayed."""
        return int(self.entry.usage.get("prompt_tokens", 0)), self.served.completion_tokens

    def headers(self) -> dict[str, str]:
        """``x-cache`` (hit or miss), ``x-cache-lookup`` (the kind), ``x-cache-similarity`` (4 decimals)."""
        out = {"x-cache": "hit" if self.hit else "miss", "x-cache-lookup": self.kind}
        if self.similarity is not None:
            out["x-cache-similarity"] = f"{self.similarity:.4f}"
        return out


def cache_control(headers: Mapping[str, str]) -> tuple[bool, bool]:
    """(no_cache: skip the lookup, no_store: do not store the answer) from Cache-Control."""
    directives = {d.strip().lower() for d in headers.get("Cache-Control", "").split(",")}
    return "no-cache" in directives, "no-store" in directives


def greedy(chat: ChatRequest) -> bool:
    return chat.temperature == 0


def cache_scope(
    tenant: str, chat: ChatRequest, tier: str, conversations: str = "exact"
) -> tuple[CacheScope | None, str | None]:
    """(scope, question), or (None, None) when the request cannot be cached (the cache is bypassed)."""
    from gateway.cache import CacheScope

    if chat.logprobs is not None or chat.structured is not None:  # no stored log-probabilities; no
        return None, None  # grammar-constrained answers (tool calls depend on the tools' results)
    params = chat.answer_params()
    if greedy(chat):
        params.pop("max_tokens", None)
    try:
        return CacheScope.from_request(tenant, tier, list(chat.messages), params, conversations=conversations)
    except ValueError:
        return None, None


class CacheStep:
    def __init__(self, cache: SemanticCache | None, metrics: GatewayMetrics, *, default_max_tokens: int = 256):
        self.cache, self.metrics = cache, metrics
        self.default_max_tokens = default_max_tokens  # a request without max_tokens gets this many at most

    async def lookup(self, headers: Mapping[str, str], tenant: str, chat: ChatRequest, tier: str) -> CacheLookup:
        no_cache, no_store = cache_control(headers)
        scope = question = None
        if self.cache is not None and self.cache.accepts(temperature=chat.temperature, seed=chat.seed):
            scope, question = cache_scope(tenant, chat, tier, self.cache.config.conversation_match)
        if scope is None:
            if self.cache is not None:  # a gateway without a cache counts no lookups at all
                self.metrics.cache_lookups.labels("bypass", tier).inc()
            return CacheLookup("bypass")
        limit = (chat.max_tokens or self.default_max_tokens) if greedy(chat) else None
        lookup = await self.cache.lookup(scope, question, no_cache=no_cache, max_tokens=limit)
        self.metrics.cache_lookups.labels(lookup.kind, tier).inc()
        if lookup.similarity is not None:
            self.metrics.cache_similarity.observe(lookup.similarity)
        if lookup.kind in HITS:
            cache = self.cache
            return CacheLookup(
                lookup.kind,
                lookup.similarity,
                entry=lookup.entry,
                served=lookup.served,
                verify=lambda: cache.offer_verification(scope, question, lookup, chat, tier),
            )
        store = None if no_store else self._store_for(scope, question, tier, greedy(chat))
        return CacheLookup(lookup.kind, lookup.similarity, store=store)

    def _store_for(self, scope: CacheScope, question: str, tier: str, greedy: bool) -> Store:
        cache = self.cache

        async def store(text: str, summary: Summary) -> None:
            if summary.fallbacks or summary.served_by != tier:  # only the routed tier's own answers
                return
            usage = {"prompt_tokens": summary.prompt_tokens, "completion_tokens": summary.completion_tokens}
            cuts = summary.cuts if greedy and len(summary.cuts) == summary.completion_tokens else None
            await cache.store(scope, question, text, summary.finish_reason, usage, tier, cuts=cuts)

        return store
