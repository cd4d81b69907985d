"""Where cache entries live: an embedded file store (default) or Redis (several gateway processes).

Data flow: ``SemanticCache`` (event loop) calls the async ``CacheStore`` methods; the in-memory
indexes (exact-match table, FAISS) are rebuilt from ``iter_entries()`` at start and kept in step by
the cache itself (and, with Redis, by the pub/sub events of other processes).

    FileStore   entries in an insertion/recency-ordered dict; persisted as JSON lines by a debounced
                background flush (temp file in the same folder, fsync, os.replace: a crash leaves the old
                or the new file, never half of one); close() flushes. One process per file.
    RedisStore  each entry a hash ``{prefix}e:{id}`` with EXPIRE = TTL; ``{prefix}lru`` a sorted set
                id -> last hit (global LRU); ``{prefix}s:{scope}`` a sorted set id -> created per scope
                and ``{prefix}scopes`` the set of scopes (rebuild and expiry sweeps); new ids are
                published on ``{prefix}events`` so other processes index them.

Both enforce the TTL (an expired entry is never returned) and ``max_entries`` with least-recently-used
eviction (``touch`` on every hit). Redis failures surface as ``StoreUnavailable`` (after a short
circuit-breaker pause, without waiting for the network); the cache turns them into misses.
"""

from __future__ import annotations

import abc
import asyncio
import base64
import contextlib
import json
import logging
import os
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

FILE_FORMAT = "jaxserve-cache"
FILE_VERSION = 1


class StoreUnavailable(RuntimeError):
    """The backing store cannot be reached right now (the cache bypasses itself and retries later)."""


def _b64(vec: np.ndarray | None) -> str:
    return "" if vec is None else base64.b64encode(np.asarray(vec, np.float32).tobytes()).decode("ascii")


def _unb64(text: str) -> np.ndarray | None:
    return np.frombuffer(base64.b64decode(text), dtype=np.float32).copy() if text else None


@dataclass(frozen=True)
class Served:
    """What a hit replays: the text, why it ended, and its completion tokens."""

    answer: str
    finish_reason: str
    completion_tokens: int


@dataclass
class CacheEntry:
    id: str
    scope_key: str
    question: str  # as the user wrote it
    normalized: str  # exact-match key within the scope
    embedding: np.ndarray | None = field(repr=False)  # float32 [dim], normalised; None: exact only
    answer: str
    finish_reason: str
    usage: dict  # {"prompt_tokens": int, "completion_tokens": int}
    model: str
    created: float
    last_hit: float
    hits: int = 0
    # Greedy answers: characters of ``answer`` after t tokens at index t-1 (-1 where the stream did not
    # show that boundary). Empty: the answer is served whole only (see ``serve``).
    cuts: tuple[int, ...] = ()
    # Conversations: the vector of the assistant's turn before the follow-up ("Marie Curie ..."), which a
    # follow-up such as "when was she born?" depends on (``CacheScope.reply``). None: no such turn.
    reply_embedding: np.ndarray | None = field(default=None, repr=False)
    reply: str = ""  # that turn's text, for the precision checker
    _embedding_b64: str | None = field(default=None, repr=False, compare=False)

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex

    @property
    def completion_tokens(self) -> int:
        return int(self.usage.get("completion_tokens", 0))

    def serve(self, max_tokens: int | None) -> Served | None:
        """This answer as a greedy request with ``max_tokens`` would get it, or None when it cannot be
        known from what is stored. ``max_tokens=None``: the entry's own scope fixed the length (sampled
        requests keep max_tokens in their scope), so the answer is served as stored.

        The engine checks the end token before the length limit, so a stored answer of n tokens that
        stopped by itself is: whole with "stop" for max_tokens > n, whole with "length" for n, cut for
        fewer. One that reached its limit (N tokens, "length") serves max_tokens <= N, cut; more is a
        miss (the continuation is unknown). A cut needs the stored character offset of that token."""
        n = self.completion_tokens
        if max_tokens is None:
            return Served(self.answer, self.finish_reason, n)
        if self.finish_reason == "stop" and max_tokens > n:
            return Served(self.answer, "stop", n)
        if max_tokens == n:
            return Served(self.answer, "length", n)
        if max_tokens > n or max_tokens < 1 or len(self.cuts) < max_tokens or self.cuts[max_tokens - 1] < 0:
            return None
        return Served(self.answer[: self.cuts[max_tokens - 1]], "length", max_tokens)

    def embedding_b64(self) -> str:
        if self.embedding is None:
            return ""
        if self._embedding_b64 is None:
            self._embedding_b64 = _b64(self.embedding)
        return self._embedding_b64

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "scope_key": self.scope_key,
            "question": self.question,
            "normalized": self.normalized,
            "embedding": self.embedding_b64(),
            "answer": self.answer,
            "finish_reason": self.finish_reason,
            "usage": self.usage,
            "model": self.model,
            "created": self.created,
            "last_hit": self.last_hit,
            "hits": self.hits,
            "cuts": list(self.cuts),
            "reply_embedding": _b64(self.reply_embedding),
            "reply": self.reply,
        }

    @classmethod
    def from_dict(cls, d: dict) -> CacheEntry:
        emb = d.get("embedding") or ""
        usage = d.get("usage") or {}
        if isinstance(usage, str):
            usage = json.loads(usage)
        cuts = d.get("cuts") or ()
        return cls(
            id=str(d["id"]),
            scope_key=str(d["scope_key"]),
            question=str(d["question"]),
            normalized=str(d["normalized"]),
            embedding=_unb64(emb),
            answer=str(d["answer"]),
            finish_reason=str(d["finish_reason"]),
            usage={k: int(v) for k, v in usage.items()},
            model=str(d["model"]),
            created=float(d["created"]),
            last_hit=float(d.get("last_hit", d["created"])),
            hits=int(d.get("hits", 0)),
            cuts=tuple(int(c) for c in (json.loads(cuts) if isinstance(cuts, str) else cuts)),
            reply_embedding=_unb64(d.get("reply_embedding") or ""),
            reply=str(d.get("reply") or ""),
            _embedding_b64=emb or None,
        )


OnPut = Callable[[str], Awaitable[None]]
OnDelete = Callable[[list[str]], Awaitable[None]]
OnResync = Callable[[], Awaitable[None]]


class CacheStore(abc.ABC):
    """Persistent entries with TTL and LRU eviction. All methods run on the event loop."""

    kind: str = "abstract"
    shared: bool = False  # True when other processes write to the same store (events matter)

    def __init__(self, *, ttl_seconds: float, max_entries: int, clock: Callable[[], float] = time.time):
        self.ttl_seconds = ttl_seconds
        self.max_entries = max_entries
        self.clock = clock
        self.evictions = 0
        self.expirations = 0

    def expired(self, created: float, now: float | None = None) -> bool:
        return (now if now is not None else self.clock()) - created >= self.ttl_seconds

    async def open(self) -> None:  # noqa: B027 (an optional hook: a store may need no set-up)
        """Connect / load. May raise StoreUnavailable (the cache retries later)."""

    async def close(self) -> None:  # noqa: B027 (an optional hook)
        """Flush and release resources."""

    @abc.abstractmethod
    async def put(self, entry: CacheEntry) -> list[str]:
        """Store ``entry``; returns the ids evicted to stay within max_entries."""

    @abc.abstractmethod
    async def get(self, entry_id: str) -> CacheEntry | None:
        """The entry (without its embedding for Redis), or None when missing or expired."""

    @abc.abstractmethod
    async def touch(self, entry_id: str) -> None:
        """Record a hit now (LRU order, hit count)."""

    @abc.abstractmethod
    async def delete(self, entry_ids: Iterable[str]) -> None: ...

    @abc.abstractmethod
    def iter_entries(self) -> AsyncIterator[CacheEntry]:
        """Every live entry, embeddings included (index rebuild on start)."""

    @abc.abstractmethod
    async def purge_expired(self) -> list[str]:
        """Drop expired entries; returns their ids."""

    @abc.abstractmethod
    async def count(self) -> int: ...

    @abc.abstractmethod
    async def clear(self) -> None: ...

    async def listen(self, on_put: OnPut, on_delete: OnDelete, on_resync: OnResync) -> None:
        """Follow other processes' writes until cancelled (only for shared stores)."""
        return None


# ------------------------------------------------------------------------------------------ file


class FileStore(CacheStore):
    """Entries in memory, persisted to one JSON-lines file (first line a header).

    Why an OrderedDict: it is the LRU list. ``touch`` moves an entry to the end, so eviction pops from
    the front in O(1); loading sorts by ``last_hit`` to restore the order."""

    kind = "file"

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        ttl_seconds: float,
        max_entries: int,
        flush_interval_s: float = 1.0,
        clock: Callable[[], float] = time.time,
    ):
        super().__init__(ttl_seconds=ttl_seconds, max_entries=max_entries, clock=clock)
        self.path = Path(path).expanduser()
        self.flush_interval_s = flush_interval_s
        self._entries: OrderedDict[str, CacheEntry] = OrderedDict()
        self._dirty = False
        self._flush_task: asyncio.Task | None = None
        self._write_lock = asyncio.Lock()
        self.writes = 0

    async def open(self) -> None:
        entries = await asyncio.to_thread(self._read)
        now = self.clock()
        live = [e for e in entries if not self.expired(e.created, now)]
        self.expirations += len(entries) - len(live)
        live.sort(key=lambda e: e.last_hit)
        self._entries = OrderedDict((e.id, e) for e in live)
        evicted = self._evict()
        if evicted or len(live) != len(entries):
            self._schedule_flush()

    def _read(self) -> list[CacheEntry]:
        if not self.path.exists():
            return []
        out: list[CacheEntry] = []
        bad = 0
        with open(self.path, encoding="utf-8") as f:
            for n, line in enumerate(f):
                line = line.strip()
                if not line:
                    continue
                try:
                    d = json.loads(line)
                    if n == 0 and d.get("format") == FILE_FORMAT:
                        continue
                    out.append(CacheEntry.from_dict(d))
                except (ValueError, KeyError, TypeError):
                    bad += 1
        if bad:
            log.warning("cache file %s: skipped %d unreadable lines", self.path, bad)
        return out

    async def close(self) -> None:
        if self._flush_task is not None:
            self._flush_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flush_task
            self._flush_task = None
        if self._dirty:
            await self.flush()

    async def put(self, entry: CacheEntry) -> list[str]:
        self._entries[entry.id] = entry
        self._entries.move_to_end(entry.id)
        evicted = self._evict()
        self._schedule_flush()
        return evicted

    def _evict(self) -> list[str]:
        evicted = []
        while len(self._entries) > self.max_entries:
            entry_id, _ = self._entries.popitem(last=False)
            evicted.append(entry_id)
        self.evictions += len(evicted)
        return evicted

    async def get(self, entry_id: str) -> CacheEntry | None:
        entry = self._entries.get(entry_id)
        if entry is None:
            return None
        if self.expired(entry.created):
            del self._entries[entry_id]
            self.expirations += 1
            self._schedule_flush()
            return None
        return entry

    async def touch(self, entry_id: str) -> None:
        entry = self._entries.get(entry_id)
        if entry is not None:
            entry.last_hit = self.clock()
            entry.hits += 1
            self._entries.move_to_end(entry_id)
            self._schedule_flush()

    async def delete(self, entry_ids: Iterable[str]) -> None:
        changed = False
        for entry_id in entry_ids:
            changed |= self._entries.pop(entry_id, None) is not None
        if changed:
            self._schedule_flush()

    async def iter_entries(self) -> AsyncIterator[CacheEntry]:
        now = self.clock()
        for entry in list(self._entries.values()):
            if not self.expired(entry.created, now):
                yield entry

    async def purge_expired(self) -> list[str]:
        now = self.clock()
        gone = [e.id for e in self._entries.values() if self.expired(e.created, now)]
        for entry_id in gone:
            del self._entries[entry_id]
        if gone:
            self.expirations += len(gone)
            self._schedule_flush()
        return gone

    async def count(self) -> int:
        return len(self._entries)

    async def clear(self) -> None:
        self._entries.clear()
        self._schedule_flush()

    # -- persistence -----------------------------------------------------------------------------

    def _schedule_flush(self) -> None:
        self._dirty = True
        if self._flush_task is None or self._flush_task.done():
            self._flush_task = asyncio.get_running_loop().create_task(self._flush_later())

    async def _flush_later(self) -> None:
        # Loops while changes keep arriving during writes, so the last change is never left unwritten.
        while self._dirty:
            await asyncio.sleep(self.flush_interval_s)
            try:
                await self.flush()
            except OSError:
                log.exception("cache file %s: write failed (retrying)", self.path)
                self._dirty = True

    async def flush(self) -> None:
        """Write every entry now (atomically). Serialisation and I/O run on a worker thread."""
        async with self._write_lock:
            self._dirty = False
            snapshot = list(self._entries.values())
            await asyncio.to_thread(self._write, snapshot)

    def _write(self, entries: list[CacheEntry]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(json.dumps({"format": FILE_FORMAT, "version": FILE_VERSION, "entries": len(entries)}) + "\n")
                for entry in entries:
                    f.write(json.dumps(entry.to_dict(), ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        with contextlib.suppress(OSError):  # make the rename itself durable
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        self.writes += 1


# ----------------------------------------------------------------------------------------- redis

# Record a hit only if the entry still exists: HSET on an expired key would recreate it without a TTL.
_TOUCH_LUA = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'last_hit', ARGV[1])
  redis.call('HINCRBY', KEYS[1], 'hits', 1)
  redis.call('ZADD', KEYS[2], 'XX', ARGV[1], ARGV[2])
  return 1
end
return 0
"""
_HIT_FIELDS = (
    "id",
    "scope_key",
    "question",
    "normalized",
    "answer",
    "finish_reason",
    "usage",
    "model",
    "created",
    "last_hit",
    "hits",
    "cuts",
)


class RedisStore(CacheStore):
    """Entries in Redis; see the module docstring for the key layout."""

    kind = "redis"
    shared = True

    def __init__(
        self,
        url: str,
        *,
        ttl_seconds: float,
        max_entries: int,
        prefix: str = "jaxserve:cache:",
        timeout_s: float = 0.5,
        retry_s: float = 1.0,
        clock: Callable[[], float] = time.time,
        instance_id: str | None = None,
    ):
        super().__init__(ttl_seconds=ttl_seconds, max_entries=max_entries, clock=clock)
        self.url = url
        self.prefix = prefix
        self.timeout_s = timeout_s
        self.retry_s = retry_s
        self.instance_id = instance_id or uuid.uuid4().hex
        self.channel = f"{prefix}events"
        self._lru = f"{prefix}lru"
        self._scopes = f"{prefix}scopes"
        self._client = None
        self._touch = None
        self._down_until = 0.0
        self.errors = 0
        self.reconnects = 0

    # -- keys and connection ---------------------------------------------------------------------

    def _entry_key(self, entry_id: str) -> str:
        return f"{self.prefix}e:{entry_id}"

    def _scope_key(self, scope_key: str) -> str:
        return f"{self.prefix}s:{scope_key}"

    def _make_client(self):
        import redis.asyncio as aioredis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        return aioredis.from_url(
            self.url,
            decode_responses=True,
            socket_timeout=self.timeout_s,
            socket_connect_timeout=self.timeout_s,
            health_check_interval=10,
            # one immediate retry on a dropped connection (a restarted server), then fail fast
            retry=Retry(NoBackoff(), 1),
        )

    @property
    def available(self) -> bool:
        return time.monotonic() >= self._down_until

    async def _call(self, fn: Callable[[object], Awaitable]):
        """Run ``fn(client)``; any Redis/network failure opens the breaker for retry_s seconds."""
        import redis.exceptions as rex

        if not self.available:
            raise StoreUnavailable("redis unavailable (retrying shortly)")
        if self._client is None:
            self._client = self._make_client()
            self._touch = self._client.register_script(_TOUCH_LUA)
        try:
            async with asyncio.timeout(self.timeout_s * 4):  # not wait_for: see gateway.pipeline.fallback._next
                return await fn(self._client)
        except (TimeoutError, rex.RedisError, OSError) as exc:
            self.errors += 1
            self._down_until = time.monotonic() + self.retry_s
            log.warning("redis cache store: %s: %s", type(exc).__name__, exc)
            raise StoreUnavailable(str(exc) or type(exc).__name__) from exc

    async def open(self) -> None:
        await self._call(lambda r: r.ping())

    async def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.aclose()
            self._client = None

    # -- entries ---------------------------------------------------------------------------------

    def _hash(self, entry: CacheEntry) -> dict[str, str]:
        d = entry.to_dict()
        d["usage"] = json.dumps(d["usage"])
        d["cuts"] = json.dumps(d["cuts"])
        return {k: str(v) for k, v in d.items()}

    async def put(self, entry: CacheEntry) -> list[str]:
        ttl_ms = max(1, int(self.ttl_seconds * 1000))

        async def write(r):
            pipe = r.pipeline(transaction=True)
            key = self._entry_key(entry.id)
            pipe.hset(key, mapping=self._hash(entry))
            pipe.pexpire(key, ttl_ms)
            pipe.zadd(self._lru, {entry.id: entry.last_hit})
            pipe.zadd(self._scope_key(entry.scope_key), {entry.id: entry.created})
            pipe.sadd(self._scopes, entry.scope_key)
            pipe.zcard(self._lru)
            res = await pipe.execute()
            return int(res[-1])

        total = await self._call(write)
        evicted: list[str] = []
        if total > self.max_entries:
            victims = await self._call(lambda r: r.zrange(self._lru, 0, total - self.max_entries - 1))
            victims = [v for v in victims if v != entry.id]
            if victims:
                await self.delete(victims, publish=False)
                evicted = victims
                self.evictions += len(victims)
        await self._publish({"op": "put", "id": entry.id})
        if evicted:
            await self._publish({"op": "del", "ids": evicted})
        return evicted

    async def _publish(self, message: dict) -> None:
        message["origin"] = self.instance_id
        await self._call(lambda r: r.publish(self.channel, json.dumps(message)))

    async def get(self, entry_id: str) -> CacheEntry | None:
        values = await self._call(lambda r: r.hmget(self._entry_key(entry_id), _HIT_FIELDS))
        if values[0] is None:
            return None
        d = dict(zip(_HIT_FIELDS, values))
        d["embedding"] = ""
        entry = CacheEntry.from_dict(d)
        if self.expired(entry.created):
            return None
        return entry

    async def get_full(self, entry_id: str) -> CacheEntry | None:
        """With the embedding (another process's new entry, to index it here)."""
        d = await self._call(lambda r: r.hgetall(self._entry_key(entry_id)))
        if not d:
            return None
        entry = CacheEntry.from_dict(d)
        return None if self.expired(entry.created) else entry

    async def touch(self, entry_id: str) -> None:
        now = self.clock()
        await self._call(
            lambda r: self._touch(keys=[self._entry_key(entry_id), self._lru], args=[repr(now), entry_id], client=r)
        )

    async def delete(self, entry_ids: Iterable[str], *, publish: bool = True) -> None:
        ids = list(entry_ids)
        if not ids:
            return

        async def remove(r):
            pipe = r.pipeline(transaction=False)
            for entry_id in ids:
                pipe.hget(self._entry_key(entry_id), "scope_key")
            scopes = await pipe.execute()
            pipe = r.pipeline(transaction=True)
            for entry_id, scope_key in zip(ids, scopes):
                pipe.delete(self._entry_key(entry_id))
                pipe.zrem(self._lru, entry_id)
                if scope_key:
                    pipe.zrem(self._scope_key(scope_key), entry_id)
            await pipe.execute()

        await self._call(remove)
        if publish:
            await self._publish({"op": "del", "ids": ids})

    async def iter_entries(self) -> AsyncIterator[CacheEntry]:
        scopes = await self._call(lambda r: r.smembers(self._scopes))
        for scope_key in scopes:
            zkey = self._scope_key(scope_key)
            ids = await self._call(lambda r, zkey=zkey: r.zrange(zkey, 0, -1))
            stale: list[str] = []
            for i in range(0, len(ids), 256):
                chunk = ids[i : i + 256]

                async def fetch(r, chunk=chunk):
                    pipe = r.pipeline(transaction=False)
                    for entry_id in chunk:
                        pipe.hgetall(self._entry_key(entry_id))
                    return await pipe.execute()

                for entry_id, d in zip(chunk, await self._call(fetch)):
                    if not d:
                        stale.append(entry_id)  # expired by Redis
                        continue
                    try:
                        entry = CacheEntry.from_dict(d)
                    except (ValueError, KeyError, TypeError):
                        stale.append(entry_id)
                        continue
                    if not self.expired(entry.created):
                        yield entry
            if stale:
                await self._forget(scope_key, stale)

    async def _forget(self, scope_key: str, ids: list[str]) -> None:
        """Drop ids whose hash Redis already expired from the index sets."""
        zkey = self._scope_key(scope_key)

        async def run(r):
            pipe = r.pipeline(transaction=True)
            pipe.zrem(zkey, *ids)
            pipe.zrem(self._lru, *ids)
            pipe.zcard(zkey)
            res = await pipe.execute()
            if res[-1] == 0:
                await r.srem(self._scopes, scope_key)

        await self._call(run)

    async def purge_expired(self) -> list[str]:
        cutoff = self.clock() - self.ttl_seconds
        gone: list[str] = []
        scopes = await self._call(lambda r: r.smembers(self._scopes))
        for scope_key in scopes:
            zkey = self._scope_key(scope_key)
            ids = await self._call(lambda r, zkey=zkey: r.zrangebyscore(zkey, "-inf", cutoff))
            if ids:
                await self._call(lambda r, ids=ids: r.delete(*[self._entry_key(i) for i in ids]))
                await self._forget(scope_key, ids)
                gone.extend(ids)
        self.expirations += len(gone)
        return gone

    async def count(self) -> int:
        return int(await self._call(lambda r: r.zcard(self._lru)))

    async def clear(self) -> None:
        async def run(r):
            keys = [k async for k in r.scan_iter(match=f"{self.prefix}*", count=500)]
            for i in range(0, len(keys), 500):
                await r.unlink(*keys[i : i + 500])

        await self._call(run)

    # -- events ----------------------------------------------------------------------------------

    async def listen(self, on_put: OnPut, on_delete: OnDelete, on_resync: OnResync) -> None:
        """Subscribe to the events channel; on every (re)subscription call ``on_resync`` first, so
        that entries written while this process was not listening get indexed. Runs until
        cancelled; connection failures are retried every ``retry_s`` seconds."""
        import redis.exceptions as rex

        while True:
            client = self._make_client()
            pubsub = client.pubsub(ignore_subscribe_messages=True)
            try:
                async with asyncio.timeout(self.timeout_s * 4):
                    await pubsub.subscribe(self.channel)
                self._down_until = 0.0  # evidently reachable again: close the breaker
                await on_resync()
                while True:
                    msg = await pubsub.get_message(timeout=1.0)
                    if msg is None or msg.get("type") != "message":
                        continue
                    await self._dispatch(msg.get("data"), on_put, on_delete)
            except asyncio.CancelledError:
                raise
            except (TimeoutError, rex.RedisError, OSError, StoreUnavailable) as exc:
                self.errors += 1
                self.reconnects += 1
                log.warning(
                    "redis cache events: %s: %s (resubscribing in %.1fs)", type(exc).__name__, exc, self.retry_s
                )
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                with contextlib.suppress(Exception):
                    await client.aclose()
            await asyncio.sleep(self.retry_s)

    async def _dispatch(self, data, on_put: OnPut, on_delete: OnDelete) -> None:
        try:
            message = json.loads(data)
        except (TypeError, ValueError):
            return
        if message.get("origin") == self.instance_id:
            return
        try:
            if message.get("op") == "put" and isinstance(message.get("id"), str):
                await on_put(message["id"])
            elif message.get("op") == "del" and isinstance(message.get("ids"), list):
                await on_delete([str(i) for i in message["ids"]])
        except StoreUnavailable:
            pass  # the resync after reconnecting covers it
