"""Billing: what a request costs its caller, at the prices of the tiers that produced it.

In: the caller, and either the fallback chain's ``Answer`` (its ``charges``: one (tier, prompt tokens,
completion tokens) per tier that produced text the client got) or a cache hit's stored usage. Out: the
usage ledger charged (spend, tokens and requests per tier; fallbacks counted), the cost and token
counters, and the cost in USD for the ``x-cost-usd`` header. A hit is charged nothing: the ledger and
``gateway_cost_saved_usd`` record what it would have cost at the routed tier's prices. Runs on the event
loop; the ledger is in-process, so nothing here waits.
"""

from __future__ import annotations

from collections.abc import Mapping

from gateway.accounting.usage import Caller, UsageLedger
from gateway.config.tiers import TiersSpec
from gateway.observability.metrics import GatewayMetrics
from gateway.pipeline.fallback import Answer


class Billing:
    def __init__(self, ledger: UsageLedger, spec: TiersSpec, metrics: GatewayMetrics):
        self.ledger, self.spec, self.metrics = ledger, spec, metrics

    def charge(self, caller: Caller, answer: Answer) -> float:
        """Charge each tier's part of an answer (also of one that failed: what the client got is paid
        for) and count the request; returns the total cost."""
        return self.charge_all(caller, [answer])

    def charge_all(self, caller: Caller, answers: list[Answer]) -> float:
        """``charge`` for the choices of one request (``n``, several prompts): counted once."""
        cost = 0.0
        for answer in answers:
            for name, p, c in answer.charges:
                part = self.spec.tier(name).cost(p, c)
                cost += part
                self.ledger.charge(caller, name, p, c, part)
                self.metrics.cost.labels(name).inc(part)
                self.metrics.prompt_tokens.labels(name).inc(p)
                self.metrics.prompt_lengths.labels(name).observe(p)
                self.metrics.generation_tokens.labels(name).inc(c)
        self.ledger.count_request(caller, fallback=any(a.fallbacks for a in answers))
        return cost

    def credit_hit(self, caller: Caller, tier: str, usage: Mapping[str, int]) -> dict[str, str]:
        """A cache hit on ``tier``'s entry: free, and what it saved is recorded. Returns the cost headers."""
        p, c = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        saved = self.spec.tier(tier).cost(p, c)
        self.ledger.record_hit(caller, saved)
        self.metrics.cost_saved.labels(tier).inc(saved)
        self.metrics.cache_tokens_saved.labels(tier).inc(c)
        return {"x-cost-usd": "0", "x-cost-saved-usd": f"{saved:.9f}"}
