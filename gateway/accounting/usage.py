"""Who is calling, what they may spend, and what they spent: API keys, rate limits, budgets, usage.

In: the ``Authorization`` header (``Bearer <key>``), the request's tier and token counts. Out: a
``Caller`` (tenant id for the cache, policy name for reports), 401/429 ``APIError``s with
``Retry-After``, and per-key usage for ``GET /v1/usage``. Runs on the event loop; no locks needed.

Keys are identified by their sha256; the clear key never leaves ``identify``. Rate limits count the
requests of the last 60 seconds (a sliding log: at most ``requests_per_minute`` timestamps per key,
or a few more when replicas share it).
Budgets are spend per period, in windows aligned to multiples of the period since the epoch (a
daily budget resets at 00:00 UTC). The check runs before a request and the charge after it, so a key
can overshoot by one request's cost; what it saved through the cache is recorded beside what it spent.

The ledger lives in this process and checks read only it (synchronous, no network on the request
path). Without ``keys.shared`` each gateway replica enforces its own share. With it, gateway replicas
share budgets and rate limits through Redis: the ledger also records what changed since the last
sync (``take_pending``), and ``gateway.accounting.sync.LedgerSync`` pushes that and pulls the global totals
back into the accounts (``apply_global``) every ``sync_interval_s``, so other replicas' spend and
requests are seen here with at most one sync interval's delay (the bound is in usage_sync).
"""

from __future__ import annotations

import collections
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from aiohttp import web

from gateway.config.tiers import KeyPolicy, KeysConfig
from gateway.config.typed import hash_secret
from runtime.serving.errors import APIError


@dataclass(frozen=True)
class Caller:
    tenant: str  # cache isolation: "key:<sha256[:32]>", "user:<name>" or "anonymous"
    name: str  # what reports and metrics call it: the policy name, or a short key hash
    policy: KeyPolicy


@dataclass
class _Account:
    window_start: float = 0.0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cache_hits: int = 0
    saved_usd: float = 0.0
    fallbacks: int = 0
    by_tier: dict = field(
        default_factory=dict
    )  # tier -> {"requests", "prompt_tokens", "completion_tokens", "cost_usd"}
    recent: collections.deque = field(default_factory=collections.deque)  # request times, last 60 s


# An account as flat counters, the shape they have in Redis: "cost_usd", "t:<tier>:cost_usd", ...
COUNTERS = ("requests", "prompt_tokens", "completion_tokens", "cost_usd", "cache_hits", "saved_usd", "fallbacks")
TIER_COUNTERS = ("requests", "prompt_tokens", "completion_tokens", "cost_usd")


@dataclass
class Pending:
    """What this replica recorded since its last sync: counter deltas per (tenant, window start) and
    its requests per tenant as (time, unique member) for the shared rate log."""

    counts: dict = field(default_factory=dict)  # (tenant, window_start) -> {counter: delta}
    requests: dict = field(default_factory=dict)  # tenant -> [(time, member)]

    def merge(self, other: Pending) -> None:
        for k, delta in other.counts.items():
            mine = self.counts.setdefault(k, {})
            for f, v in delta.items():
                mine[f] = mine.get(f, 0) + v
        for tenant, reqs in other.requests.items():
            self.requests.setdefault(tenant, []).extend(reqs)


class UsageLedger:
    def __init__(self, keys: KeysConfig, clock: Callable[[], float] = time.time, *, instance: str | None = None):
        self.keys = keys
        self.clock = clock
        self._accounts: dict[str, _Account] = {}
        # shared (keys.shared): deltas since the last sync, and who to pull totals for
        self.shared = keys.shared is not None
        self.instance = instance or os.urandom(6).hex()  # unique request ids in the shared rate log
        self._seq = 0
        self._pending = Pending()
        self.callers: dict[str, Caller] = {}  # tenant -> its latest Caller (policy: period, rpm)
        self._seen: dict[str, float] = {}  # tenant -> when this replica last saw it (configured keys: always)
        if self.shared:
            for e in keys.entries:  # configured keys are pulled before their first request here
                tenant = "key:" + e.key_sha256[:32]
                self.callers[tenant] = Caller(tenant, e.name, e)
                self._seen[tenant] = math.inf

    # ---------------------------------------------------------------- who

    def identify(self, request: web.Request, user: str | None = None) -> Caller:
        auth = request.headers.get("Authorization", "")
        key = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        if key:
            digest = hash_secret(key)
            policy = self.keys.lookup(digest)
            if policy is None and self.keys.require:
                raise APIError(401, "invalid API key", type="authentication_error", code="invalid_api_key")
            tenant = "key:" + digest[:32]
            return Caller(tenant, policy.name if policy else "key:" + digest[:8], policy or self.keys.default)
        if self.keys.require:
            raise APIError(
                401,
                "this gateway needs an API key: send 'Authorization: Bearer <key>'",
                type="authentication_error",
                code="missing_api_key",
            )
        if user:
            return Caller("user:" + user, "anonymous", self.keys.default)
        return Caller("anonymous", "anonymous", self.keys.default)

    # ---------------------------------------------------------------- limits

    def _account(self, caller: Caller) -> _Account:
        acc = self._accounts.setdefault(caller.tenant, _Account())
        if self.shared:
            self.callers[caller.tenant] = caller
            self._seen[caller.tenant] = max(self._seen.get(caller.tenant, 0.0), self.clock())
        period = caller.policy.period_seconds
        start = math.floor(self.clock() / period) * period
        if acc.window_start != start:  # a new period: spend starts again, the rate log carries over
            recent = acc.recent
            acc = self._accounts[caller.tenant] = _Account(window_start=start, recent=recent)
        return acc

    def check_rate(self, caller: Caller) -> None:
        """Count this request against the key's rate limit, or raise 429."""
        rpm = caller.policy.requests_per_minute
        acc = self._account(caller)
        now = self.clock()
        while acc.recent and acc.recent[0] <= now - 60:
            acc.recent.popleft()
        if rpm is not None and len(acc.recent) >= rpm:
            # the request that must leave the log before one more fits (shared: the log can hold more)
            wait = max(1, math.ceil(acc.recent[len(acc.recent) - rpm] + 60 - now))
            raise APIError(
                429,
                f"rate limit reached: {rpm} requests per minute for {caller.name!r}; retry in {wait} s",
                type="rate_limit_error",
                code="rate_limit_exceeded",
                headers={"Retry-After": str(wait)},
            )
        acc.recent.append(now)
        if self.shared and rpm is not None:
            self._seq += 1
            self._pending.requests.setdefault(caller.tenant, []).append((now, f"{self.instance}:{self._seq}"))

    def budget_left(self, caller: Caller) -> float | None:
        """Fraction of the period's budget not yet spent (None: no budget)."""
        budget = caller.policy.budget_usd
        if budget is None:
            return None
        if budget == 0:
            return 0.0
        return max(0.0, 1 - self._account(caller).cost_usd / budget)

    def check_budget(self, caller: Caller) -> None:
        budget = caller.policy.budget_usd
        if budget is None:
            return
        acc = self._account(caller)
        if acc.cost_usd >= budget:
            reset = acc.window_start + caller.policy.period_seconds
            wait = max(1, math.ceil(reset - self.clock()))
            raise APIError(
                429,
                f"budget spent: {caller.name!r} has used ${acc.cost_usd:.6f} of its "
                f"${budget:.6f} per {_per(caller.policy.period_seconds)}; it resets in {_period(wait)}",
                type="insufficient_quota",
                code="budget_exceeded",
                headers={"Retry-After": str(wait)},
            )

    # ---------------------------------------------------------------- records

    def charge(self, caller: Caller, tier: str, prompt_tokens: int, completion_tokens: int, cost: float) -> None:
        self._add(
            caller,
            {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "cost_usd": cost,
                f"t:{tier}:requests": 1,
                f"t:{tier}:prompt_tokens": prompt_tokens,
                f"t:{tier}:completion_tokens": completion_tokens,
                f"t:{tier}:cost_usd": cost,
            },
        )

    def count_request(self, caller: Caller, *, fallback: bool = False) -> None:
        self._add(caller, {"requests": 1, "fallbacks": int(fallback)})

    def record_hit(self, caller: Caller, saved: float) -> None:
        self._add(caller, {"requests": 1, "cache_hits": 1, "saved_usd": saved})

    def _add(self, caller: Caller, delta: dict) -> None:
        acc = self._account(caller)
        for name, value in delta.items():
            _bump(acc, name, value)
        if self.shared:
            mine = self._pending.counts.setdefault((caller.tenant, acc.window_start), {})
            for name, value in delta.items():
                mine[name] = mine.get(name, 0) + value

    # ---------------------------------------------------------------- shared (gateway.accounting.sync)

    def take_pending(self) -> Pending:
        """Hand over what changed since the last call; recording starts afresh."""
        out, self._pending = self._pending, Pending()
        return out

    def restore_pending(self, pending: Pending) -> None:
        """A sync failed: its deltas go out with the next one."""
        self._pending.merge(pending)

    def active_callers(self, horizon_s: float = 600.0) -> list[Caller]:
        """The tenants to pull totals for: configured keys, and callers seen in the last ``horizon_s``
        (one that comes back later is pulled again from its next request on)."""
        since = self.clock() - horizon_s
        return [c for t, c in self.callers.items() if self._seen.get(t, 0.0) > since]

    def window(self, caller: Caller) -> float:
        period = caller.policy.period_seconds
        return math.floor(self.clock() / period) * period

    def apply_global(
        self, caller: Caller, window_start: float, totals: dict | None, requests: list[float] | None
    ) -> None:
        """Replace a tenant's figures with the global ones pulled from Redis, plus this replica's own
        records made since the pull was sent (still pending). ``totals``: flat counters of the window
        (None: leave the counters); ``requests``: the shared rate log's times (None: leave the log)."""
        acc = self._account(caller)
        if acc.window_start != window_start:  # the window turned while the sync was out
            return
        if totals is not None:
            fresh = _Account(window_start=acc.window_start, recent=acc.recent)
            for name, value in totals.items():
                _bump(fresh, name, value)
            for name, value in self._pending.counts.get((caller.tenant, window_start), {}).items():
                _bump(fresh, name, value)
            acc = self._accounts[caller.tenant] = fresh
        if requests is not None:
            now = self.clock()
            times = [t for t in requests if t > now - 60]
            times += [t for t, _ in self._pending.requests.get(caller.tenant, ())]
            acc.recent = collections.deque(sorted(times))

    def usage(self, caller: Caller) -> dict:
        acc = self._account(caller)
        policy = caller.policy
        budget = policy.budget_usd
        return {
            "object": "usage",
            "key": caller.name,
            "period": {
                "start": int(acc.window_start),
                "seconds": policy.period_seconds,
                "resets_at": int(acc.window_start + policy.period_seconds),
            },
            "requests": acc.requests,
            "cache_hits": acc.cache_hits,
            "fallbacks": acc.fallbacks,
            "prompt_tokens": acc.prompt_tokens,
            "completion_tokens": acc.completion_tokens,
            "cost_usd": round(acc.cost_usd, 9),
            "saved_usd": round(acc.saved_usd, 9),
            "budget_usd": budget,
            "remaining_usd": None if budget is None else round(max(0.0, budget - acc.cost_usd), 9),
            "requests_per_minute": policy.requests_per_minute,
            "tiers_allowed": list(policy.tiers) if policy.tiers is not None else None,
            "by_tier": {k: {**v, "cost_usd": round(v["cost_usd"], 9)} for k, v in sorted(acc.by_tier.items())},
        }


def _bump(acc: _Account, name: str, value: float) -> None:
    """Add ``value`` to the flat counter ``name`` of ``acc`` (``"cost_usd"``, ``"t:<tier>:requests"``)."""
    if name.startswith("t:"):
        tier, counter = name[2:].rsplit(":", 1)
        if counter not in TIER_COUNTERS:
            return
        t = acc.by_tier.setdefault(tier, {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0})
        t[counter] += value
    elif name in COUNTERS:
        setattr(acc, name, getattr(acc, name) + value)


def _per(seconds: int) -> str:
    return {60: "minute", 3600: "hour", 86400: "day", 604800: "week"}.get(seconds, f"{seconds} s")


def _period(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds} s"
