"""Billing: what a request costs its caller, at the prices of the tiers that produced it.

In: the caller, and either the charges of an answer's runs (one (tier, prompt tokens, completion tokens)
per tier that produced text the client got: ``Summary.charges``) or a cache hit's saving. Out: the
usage ledger charged (spend, tokens and requests per tier; fallbacks counted), the cost and token
counters, and the cost in USD for the ``x-cost-usd`` header. A hit is charged nothing: the ledger and
``gateway_cost_saved_usd`` record what it would have cost at the routed tier's prices. Runs on the event
loop; the ledger is in-process, so nothing here waits.
"""

from __future__ import annotations

from collections.abc import Iterable

from gateway.accounting.usage import Caller, UsageLedger
from gateway.config.tiers import TiersSpec
from gateway.observability.metrics import GatewayMetrics


class Billing:
    def __init__(self, ledger: UsageLedger, spec: TiersSpec, metrics: GatewayMetrics):
        self.ledger, self.spec, self.metrics = ledger, spec, metrics

    def charge(self, caller: Caller, charges: Iterable[tuple[str, int, int]], *, fallback: bool) -> float:
        """Charge each tier's part of one request (its choices together; also of one that failed: what the
        client got is paid for) and count the request once (``fallback``: a tier was left on the way);
        returns the total cost."""
        cost = 0.0
        for name, p, c in charges:
            part = self.spec.tier(name).cost(p, c)
            cost += part
            self.ledger.charge(caller, name, p, c, part)
            self.metrics.cost.labels(name).inc(part)
            self.metrics.prompt_tokens.labels(name).inc(p)
            self.metrics.prompt_lengths.labels(name).observe(p)
            self.metrics.generation_tokens.labels(name).inc(c)
        self.ledger.count_request(caller, fallback=fallback)
        return cost

    def saving(self, tier: str, prompt_tokens: int, completion_tokens: int) -> float:
        """What an answer of ``tier`` would have cost (a cache hit's saving)."""
        return self.spec.tier(tier).cost(prompt_tokens, completion_tokens)

    def credit_hit(self, caller: Caller, tier: str, saved_usd: float, completion_tokens: int) -> None:
        """A cache hit on ``tier``'s entry: free, and what it saved (``saving``) is recorded."""
        self.ledger.record_hit(caller, saved_usd)
        self.metrics.cost_saved.labels(tier).inc(saved_usd)
        self.metrics.cache_tokens_saved.labels(tier).inc(completion_tokens)
