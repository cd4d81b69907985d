"""A test-only cache store that plants wrong answers: for a known share of its entries (chosen by a hash
of the entry id, so the choice is fixed per entry) ``get`` returns the entry with another answer in
place of the stored one, as a look-alike that slipped past the checker would. ``served`` counts what it
handed out, so a test knows the true share of wrong hits the cache served."""

from __future__ import annotations

import dataclasses
import hashlib

from gateway.cache.store import FileStore

WRONG = "Planted look-alike answer: the Zorvath account closes on 31 February at 17:45."


class PlantingStore(FileStore):
    """``share``: plant that share of entries (by id); ``questions``: plant every entry stored under one of
    these questions (look-alikes written to be found by the semantic path)."""

    def __init__(self, path, share: float = 0.0, *, questions=(), wrong: str = WRONG, **kwargs):
        super().__init__(path, **kwargs)
        self.share = share
        self.questions = set(questions)
        self.wrong = wrong
        self.served = {"planted": 0, "real": 0}

    def planted(self, entry_id: str, question: str = "") -> bool:
        if question in self.questions:
            return True
        return int(hashlib.sha256(entry_id.encode()).hexdigest()[:8], 16) / 2**32 < self.share

    async def get(self, entry_id):
        entry = await super().get(entry_id)
        if entry is None:
            return None
        if self.planted(entry_id, entry.question):
            self.served["planted"] += 1
            usage = {**entry.usage, "completion_tokens": 1}
            return dataclasses.replace(entry, answer=self.wrong, cuts=(), finish_reason="stop", usage=usage)
        self.served["real"] += 1
        return entry


def verifying_gateway(tiny_path: str, folder, *, planted: float, admin_key: str | None = None, **cache):
    """The tiny gateway (tests/support/tiny_gateway.py) over a PlantingStore, every hit verified.
    Returns (server, semantic cache, store)."""
    from gateway.cache import CacheConfig, SemanticCache
    from gateway.config.admin import AdminConfig
    from gateway.config.gateway import Limits
    from gateway.config.typed import hash_secret
    from tests.support.tiny_gateway import tiny_gateway

    settings = {"verify_share": 1.0, "verify_first": 0, "path": str(folder / "cache.jsonl"), **cache}
    config = CacheConfig(**settings)
    store = PlantingStore(config.path, planted, ttl_seconds=config.ttl_seconds, max_entries=config.max_entries)
    semantic = SemanticCache(config, store=store)
    admin = AdminConfig(key_sha256=hash_secret(admin_key)) if admin_key else None
    server = tiny_gateway(
        tiny_path, limits=Limits(default_max_tokens=16), warmup=False, admin=admin, app_cache=semantic
    )
    return server, semantic, store


CANDIDATES = [f"{w} {i}" for i in range(40) for w in ("the cat sat on the mat", "tell me about rivers")]


def stored_misses(server, n: int) -> dict[str, str]:
    """n questions the tiny model answers usably, each asked once (a miss that stores the answer; a stop
    string makes it finish): question -> its stop string."""
    import pytest

    from tests.support.cached_gateway import chat, stop_for

    stops: dict[str, str] = {}
    for q in CANDIDATES:
        if len(stops) == n:
            break
        try:
            stop = stop_for(server, q)
        except pytest.fail.Exception:
            continue  # the random model answered nothing usable to this one
        stops[q] = stop
        h, _ = chat(server, [{"role": "user", "content": q}], stop=[stop])
        assert h["x-cache"] == "miss"
    assert len(stops) == n
    return stops
