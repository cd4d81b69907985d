"""The cache step over a fake cache: bypass, miss, hit, Cache-Control, and what a miss may store."""

from __future__ import annotations

import asyncio
import dataclasses
from types import SimpleNamespace

import pytest

from gateway.pipeline.cache_step import CacheStep, cache_control, cache_scope
from gateway.pipeline.fallback import Summary
from tests.gateway.pipeline.fakes import chat, metrics, sample


class FakeCache:
    def __init__(self, kind="miss", similarity=None, entry=None, accepts=True):
        self.result = SimpleNamespace(kind=kind, similarity=similarity, entry=entry, served=None)
        self._accepts, self.lookups, self.stored = accepts, [], []
        self.config = SimpleNamespace(conversation_match="exact")

    def accepts(self, *, temperature=None, seed=None):
        return self._accepts

    async def lookup(self, scope, question, *, no_cache=False, max_tokens=None):
        self.lookups.append((scope, question, no_cache))
        self.max_tokens = max_tokens
        return self.result

    async def store(self, scope, question, answer, finish_reason, usage, model, *, cuts=None):
        self.stored.append((scope, question, answer, finish_reason, usage, model, cuts))


def lookup(cache, request=None, headers=None, tier="big"):
    step = CacheStep(cache, metrics())
    return step, asyncio.run(step.lookup(headers or {}, "key:t", request or chat("What do bees make?"), tier))


def test_no_cache_is_a_bypass_that_counts_nothing():
    step, cached = lookup(None)
    assert cached.headers() == {"x-cache": "miss", "x-cache-lookup": "bypass"} and cached.entry is cached.store is None
    assert sample(step.metrics, "gateway_cache_lookups_total", result="bypass", model="big") == 0


@pytest.mark.parametrize(
    "cache,request_",
    [
        (FakeCache(accepts=False), chat()),  # e.g. a sampled request the cache policy refuses
        # no question to scope: the last message is not the user's (the parser refuses this; the scope must too)
        (
            FakeCache(),
            dataclasses.replace(
                chat(), messages=({"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"})
            ),
        ),
    ],
)
def test_what_the_cache_cannot_take_is_bypassed_and_counted(cache, request_):
    step, cached = lookup(cache, request_)
    assert cached.headers()["x-cache-lookup"] == "bypass" and cached.store is None and cache.lookups == []
    assert sample(step.metrics, "gateway_cache_lookups_total", result="bypass", model="big") == 1


def test_a_miss_stores_only_the_routed_tiers_own_finished_answer():
    cache = FakeCache("miss", similarity=0.71234)
    step, cached = lookup(cache)
    assert cached.headers() == {"x-cache": "miss", "x-cache-lookup": "miss", "x-cache-similarity": "0.7123"}
    assert sample(step.metrics, "gateway_cache_lookups_total", result="miss", model="big") == 1
    assert sample(step.metrics, "gateway_cache_similarity_count") == 1
    scope, question, no_cache = cache.lookups[0]
    assert question == "What do bees make?" and scope.model == "big" and scope.tenant == "key:t" and not no_cache
    assert (cached.kind, cached.similarity, cached.hit) == ("miss", 0.71234, False)  # typed: not read from a header
    for answer in (
        Summary(served_by="big", finish_reason="stop", fallbacks=(("big", "lil", "failed"),)),
        Summary(served_by="lil", finish_reason="stop"),
    ):
        asyncio.run(cached.store("Honey.", answer))
    assert cache.stored == []  # another tier's answer: not this scope's to keep
    asyncio.run(
        cached.store("Honey.", Summary(served_by="big", finish_reason="stop", prompt_tokens=9, completion_tokens=3))
    )
    usage = {"prompt_tokens": 9, "completion_tokens": 3}
    assert cache.stored == [(scope, question, "Honey.", "stop", usage, "big", None)]  # sampled: no cuts


def test_greedy_requests_leave_max_tokens_out_of_the_scope_and_store_cuts():
    cache = FakeCache("miss")
    greedy = dataclasses.replace(chat("What do bees make?"), temperature=0.0, max_tokens=2)
    _, cached = lookup(cache, greedy)
    assert cache.max_tokens == 2 and cache.lookups[0][0].param("max_tokens") is None
    answer = Summary(served_by="big", finish_reason="length", completion_tokens=2, cuts=(5, 6))
    asyncio.run(cached.store("Honey.", answer))
    assert cache.stored[-1][3] == "length" and cache.stored[-1][-1] == (5, 6)
    # a request without max_tokens is looked up with the gateway's default limit
    _, cached = lookup(cache, dataclasses.replace(greedy, max_tokens=None))
    assert cache.max_tokens == 256
    sampled = dataclasses.replace(chat("What do bees make?"), temperature=0.5, seed=1, max_tokens=2)
    _, cached = lookup(cache, sampled)
    assert cache.max_tokens is None and cache.lookups[-1][0].param("max_tokens") == 2


def test_a_hit_names_the_routed_tier():
    entry = SimpleNamespace(answer="Honey.", served=None)
    step, cached = lookup(FakeCache("semantic", similarity=0.95, entry=entry))
    assert cached.entry is entry and cached.store is None and cached.hit and cached.similarity == 0.95
    # x-served-by (the routed tier) is the Exchange's header, from the run it replays (test_exchange)
    assert cached.headers() == {"x-cache": "hit", "x-cache-lookup": "semantic", "x-cache-similarity": "0.9500"}


def test_cache_control_directives():
    assert cache_control({}) == (False, False)
    assert cache_control({"Cache-Control": "No-Cache, no-store"}) == (True, True)
    cache = FakeCache()
    _, cached = lookup(cache, headers={"Cache-Control": "no-store"})
    assert cached.store is None and cache.lookups[0][2] is False
    _, cached = lookup(cache, headers={"Cache-Control": "no-cache"})
    assert cached.store is not None and cache.lookups[1][2] is True


def test_the_scope_is_the_routed_tier_not_what_the_client_typed():
    auto, _ = cache_scope("key:t", chat("hi", model="auto"), "big")
    explicit, _ = cache_scope("key:t", chat("hi", model="big"), "big")
    other, _ = cache_scope("key:t", chat("hi", model="big"), "lil")
    assert auto == explicit and auto.key() != other.key()
