"""Budgets and rate limits shared by gateway replicas through Redis (``keys.shared``).

In: the local ``UsageLedger``'s records since the last sync (``take_pending``). Out: the global totals,
written back into the ledger's accounts (``apply_global``). Runs as one background task on the event
loop (opened and closed in the app's ``cleanup_ctx``); requests never wait on Redis: their checks read
the local ledger, synchronously, as without sharing.

Every ``sync_interval_s`` one MULTI/EXEC transaction (atomic: no other replica's sync interleaves):

    SET  {prefix}epoch <random> NX; GET {prefix}epoch     did Redis lose its data since our last sync?
    per (key, budget window) with deltas:
      HINCRBY / HINCRBYFLOAT {prefix}b:{id}:{window}  requests, cost_usd, t:<tier>:cost_usd ...
      EXPIRE  (until the window ends, plus a minute)
    per key with a rate limit and new requests:
      ZADD {prefix}r:{id} <time> <replica:seq> ...     the shared sliding log of the last 60 s
      ZREMRANGEBYSCORE ... (-inf, now-60]; EXPIRE 70 s
    per key this replica knows (configured keys, and callers it has seen in the last 10 minutes):
      HGETALL the current window's hash; ZRANGEBYSCORE the log's last 60 s

``{id}`` is the sha256-derived tenant id (``key:<sha256[:32]>`` -> the 32 hex digits; users and the
anonymous caller hashed again), never a clear key. Times are the ledger's clock.

Overshoot bound: a replica sees the others' spend and requests at most one sync interval (plus a Redis
round trip) late. So across N replicas a key gets at most ``requests_per_minute`` plus what the other
N-1 replicas admitted in that last interval (at worst (N-1) x requests_per_minute if its whole minute's
burst lands inside one interval), and spends at most its budget plus what the others charged in the
last interval, plus one request's cost per replica (the check runs before the charge, as before).

Redis down (or slow past ``timeout_s``): the sync fails, its deltas are kept for the next one, a
warning is logged (at most every 30 s) and every replica goes on enforcing with what it knows: the
last global totals plus its own traffic since (fail open, never a 5xx). When Redis answers again the
kept deltas go out. If it came back empty (restarted without persistence: a new epoch), each replica
pushes again everything it has contributed to the current windows and its requests of the last
minute, so the totals converge to the same figures as before the outage. A sync whose reply was lost
after Redis applied it is pushed again: counted twice, erring on the strict side.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
import uuid

from gateway.accounting.usage import Caller, Pending, UsageLedger
from gateway.config.tiers import SharedLedgerConfig

log = logging.getLogger(__name__)

RATE_WINDOW_S = 60
RATE_TTL_S = 70
WARN_EVERY_S = 30.0
_INT_COUNTERS = {"requests", "prompt_tokens", "completion_tokens", "cache_hits", "fallbacks"}


def tenant_id(tenant: str) -> str:
    """The Redis id of a tenant: derived from the key's sha256, never the clear key."""
    if tenant.startswith("key:"):
        return tenant[4:]
    return "t" + hashlib.sha256(tenant.encode("utf-8", "surrogateescape")).hexdigest()[:31]


def _parse(totals: dict) -> dict:
    out = {}
    for name, raw in totals.items():
        counter = name.rsplit(":", 1)[-1]
        value = float(raw)
        out[name] = int(round(value)) if counter in _INT_COUNTERS else value
    return out


class LedgerSync:
    """Pushes a ledger's deltas to Redis and pulls the global totals back; see the module docstring."""

    def __init__(self, ledger: UsageLedger, config: SharedLedgerConfig, *, client=None):
        self.ledger = ledger
        self.config = config
        self.prefix = config.prefix
        self._client = client
        self._epoch: str | None = None
        # what this replica has pushed, kept to push again into a Redis that lost its data
        self._mine = Pending()
        self.syncs = 0
        self.failures = 0
        self.down = False
        self._last_warning = 0.0
        self._task: asyncio.Task | None = None

    # -- connection ------------------------------------------------------------------------------

    def _redis(self):
        if self._client is None:
            import redis.asyncio as aioredis
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff

            t = self.config.timeout_s
            self._client = aioredis.from_url(
                self.config.redis_url,
                decode_responses=True,
                socket_timeout=t,
                socket_connect_timeout=t,
                retry=Retry(NoBackoff(), 1),
            )
        return self._client

    async def start(self) -> None:
        """One sync (bounded by the timeout; Redis down is no error), then the periodic task."""
        await self.sync()
        self._task = asyncio.create_task(self._run(), name="ledger-sync")

    async def close(self) -> None:
        """Stop the task and push what is left (best effort)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.sync()
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.aclose()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.config.sync_interval_s)
            try:
                await self.sync()
            except Exception:  # a bug here must not end sharing for good: log it, keep syncing
                log.exception("shared ledger: sync failed")

    # -- one sync --------------------------------------------------------------------------------

    async def sync(self) -> bool:
        """Push this replica's deltas and pull the global totals; False when Redis could not be used
        (the deltas are kept for the next sync)."""
        import redis.exceptions as rex

        ledger = self.ledger
        pending = ledger.take_pending()
        now = ledger.clock()
        pulls = [(c, ledger.window(c)) for c in ledger.active_callers()]
        try:
            async with asyncio.timeout(self.config.timeout_s * 4):  # not wait_for: gateway.pipeline.fallback._next
                res = await self._transaction(pending, pulls, now)
        except (TimeoutError, rex.RedisError, OSError) as exc:
            ledger.restore_pending(pending)
            self._failed(exc)
            return False
        epoch, totals, logs = res
        if self._epoch is not None and epoch != self._epoch:
            # Redis lost its data (restarted without persistence, flushed): push our share again
            log.warning("shared ledger: Redis came back empty; pushing this replica's usage again")
            lost, self._mine = self._mine, Pending()
            ledger.restore_pending(lost)
        self._epoch = epoch
        self._remember(pending, now)
        for (caller, window), t, times in zip(pulls, totals, logs):
            ledger.apply_global(caller, window, _parse(t), times)
        if self.down:
            log.warning("shared ledger: Redis is back; budgets and rate limits are shared again")
        self.down = False
        self.syncs += 1
        return True

    async def _transaction(self, pending: Pending, pulls: list[tuple[Caller, float]], now: float):
        r = self._redis()
        pipe = r.pipeline(transaction=True)
        epoch_key = self.prefix + "epoch"
        pipe.set(epoch_key, uuid.uuid4().hex, nx=True)
        pipe.get(epoch_key)
        periods = {c.tenant: c.policy.period_seconds for c, _ in pulls}
        for (tenant, window), delta in pending.counts.items():
            key = self._budget_key(tenant, window)
            for name, value in delta.items():
                if isinstance(value, int):
                    pipe.hincrby(key, name, value)
                else:
                    pipe.hincrbyfloat(key, name, value)
            period = periods.get(tenant, 86400)
            pipe.expire(key, max(60, int(window + period - now) + 60))
        for tenant, reqs in pending.requests.items():
            if not reqs:
                continue
            key = self._rate_key(tenant)
            pipe.zadd(key, {member: t for t, member in reqs})
            pipe.zremrangebyscore(key, "-inf", now - RATE_WINDOW_S)
            pipe.expire(key, RATE_TTL_S)
        n_pushed = len(pipe.command_stack)
        for caller, window in pulls:
            pipe.hgetall(self._budget_key(caller.tenant, window))
            if caller.policy.requests_per_minute is not None:
                pipe.zrangebyscore(self._rate_key(caller.tenant), f"({now - RATE_WINDOW_S}", "+inf", withscores=True)
        out = await pipe.execute()
        epoch = out[1]
        it = iter(out[n_pushed:])
        totals, logs = [], []
        for caller, _ in pulls:
            totals.append(next(it))
            logs.append([score for _, score in next(it)] if caller.policy.requests_per_minute is not None else None)
        return epoch, totals, logs

    def _budget_key(self, tenant: str, window: float) -> str:
        return f"{self.prefix}b:{tenant_id(tenant)}:{int(window)}"

    def _rate_key(self, tenant: str) -> str:
        return f"{self.prefix}r:{tenant_id(tenant)}"

    def _remember(self, pushed: Pending, now: float) -> None:
        """Keep what was pushed for the current windows and the last minute (for an emptied Redis)."""
        self._mine.merge(pushed)
        windows = {c.tenant: self.ledger.window(c) for c in self.ledger.callers.values()}
        self._mine.counts = {k: v for k, v in self._mine.counts.items() if windows.get(k[0]) == k[1]}
        self._mine.requests = {
            t: kept
            for t, reqs in self._mine.requests.items()
            if (kept := [(ts, m) for ts, m in reqs if ts > now - RATE_WINDOW_S])
        }

    def _failed(self, exc: BaseException) -> None:
        self.failures += 1
        now = time.monotonic()
        if not self.down or now - self._last_warning >= WARN_EVERY_S:
            log.warning(
                "shared ledger: Redis unavailable (%s: %s); enforcing budgets and rate limits with this "
                "replica's view until it answers",
                type(exc).__name__,
                exc,
            )
            self._last_warning = now
        self.down = True
