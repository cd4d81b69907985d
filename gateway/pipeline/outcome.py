"""What one chat request came to, for the metrics: its tier, its HTTP status, its latency.

In: the request as it enters the handler (``Outcome`` is a context manager around it), the routed tier
once known, the response or the exception that ended it. Out: one ``gateway_requests_total{model,
status}`` per request however it ends, and time to first token / end-to-end latency by tier, split by
cache hit or miss. Runs on the event loop.

The status is the response's, an ``APIError``'s, 499 for a client that hung up before its answer was
sent in full (nginx's code: not the gateway's failure, so not a 500), or 500 for anything else.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

from aiohttp import web

from gateway import keys
from gateway.observability.metrics import GatewayMetrics
from runtime.serving.errors import APIError

R = TypeVar("R", bound=web.StreamResponse)


class Outcome:
    def __init__(self, metrics: GatewayMetrics, request: web.Request, clock: Callable[[], float] = time.perf_counter):
        self.metrics, self.request, self.clock = metrics, request, clock
        self.t0 = clock()  # when the request arrived: every latency here is measured from it
        self.tier = "unknown"  # the label until the router has decided
        self.status = 500  # until something better is known

    def __enter__(self) -> Outcome:
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if isinstance(exc, APIError):
            self.status = exc.status
        elif isinstance(exc, asyncio.CancelledError):  # the client closed the connection first, unless
            self.status = self.request.get(keys.ANSWERED, 499)  # its whole answer had been sent already
        self.metrics.requests.labels(self.tier, str(self.status)).inc()
        return False  # never swallows: the error middleware shapes the error

    def done(self, response: R) -> R:
        self.status = response.status
        return response

    def observe_hit(self, tier: str) -> None:
        """A cached answer's first token is its whole answer: one time for both."""
        elapsed = self.clock() - self.t0
        self.metrics.ttft.labels(tier, "hit").observe(elapsed)
        self.metrics.e2e.labels(tier, "hit").observe(elapsed)

    def observe_miss(self, tier: str, ttft: float | None) -> None:
        """``tier``: the one that served the answer (the routed one when none did)."""
        if ttft is not None:
            self.metrics.ttft.labels(tier, "miss").observe(ttft)
        self.metrics.e2e.labels(tier, "miss").observe(self.clock() - self.t0)
