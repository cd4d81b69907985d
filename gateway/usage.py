"""Who is calling, what they may spend, and what they spent: API keys, rate limits, budgets, usage.

In: the ``Authorization`` header (``Bearer <key>``), the request's tier and token counts. Out: a
``Caller`` (tenant id for the cache, policy name for reports), 401/429 ``APIError``s with
``Retry-After``, and per-key usage for ``GET /v1/usage``. Runs on the event loop; no locks needed.

Keys are identified by their sha256; the clear key never leaves ``identify``. Rate limits count the
requests of the last 60 seconds (a sliding log: at most ``requests_per_minute`` timestamps per key).
Budgets are spend per period, in windows aligned to multiples of the period since the epoch (a
daily budget resets at 00:00 UTC). The check runs before a request and the charge after it, so a key
can overshoot by one request's cost; what it saved through the cache is recorded beside what it spent.

The ledger lives in this process. Several gateway replicas each enforce their own share.
"""

from __future__ import annotations

import collections
import hashlib
import math
import time
from dataclasses import dataclass, field
from typing import Callable

from aiohttp import web

from gateway.errors import APIError
from gateway.tiers import KeyPolicy, KeysConfig


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
    by_tier: dict = field(default_factory=dict)  # tier -> {"requests", "prompt_tokens", "completion_tokens", "cost_usd"}
    recent: collections.deque = field(default_factory=collections.deque)  # request times, last 60 s


class UsageLedger:
    def __init__(self, keys: KeysConfig, clock: Callable[[], float] = time.time):
        self.keys = keys
        self.clock = clock
        self._accounts: dict[str, _Account] = {}

    # ---------------------------------------------------------------- who

    def identify(self, request: web.Request, user: str | None = None) -> Caller:
        auth = request.headers.get("Authorization", "")
        key = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        if key:
            digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()  # any header bytes
            policy = self.keys.lookup(digest)
            if policy is None and self.keys.require:
                raise APIError(401, "invalid API key", type="authentication_error", code="invalid_api_key")
            tenant = "key:" + digest[:32]
            return Caller(tenant, policy.name if policy else "key:" + digest[:8], policy or self.keys.default)
        if self.keys.require:
            raise APIError(401, "this gateway needs an API key: send 'Authorization: Bearer <key>'",
                           type="authentication_error", code="missing_api_key")
        if user:
            return Caller("user:" + user, "anonymous", self.keys.default)
        return Caller("anonymous", "anonymous", self.keys.default)

    # ---------------------------------------------------------------- limits

    def _account(self, caller: Caller) -> _Account:
        acc = self._accounts.setdefault(caller.tenant, _Account())
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
            wait = max(1, math.ceil(acc.recent[0] + 60 - now))
            raise APIError(429, f"rate limit reached: {rpm} requests per minute for {caller.name!r}; "
                           f"retry in {wait} s", type="rate_limit_error", code="rate_limit_exceeded",
                           headers={"Retry-After": str(wait)})
        acc.recent.append(now)

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
            raise APIError(429, f"budget spent: {caller.name!r} has used ${acc.cost_usd:.6f} of its "
                           f"${budget:.6f} per {_per(caller.policy.period_seconds)}; it resets in {_period(wait)}",
                           type="insufficient_quota", code="budget_exceeded", headers={"Retry-After": str(wait)})

    # ---------------------------------------------------------------- records

    def charge(self, caller: Caller, tier: str, prompt_tokens: int, completion_tokens: int, cost: float) -> None:
        acc = self._account(caller)
        acc.prompt_tokens += prompt_tokens
        acc.completion_tokens += completion_tokens
        acc.cost_usd += cost
        t = acc.by_tier.setdefault(tier, {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0})
        t["requests"] += 1
        t["prompt_tokens"] += prompt_tokens
        t["completion_tokens"] += completion_tokens
        t["cost_usd"] += cost

    def count_request(self, caller: Caller, *, fallback: bool = False) -> None:
        acc = self._account(caller)
        acc.requests += 1
        acc.fallbacks += int(fallback)

    def record_hit(self, caller: Caller, saved: float) -> None:
        acc = self._account(caller)
        acc.requests += 1
        acc.cache_hits += 1
        acc.saved_usd += saved

    def usage(self, caller: Caller) -> dict:
        acc = self._account(caller)
        policy = caller.policy
        budget = policy.budget_usd
        return {
            "object": "usage",
            "key": caller.name,
            "period": {"start": int(acc.window_start), "seconds": policy.period_seconds,
                       "resets_at": int(acc.window_start + policy.period_seconds)},
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


def _per(seconds: int) -> str:
    return {60: "minute", 3600: "hour", 86400: "day", 604800: "week"}.get(seconds, f"{seconds} s")


def _period(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds} s"
